import type { RateSchedule } from '../../../shared/pacing';

/** A schedule in memory, as the DynamoDB one behaves: a busy one pushed on, an idle one started again. */
export function memorySchedule() {
  let nextFreeAt = Number.NEGATIVE_INFINITY;
  const reservations: { spanMs: number; notBefore: number; latest: number | undefined; start: number }[] = [];
  const schedule: RateSchedule = {
    reserve: async (_connectionId, spanMs, notBefore, latest) => {
      const start = Math.max(nextFreeAt, notBefore);
      if (latest !== undefined && start > latest) return start;
      nextFreeAt = start + spanMs;
      reservations.push({ spanMs, notBefore, latest, start });
      return start;
    },
  };
  return { schedule, reservations, nextFreeAt: () => nextFreeAt };
}

/** A clock the test moves: `sleep` moves it and resolves at once. */
export function fakeClock(start = 1_000_000) {
  const clock = { now: start, slept: [] as number[] };
  return {
    clock,
    now: () => clock.now,
    sleep: async (ms: number) => {
      clock.slept.push(ms);
      clock.now += ms;
    },
  };
}
