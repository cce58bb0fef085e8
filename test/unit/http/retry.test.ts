import { describe, expect, it, vi } from 'vitest';
import { computeDelayMs, parseRetryAfter, sleep, withRetry, type RetryPolicy } from '../../../shared/http';

const policy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 };
const retryable = (retryAfterMs?: number) => Object.assign(new Error('try again'), { retryable: true, retryAfterMs });

describe('Function: withRetry', () => {
  it('returns the first success and waits between failures', async () => {
    const waits: number[] = [];
    const operation = vi
      .fn()
      .mockRejectedValueOnce(retryable())
      .mockRejectedValueOnce(retryable(1500))
      .mockResolvedValue('ok');
    const result = await withRetry(operation, policy, { sleep: async (ms) => void waits.push(ms), random: () => 0.5 });
    expect(result).toBe('ok');
    expect(operation).toHaveBeenCalledTimes(3);
    expect(waits).toEqual([50, 1500]);
  });

  it('stops at maxAttempts and throws the last error', async () => {
    const operation = vi.fn().mockRejectedValue(retryable());
    await expect(withRetry(operation, policy, { sleep: async () => undefined })).rejects.toThrow('try again');
    expect(operation).toHaveBeenCalledTimes(4);
  });

  it('does not retry an error that is not retryable', async () => {
    const operation = vi.fn().mockRejectedValue(Object.assign(new Error('bad input'), { retryable: false }));
    await expect(withRetry(operation, policy, { sleep: async () => undefined })).rejects.toThrow('bad input');
    expect(operation).toHaveBeenCalledTimes(1);
  });

  it('hands a Retry-After longer than the policy allows back to the caller instead of sleeping', async () => {
    const operation = vi.fn().mockRejectedValue(retryable(60_000));
    const wait = vi.fn();
    await expect(withRetry(operation, policy, { sleep: wait })).rejects.toMatchObject({ retryAfterMs: 60_000 });
    expect(wait).not.toHaveBeenCalled();
  });

  it('reports each retry through onRetry', async () => {
    const onRetry = vi.fn();
    const operation = vi.fn().mockRejectedValueOnce(retryable(10)).mockResolvedValue(1);
    await withRetry(operation, policy, { sleep: async () => undefined, onRetry });
    expect(onRetry).toHaveBeenCalledWith(expect.objectContaining({ attempt: 1, delayMs: 10 }));
  });
});

describe('Function: computeDelayMs', () => {
  it.each([
    [1, 1, 100],
    [2, 1, 200],
    [3, 1, 400],
    [10, 1, 1000],
    [3, 0, 0],
  ])('attempt %i with random %d waits at most %i ms', (attempt, random, expected) => {
    expect(computeDelayMs(attempt, { retryable: true }, policy, () => random)).toBe(expected);
  });
});

describe('Function: parseRetryAfter', () => {
  it.each([
    ['3', 3000],
    ['0', 0],
    ['Sat, 21 Nov 2026 12:00:10 GMT', 10_000],
    ['soon', undefined],
    ['', undefined],
  ])('reads %j as %j ms', (value, expected) => {
    const headers = new Headers(value ? { 'retry-after': value } : {});
    expect(parseRetryAfter(headers, Date.parse('Sat, 21 Nov 2026 12:00:00 GMT'))).toBe(expected);
  });
});

describe('Function: sleep', () => {
  it('rejects when the signal aborts', async () => {
    const controller = new AbortController();
    const pending = sleep(10_000, controller.signal);
    controller.abort(new Error('deadline'));
    await expect(pending).rejects.toThrow('deadline');
    await expect(sleep(5, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
    await expect(sleep(1)).resolves.toBeUndefined();
  });
});

describe('Function: withRetry under a deadline', () => {
  it('reports the error it was waiting out when the caller aborts the wait', async () => {
    const limited = Object.assign(new Error('rate limited'), {
      retryable: true,
      retryAfterMs: 5000,
      code: 'ats-rate-limited',
    });
    const operation = vi.fn().mockRejectedValue(limited);
    await expect(
      withRetry(operation, { ...policy, maxRetryAfterMs: 10_000 }, { signal: AbortSignal.timeout(20) }),
    ).rejects.toMatchObject({ code: 'ats-rate-limited' });
    expect(operation).toHaveBeenCalledTimes(1);
  });
});
