/**
 * A connection's schedule of ATS turns, one for every execution environment of every function (DynamoDB on AWS,
 * shared/mapping/rate-schedule.ts): the moment from which the ATS's budget is free.
 */
export interface RateSchedule {
  /**
   * Reserves `spanMs` of the schedule from `notBefore` at the earliest, and answers where the span starts. With
   * `latest`, a span that cannot start by then is not reserved: the answer is where it would have started.
   */
  reserve(connectionId: string, spanMs: number, notBefore: number, latest?: number): Promise<number>;
}

/** An ATS's rate limit: `limit` calls per `windowMs`. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/**
 * The share of the ATS's rate the schedule gives out: the rest absorbs a call sent a little late or early (a queue's
 * delay counts in whole seconds), so no window the ATS counts from its first call holds more than its limit.
 */
const RATE_SHARE = 0.95;

/** Between two calls at the share of the rate the schedule gives out. */
export function intervalMs(rate: RateLimit): number {
  return rate.windowMs / (rate.limit * RATE_SHARE);
}

/**
 * The schedule with what this environment last saw of each connection's: busy at least to there (it never moves
 * back). Moving it to a moment it is known busy past (a spent window's reset) would change nothing: no write.
 */
export function knownSchedule(schedule: RateSchedule): RateSchedule {
  const busyTo = new Map<string, number>();
  return {
    async reserve(connectionId, spanMs, notBefore, latest) {
      const known = busyTo.get(connectionId) ?? Number.NEGATIVE_INFINITY;
      if (spanMs <= 0 && notBefore <= known) return known;
      const start = await schedule.reserve(connectionId, spanMs, notBefore, latest);
      // A span refused for starting after `latest` left the schedule where it stood.
      busyTo.set(connectionId, Math.max(known, latest !== undefined && start > latest ? start : start + spanMs));
      return start;
    },
  };
}
