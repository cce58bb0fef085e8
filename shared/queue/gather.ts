/** SendMessage takes a DelaySeconds of 900 at most (Amazon SQS API Reference, SendMessage). */
export const SQS_MAX_DELAY_SECONDS = 900;

/**
 * The delay that keeps a message out of sight until the next multiple of `periodSeconds` on the clock (rounded down
 * to SQS's whole seconds), so messages sent in the same period become visible together and the event source reads
 * them together, up to a batch at a time. 0 with no period.
 */
export function gatherDelaySeconds(periodSeconds: number, now: number = Date.now()): number {
  if (!Number.isFinite(periodSeconds) || periodSeconds <= 0) return 0;
  const periodMs = Math.min(SQS_MAX_DELAY_SECONDS, periodSeconds) * 1000;
  const releaseAt = Math.ceil(now / periodMs) * periodMs;
  return Math.floor((releaseAt - now) / 1000);
}
