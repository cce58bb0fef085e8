import { isRetryable } from '../errors';
import { timeLeftMs } from './deadline';
import { HTTP_DEFAULTS, RETRY_AFTER_HEADER } from './constants';

/** What the retry loop needs to know of an error: the typed errors of every API client carry these. */
export interface RetryableFailure {
  readonly retryable: boolean;
  /** The server's Retry-After, in milliseconds, when it gave one. */
  readonly retryAfterMs?: number | undefined;
}

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

export interface RetryHooks {
  /** Waits; tests pass a recorder. Must reject when the signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** Called before each wait, so callers can log a progress line or count retries. */
  onRetry?: (event: { attempt: number; delayMs: number; error: unknown }) => void;
  signal?: AbortSignal;
  /** Narrows which retryable errors are retried here, e.g. a write retried only when the server refused it (429). */
  shouldRetry?: (error: RetryableFailure) => boolean;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: HTTP_DEFAULTS.maxAttempts,
  baseDelayMs: HTTP_DEFAULTS.baseDelayMs,
  maxDelayMs: HTTP_DEFAULTS.maxDelayMs,
  maxRetryAfterMs: HTTP_DEFAULTS.maxRetryAfterMs,
};

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function isRetryableFailure(error: unknown): error is RetryableFailure {
  return isRetryable(error);
}

/**
 * Parses Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. Returns milliseconds, or undefined
 * when the header is absent or unreadable.
 */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const value = headers.get(RETRY_AFTER_HEADER)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Full-jitter exponential backoff; the server's Retry-After, when given, is honoured exactly. */
export function computeDelayMs(
  attempt: number,
  error: RetryableFailure,
  policy: RetryPolicy,
  random: () => number,
): number {
  if (error.retryAfterMs !== undefined) return error.retryAfterMs;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * Runs `operation` until it succeeds, fails with a non-retryable error, or the attempts run out; the last
 * error is thrown as it is. A Retry-After above `maxRetryAfterMs` is not slept through: the error goes up
 * with its delay so the caller can defer the work.
 */
export async function withRetry<T>(
  operation: (attempt: number) => Promise<T>,
  policy: RetryPolicy = defaultRetryPolicy,
  hooks: RetryHooks = {},
): Promise<T> {
  const wait = hooks.sleep ?? sleep;
  const random = hooks.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (!isRetryableFailure(error) || attempt >= policy.maxAttempts) throw error;
      if (hooks.shouldRetry && !hooks.shouldRetry(error)) throw error;
      if (error.retryAfterMs !== undefined && error.retryAfterMs > policy.maxRetryAfterMs) throw error;
      const delayMs = computeDelayMs(attempt, error, policy, random);
      // A wait the caller's deadline would cut short is not begun: the error goes up, with its delay, at once.
      if (delayMs >= timeLeftMs(hooks.signal)) throw error;
      hooks.onRetry?.({ attempt, delayMs, error });
      // A wait cut short by the caller's deadline reports what it was waiting out (e.g. rate-limited), not the abort.
      await wait(delayMs, hooks.signal).catch(() => {
        throw error;
      });
    }
  }
}
