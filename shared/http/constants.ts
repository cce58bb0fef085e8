/** Defaults of the outbound HTTP policy; each can be overridden per client through its options. */
export const HTTP_DEFAULTS = {
  /** Every call is abandoned after this long (AbortSignal.timeout). */
  timeoutMs: 10_000,
  /** Attempts in all, the first one included. Never open-ended. */
  maxAttempts: 5,
  /** Backoff before attempt n (n ≥ 2) is random in [0, min(maxDelayMs, baseDelayMs × 2^(n-2))] ("full jitter"). */
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  /**
   * A Retry-After longer than this is not waited out in-process: the error is raised with the delay so the
   * caller (an SQS worker) can put the message back for later instead of holding a Lambda idle.
   */
  maxRetryAfterMs: 30_000,
} as const;

export const RETRY_AFTER_HEADER = 'retry-after';
