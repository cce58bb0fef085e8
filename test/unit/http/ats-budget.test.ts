import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { AtsHttpClient } from '../../../shared/ats/ats-http';
import { ATS_ERROR_CODES } from '../../../shared/ats/errors';
import { deadlineAfter } from '../../../shared/http';
import { stubFetch } from '../../helpers/stub-fetch';

/** A client on a fake clock whose sleeps move the clock: what it waited is what a real one would have waited. */
function pacedClient(budget: { limit: number; windowMs: number } | undefined) {
  let clock = 1_000_000;
  const sentAt: number[] = [];
  const waits: number[] = [];
  const stub = stubFetch(() => {
    sentAt.push(clock);
    return { status: 200, json: { ok: true } };
  });
  const client = new AtsHttpClient({
    baseUrl: 'https://ats.example.com',
    authorization: async () => 'Basic a2V5Og==',
    fetch: stub.fetch,
    now: () => clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock += ms;
    },
    budget,
  });
  return {
    client,
    sentAt,
    waits,
    advance: (ms: number) => {
      clock += ms;
    },
    now: () => clock,
  };
}

const read = (client: AtsHttpClient) => client.request({ method: 'GET', path: '/v1/opportunities' }, v.unknown());

describe("Class: AtsHttpClient, pacing to a connection's budget (an ATS that announces no window)", () => {
  it('sends no more than the budget in any window: the eleventh call of ten a second waits its turn', async () => {
    const paced = pacedClient({ limit: 10, windowMs: 1000 });
    for (let i = 0; i < 25; i++) await read(paced.client);
    expect(paced.sentAt).toHaveLength(25);
    for (let i = 10; i < paced.sentAt.length; i++)
      expect((paced.sentAt[i] as number) - (paced.sentAt[i - 10] as number)).toBeGreaterThanOrEqual(1000);
    expect(paced.waits.length).toBeGreaterThan(0);
    // Waits this short are sat out in the call: the worker is never told to put the message back.
    expect(paced.client.pacingWaitMs(paced.now())).toBe(0);
  });

  it('calls that fit the budget go at once, without a wait', async () => {
    const paced = pacedClient({ limit: 10, windowMs: 1000 });
    await Promise.all(Array.from({ length: 10 }, () => read(paced.client)));
    expect(paced.waits).toEqual([]);
    expect(new Set(paced.sentAt).size).toBe(1);
  });

  it('refuses, unsent and retryable, a call whose turn is further off than a worker sits out', async () => {
    const paced = pacedClient({ limit: 2, windowMs: 30_000 });
    await read(paced.client);
    await read(paced.client);
    paced.advance(1000);
    expect(paced.client.pacingWaitMs(paced.now())).toBe(29_000);
    // Its turn: the window after this one, back a second early (the worker sits out the rest), spread over 1 s.
    await expect(read(paced.client)).rejects.toMatchObject({
      code: ATS_ERROR_CODES.rateLimited,
      retryAfterMs: 28_000,
      spreadMs: 1_000,
    });
    expect(paced.sentAt).toHaveLength(2);
    paced.advance(29_000);
    await read(paced.client);
    expect(paced.sentAt).toHaveLength(3);
  });

  it('without a budget, nothing is paced', async () => {
    const paced = pacedClient(undefined);
    for (let i = 0; i < 50; i++) await read(paced.client);
    expect(paced.waits).toEqual([]);
    expect(paced.client.pacingWaitMs(paced.now())).toBe(0);
  });
});

describe("Class: AtsHttpClient, admitting messages to a connection's budget", () => {
  it('admits the messages the budget carries now and gives the others turns in the windows after', async () => {
    // Ten calls a second; a message is expected to cost 1.5 calls until 20 have shown what they cost. Fifty
    // messages at the same instant (the clock stands still): those that sit out the reset find it taken.
    const sentAt: number[] = [];
    const client = new AtsHttpClient({
      baseUrl: 'https://ats.example.com',
      authorization: async () => 'Basic a2V5Og==',
      fetch: stubFetch(() => {
        sentAt.push(1);
        return { status: 200, json: {} };
      }).fetch,
      now: () => 1_000_000,
      sleep: async () => undefined,
      budget: { limit: 10, windowMs: 1000 },
    });
    const turns = await Promise.all(Array.from({ length: 50 }, () => client.admitMessage()));
    expect(turns.filter((turn) => turn === undefined)).toHaveLength(7);
    // Sent back in slots of 5 s (a queue's delay counts in seconds): 5 windows of 10 calls carry 33 messages.
    const sentBack = turns.flatMap((turn) => (turn ? [turn] : []));
    expect(sentBack.filter((turn) => turn.waitMs === 1_000 && turn.spreadMs === 5_000)).toHaveLength(33);
    expect(sentBack.filter((turn) => turn.waitMs === 6_000 && turn.spreadMs === 5_000)).toHaveLength(10);
    expect(sentAt).toEqual([]);
  });

  it('refuses, unsent, a call whose budget wait the worker deadline would cut short', async () => {
    const paced = pacedClient({ limit: 1, windowMs: 1000 });
    await read(paced.client);
    const signal = deadlineAfter(500, paced.now);
    await expect(
      paced.client.request({ method: 'GET', path: '/v1/opportunities', signal }, v.unknown()),
    ).rejects.toMatchObject({ code: ATS_ERROR_CODES.rateLimited });
    expect(paced.sentAt).toHaveLength(1);
    expect(paced.waits).toEqual([]);
  });
});

describe("Class: AtsHttpClient, sharing a connection's budget with the other workers", () => {
  it('halves its share after a 429 (others spend the same account) and wins it back window by window', async () => {
    let clock = 1_000_000;
    const sentAt: number[] = [];
    let refusedAt: number | undefined;
    const client = new AtsHttpClient({
      baseUrl: 'https://ats.example.com',
      authorization: async () => 'Basic a2V5Og==',
      fetch: stubFetch(() => {
        sentAt.push(clock);
        // The account's window is spent by another worker once, on the fifth call.
        if (sentAt.length === 5) {
          refusedAt = clock;
          return { status: 429, json: { code: 'TooManyRequests' } };
        }
        return { status: 200, json: {} };
      }).fetch,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      budget: { limit: 10, windowMs: 1000 },
    });
    for (let i = 0; i < 80; i++) await read(client);
    const after = refusedAt as number;
    // In the window after the 429, half the budget at most (the refused call's retry among them).
    expect(sentAt.filter((at) => at > after && at < after + 1000).length).toBeLessThanOrEqual(5);
    // Back to the whole budget: among the last 30 calls, ten went at one instant (a share of half sends five).
    const last = sentAt.slice(-30);
    expect(last.some((at, i) => i + 9 < last.length && last[i + 9] === at)).toBe(true);
    expect(sentAt.slice(5, 40).some((at, i, calls) => i + 9 < calls.length && calls[i + 9] === at)).toBe(false);
  });
});
