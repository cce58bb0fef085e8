import { describe, expect, it } from 'vitest';
import { CallPacer } from '../../../shared/pacing';
import { workableProfile } from '../../../shared/ats/workable/profile';
import { fakeClock, memorySchedule } from './fake-schedule';

/** Workable's 10 per 10 s: an interval of 10,000 / 9.5 ms. */
const RATE = { limit: 10, windowMs: 10_000 };
const INTERVAL = 10_000 / 9.5;

function gateOn() {
  const memory = memorySchedule();
  const time = fakeClock();
  const gate = new CallPacer({
    connectionId: 'acme',
    rate: RATE,
    rateHeaders: workableProfile.rateHeaders,
    schedule: memory.schedule,
    now: time.now,
    sleep: time.sleep,
  });
  return { gate, memory, time };
}

const announced = (remaining: number, resetAt: number) =>
  new Headers({
    [workableProfile.rateHeaders.limit]: '10',
    [workableProfile.rateHeaders.remaining]: String(remaining),
    [workableProfile.rateHeaders.reset]: String(resetAt / 1000),
  });

describe('Class: CallPacer (the call gate)', () => {
  it("sends an environment's calls an interval apart", async () => {
    const { gate, time } = gateOn();
    const start = time.clock.now;
    for (let i = 0; i < 3; i++) await gate.beforeCall('GET /x');
    expect(time.clock.now).toBeCloseTo(start + 2 * INTERVAL);
  });

  it('keeps a call back from a window announced spent, and moves the shared schedule past its reset', async () => {
    const { gate, memory, time } = gateOn();
    const resetAt = time.clock.now + 4_000;
    gate.afterAnswer(200, announced(0, resetAt));
    const kept = await gate.beforeCall('POST /comments').catch((error: unknown) => error);
    expect(kept).toMatchObject({ code: 'ats-rate-limited', paced: true, retryAfterMs: 4_000 });
    expect(gate.waitMs()).toBe(4_000);
    await Promise.resolve();
    expect(memory.nextFreeAt()).toBe(resetAt);
  });

  it("waits for a reset up to an interval past the call's slot; a later one keeps the call back", async () => {
    const { gate, time } = gateOn();
    const resetAt = time.clock.now + 400;
    gate.afterAnswer(200, announced(0, resetAt));
    await gate.beforeCall('POST /comments');
    expect(time.clock.now).toBe(resetAt);
    // Its slot is an interval on; a reset most of an interval past it is waited for.
    const next = time.clock.now + INTERVAL + 0.9 * INTERVAL;
    gate.afterAnswer(200, announced(0, next));
    await gate.beforeCall('POST /comments');
    expect(time.clock.now).toBe(next);
    // More than an interval past it: not sent, retryable.
    gate.afterAnswer(200, announced(0, time.clock.now + INTERVAL + INTERVAL + 100));
    await expect(gate.beforeCall('POST /comments')).rejects.toMatchObject({ code: 'ats-rate-limited' });
  });

  it("counts a spent window's reset from the call's slot, an interval after the last call", async () => {
    const { gate, time } = gateOn();
    await gate.beforeCall('POST /comments');
    // The tenth call of the window spent it; its reset, in whole seconds, falls 300 ms after the next call's slot.
    const resetAt = time.clock.now + INTERVAL + 300;
    gate.afterAnswer(201, announced(0, resetAt));
    await gate.beforeCall('POST /comments');
    expect(time.clock.now).toBe(resetAt);
  });

  it("takes a 429's wait from Retry-After, else the announced reset, else a whole window", async () => {
    const { gate, memory, time } = gateOn();
    gate.afterAnswer(429, new Headers({ 'retry-after': '7' }));
    expect(gate.waitMs()).toBe(7_000);
    await Promise.resolve();
    expect(memory.nextFreeAt()).toBe(time.clock.now + 7_000);
    time.clock.now += 8_000;
    gate.afterAnswer(429, announced(0, time.clock.now + 3_000));
    expect(gate.waitMs()).toBe(3_000);
    time.clock.now += 4_000;
    gate.afterAnswer(429, new Headers());
    expect(gate.waitMs()).toBe(10_000);
  });

  it('counts its own calls down in the window the ATS announced', async () => {
    const { gate, time } = gateOn();
    gate.afterAnswer(200, announced(2, time.clock.now + 9_000));
    await gate.beforeCall('a');
    await gate.beforeCall('b');
    expect(gate.waitMs()).toBeGreaterThan(0);
  });
});
