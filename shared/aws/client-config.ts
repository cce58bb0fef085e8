/**
 * How every AWS SDK client of the functions is configured, on purpose rather than by default. The SDK's default
 * is three attempts with no request timeout at all: a call could hang until the function's own deadline. Here a
 * connection that does not open in 1 s, or an answer that does not come in 5 s, throws (and is retried up to the
 * attempts given), well inside the 60-s worker and the 10-s webhook functions. The request timeout only warns
 * unless `throwOnRequestTimeout` is set (`@smithy/node-http-handler` 4.x): without it, a call to a stalled endpoint
 * held a whole invocation until the function's timeout, and its batch until the queue's visibility timeout.
 * Connection reuse is the SDK v3 default; `AWS_NODEJS_CONNECTION_REUSE_ENABLED` was SDK v2's switch and means
 * nothing here.
 */
export const AWS_CLIENT_CONFIG = {
  maxAttempts: 3,
  requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
} as const;

/**
 * SES makes one attempt: an SDK retry after a 5xx or a reset could send the invitation a second time, behind
 * the step that recorded the e-mail as started. A lost answer is recorded as uncertain instead, never resent; so
 * its answer is waited for longer (15 s, still inside the function's deadline, which aborts the call first): a late
 * answer is an invitation known to be sent, a timed-out one an e-mail the candidate may never get.
 */
export const SES_CLIENT_CONFIG = {
  ...AWS_CLIENT_CONFIG,
  maxAttempts: 1,
  requestHandler: { ...AWS_CLIENT_CONFIG.requestHandler, requestTimeout: 15_000 },
} as const;
