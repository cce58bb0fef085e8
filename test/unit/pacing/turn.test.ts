import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Turns } from '../../../shared/pacing';
import { deadlineAfter } from '../../../shared/http/deadline';
import { greenhouseProfile } from '../../../shared/ats/greenhouse/profile';
import { fakeClock, memorySchedule } from './fake-schedule';

/** Greenhouse's 50 per 10 s at the schedule's 95 %: an interval of 10,000 / 47.5 ms. */
const RATE = { limit: 50, windowMs: 10_000 };
const INTERVAL = 10_000 / 47.5;

function turnsOn(memory = memorySchedule(), time = fakeClock()) {
  const turns = new Turns({
    connectionId: 'acme',
    rate: RATE,
    schedule: memory.schedule,
    stepCalls: greenhouseProfile.stepCalls,
    now: time.now,
    sleep: time.sleep,
  });
  return { turns, memory, time };
}

describe('Class: Turns (each message books what its step declares)', () => {
  it('books the calls its step declares and runs at once on a free schedule', async () => {
    const { turns, memory, time } = turnsOn();
    await turns.take('writeBackMove', undefined);
    expect(memory.reservations).toEqual([
      {
        spanMs: greenhouseProfile.stepCalls.writeBackMove * INTERVAL,
        notBefore: time.clock.now,
        latest: undefined,
        start: time.clock.now,
      },
    ]);
    expect(time.clock.slept).toEqual([]);
  });

  it('waits for a turn within 4 s; sends the message back carrying a later one, on the return grid', async () => {
    const { turns, memory, time } = turnsOn();
    const start = time.clock.now;
    // 3.5 s of the schedule booked: the next turn is waited for.
    await memory.schedule.reserve('acme', 3_500, start);
    await turns.take('invitation', undefined);
    expect(time.clock.slept).toEqual([3_500]);
    // 30 s booked ahead: back to the queue, the turn with it.
    await memory.schedule.reserve('acme', 30_000, time.clock.now);
    const back = await turns.take('writeBack', undefined).catch((error: unknown) => error);
    const turnAt = start + 3_500 + INTERVAL + 30_000;
    expect(back).toMatchObject({
      code: 'ats-rate-limited',
      paced: true,
      turnAt,
      turnCalls: greenhouseProfile.stepCalls.writeBack,
      turnKind: 'writeBack',
    });
    // Back at the grid's last 5-s moment 2 s or more before its turn, with the others whose turns fall in that step.
    const back5s = Math.floor((turnAt - 2_000) / 5_000) * 5_000;
    expect((back as { retryAfterMs: number }).retryAfterMs).toBe(Math.ceil(back5s - time.clock.now));
  });

  it('uses the turn a message carries back without booking again, and sends it back again when early', async () => {
    const { turns, memory, time } = turnsOn();
    const held = { at: time.clock.now + 10_000, calls: 4 };
    const early = await turns.take('writeBackMove', held).catch((error: unknown) => error);
    expect(early).toMatchObject({ turnAt: held.at, turnCalls: 4 });
    // Back on the grid: up to a step and 2 s early, it waits in the worker.
    time.clock.now = held.at - 8_000;
    await turns.take('writeBackMove', held);
    expect(time.clock.now).toBe(held.at);
    // Late: it runs at once.
    await turns.take('writeBackMove', { at: time.clock.now - 5_000, calls: 4 });
    expect(memory.reservations).toEqual([]);
  });

  it('waits for a near turn only where its calls fit after it; else goes back to come 2 s before it', async () => {
    const { turns, memory, time } = turnsOn();
    await memory.schedule.reserve('acme', 3_000, time.clock.now);
    const calls = greenhouseProfile.stepCalls.writeBackMove;
    // 3 s to its turn, then its calls: with less time left, it goes back, to come 2 s before its turn.
    const short = deadlineAfter(Math.floor(3_000 + calls * INTERVAL) - 1, time.now);
    const back = await turns.take('writeBackMove', undefined, short).catch((error: unknown) => error);
    const turnAt = time.clock.now + 3_000;
    expect(back).toMatchObject({ code: 'ats-rate-limited', turnAt, turnCalls: calls, retryAfterMs: 1_000 });
    expect(time.clock.slept).toEqual([]);
    // Back with its turn and the time for its calls, it waits for it and runs.
    await turns.take(
      'writeBackMove',
      { at: turnAt, calls },
      deadlineAfter(Math.ceil(3_000 + calls * INTERVAL) + 1, time.now),
    );
    expect(time.clock.slept).toEqual([3_000]);
    expect(memory.reservations).toHaveLength(2);
  });

  it('says what its message says before it waits, in the worker or in the queue; not for a turn now', async () => {
    const { turns, memory, time } = turnsOn();
    const said: number[] = [];
    const beforeWait = async () => {
      said.push(time.clock.now);
    };
    await turns.take('writeBack', undefined, undefined, beforeWait);
    expect(said).toEqual([]);
    // A near turn: said before the wait.
    await memory.schedule.reserve('acme', 3_000, time.clock.now);
    const start = time.clock.now;
    await turns.take('writeBack', undefined, undefined, beforeWait);
    expect(said).toEqual([start]);
    expect(time.clock.now).toBeGreaterThan(start);
    // A far one: said before it goes back.
    await memory.schedule.reserve('acme', 30_000, time.clock.now);
    const back = await turns.take('writeBack', undefined, undefined, beforeWait).catch((error: unknown) => error);
    expect(back).toMatchObject({ code: 'ats-rate-limited', paced: true });
    expect(said).toHaveLength(2);
  });

  it('books the messages that ask in the same moment with one write, each its own span', async () => {
    const { turns, memory, time } = turnsOn();
    const start = time.clock.now;
    await Promise.all([turns.take('invitation', undefined), turns.take('writeBack', undefined)]);
    expect(memory.reservations).toHaveLength(1);
    expect(memory.reservations[0]?.spanMs).toBeCloseTo(2 * INTERVAL);
    expect(memory.nextFreeAt()).toBeCloseTo(start + 2 * INTERVAL);
  });

  it("gives a sweep's page a near turn or none: a busy schedule is left as it is", async () => {
    const { turns, memory, time } = turnsOn();
    expect(await turns.takeNear('sweepPage')).toBe(true);
    const after = memory.nextFreeAt();
    expect(after).toBeCloseTo(time.clock.now + greenhouseProfile.stepCalls.sweepPage * INTERVAL);
    await memory.schedule.reserve('acme', 60_000, time.clock.now);
    const busy = memory.nextFreeAt();
    expect(await turns.takeNear('sweepPage')).toBe(false);
    expect(memory.nextFreeAt()).toBe(busy);
  });

  it('never gives two messages overlapping turns, whatever they book and when', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ step: fc.constantFrom('invitation', 'writeBack', 'writeBackMove', 'exit'), gap: fc.nat(5_000) }),
          {
            maxLength: 40,
          },
        ),
        async (messages) => {
          const { turns, memory, time } = turnsOn();
          for (const message of messages) {
            time.clock.now += message.gap;
            await turns.take(message.step as 'invitation', undefined).catch(() => undefined);
          }
          const spans = memory.reservations.map((r) => [r.start, r.start + r.spanMs] as const);
          for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1] - 1e-6);
        },
      ),
      { numRuns: 50 },
    );
  });
});
