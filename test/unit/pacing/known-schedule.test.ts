import { describe, expect, it } from 'vitest';
import { knownSchedule } from '../../../shared/pacing';
import { memorySchedule } from './fake-schedule';

describe('Function: knownSchedule', () => {
  it('moves a schedule to a reset it is known busy past with no write, and one beyond it with a write', async () => {
    const memory = memorySchedule();
    const schedule = knownSchedule(memory.schedule);
    expect(await schedule.reserve('acme', 5_000, 1_000)).toBe(1_000);
    // Busy to 6,000 by this environment's own booking: a spent window's reset before then changes nothing.
    expect(await schedule.reserve('acme', 0, 4_000)).toBe(6_000);
    expect(memory.reservations).toHaveLength(1);
    expect(await schedule.reserve('acme', 0, 7_000)).toBe(7_000);
    expect(memory.reservations).toHaveLength(2);
    expect(memory.nextFreeAt()).toBe(7_000);
    // What it knows of one connection's schedule says nothing of another's (the fake keeps one for all).
    await schedule.reserve('globex', 0, 4_000);
    expect(memory.reservations).toHaveLength(3);
  });

  it('knows a span refused for starting after its latest moment left the schedule where it stood', async () => {
    const memory = memorySchedule();
    const schedule = knownSchedule(memory.schedule);
    await schedule.reserve('acme', 5_000, 1_000);
    expect(await schedule.reserve('acme', 2_000, 2_000, 3_000)).toBe(6_000);
    expect(await schedule.reserve('acme', 0, 6_500)).toBe(6_500);
    expect(memory.reservations).toHaveLength(2);
  });

  it("holds with one copy per environment: what one does not know of another's booking, it writes", async () => {
    const memory = memorySchedule();
    const first = knownSchedule(memory.schedule);
    const second = knownSchedule(memory.schedule);
    await first.reserve('acme', 5_000, 1_000);
    // The second environment never saw the first's booking: its move to a reset inside it is written (a no-op there).
    expect(await second.reserve('acme', 0, 4_000)).toBe(6_000);
    expect(memory.reservations).toHaveLength(2);
    // It has learnt where the schedule stood, and the shared schedule never moved back under either.
    expect(await second.reserve('acme', 0, 5_500)).toBe(6_000);
    expect(memory.reservations).toHaveLength(2);
    expect(memory.nextFreeAt()).toBe(6_000);
  });
});
