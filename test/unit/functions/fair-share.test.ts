import { describe, expect, it } from 'vitest';
import { forEachFairly, SEND_FOUND_MS, sendingFound } from '../../../functions/reconciler/fair-share';
import { withDeadline } from '../../../shared/aws/deadline';
import { currentDeadline } from '../../../shared/aws/deadline';

const waitForAbort = (signal: AbortSignal) =>
  new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

describe('Function: forEachFairly (the reconciler’s connections in one run)', () => {
  it('starts the round where the random pick says, so no connection is always last', async () => {
    const items = ['a', 'b', 'c', 'd'];
    const firsts = new Set<string>();
    for (const pick of [0, 0.3, 0.6, 0.99]) {
      const { ran } = await forEachFairly(items, { remainingMs: () => 10_000, random: () => pick }, async () => {});
      expect([...ran].sort()).toEqual(items);
      firsts.add(ran[0] as string);
    }
    expect(firsts.size).toBe(4);
  });

  it('cuts a connection that overruns at its share of the time left; the others still run', async () => {
    const endsAt = Date.now() + 600;
    const seen: { item: string; aborted: boolean; deadline: boolean }[] = [];
    const result = await forEachFairly(
      ['slow', 'b', 'c'],
      { remainingMs: () => endsAt - Date.now(), random: () => 0 },
      async (item, signal) => {
        // The AWS SDK calls of the work run under the same signal (shared/aws/deadline.ts).
        const deadline = currentDeadline() === signal;
        if (item === 'slow') await waitForAbort(signal);
        seen.push({ item, aborted: signal.aborted, deadline });
      },
    );
    expect(seen).toEqual([
      { item: 'slow', aborted: true, deadline: true },
      { item: 'b', aborted: false, deadline: true },
      { item: 'c', aborted: false, deadline: true },
    ]);
    expect(result.notStarted).toEqual([]);
  });

  it('names the connections it had no time left for', async () => {
    let left = 1_000;
    const result = await forEachFairly(['a', 'b', 'c'], { remainingMs: () => left, random: () => 0 }, async () => {
      left = 0;
    });
    expect(result).toEqual({ ran: ['a'], notStarted: ['b', 'c'] });
  });

  it('runs up to `concurrency` at once, in order, and leaves the tail not started when the time is spent', async () => {
    let running = 0;
    let most = 0;
    let left = 1_000;
    const result = await forEachFairly(
      ['a', 'b', 'c', 'd', 'e', 'f'],
      { remainingMs: () => left, random: () => 0, concurrency: 2 },
      async (item) => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        if (item === 'c') left = 0;
      },
    );
    expect(most).toBe(2);
    expect(result.ran).toEqual(['a', 'b', 'c', 'd']);
    expect(result.notStarted).toEqual(['e', 'f']);
  });

  it("sends what a spent share found under a deadline of its own, a few seconds, not the share's", async () => {
    const spent = AbortSignal.abort();
    const seen = await withDeadline(spent, () =>
      sendingFound(async () => {
        const own = currentDeadline();
        await new Promise((resolve) => setTimeout(resolve, 20));
        return own;
      }),
    );
    expect(seen).toBeDefined();
    expect(seen).not.toBe(spent);
    expect(seen?.aborted).toBe(false);
    expect(SEND_FOUND_MS).toBeLessThanOrEqual(5_000);
  });

  it("keeps the share's own time where it has more than the least", async () => {
    const share = new AbortController();
    const seen = await sendingFound(async () => {
      const own = currentDeadline();
      await new Promise((resolve) => setTimeout(resolve, SEND_FOUND_MS + 200));
      return own?.aborted;
    }, share.signal);
    // The least has passed, but the share is not spent: not aborted.
    expect(seen).toBe(false);
    share.abort();
  }, 10_000);
});
