import { describe, expect, it } from 'vitest';
import { FixedWindowLimiter, TokenBucketLimiter } from '../../../infra/local/sandbox/ats/limits';

// The sandboxes count as the vendors do: per key, in windows fixed on the clock where the vendor's are
// (Greenhouse's 30-second windows, Workable's intervals), else from a key's first request.
describe('Sandbox rate windows', () => {
  it('fixes aligned windows on the clock: a window begun late still ends at the boundary', () => {
    const limiter = new FixedWindowLimiter(2, 30_000, true);
    const t = 1_800_000_000_000 + 25_000; // 25 s into a 30-s window
    expect(limiter.take('client', t)).toEqual({ allowed: true, remaining: 1, resetMs: 5_000 });
    expect(limiter.take('client', t + 1_000).allowed).toBe(true);
    expect(limiter.take('client', t + 2_000)).toEqual({ allowed: false, remaining: 0, resetMs: 3_000 });
    // The next window opens at the boundary, 5 s after the first request, not 30 s after it.
    expect(limiter.take('client', t + 5_000)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('starts an unaligned window at the key’s first request, and counts each key apart', () => {
    const limiter = new FixedWindowLimiter(1, 10_000);
    const t = 1_800_000_000_000 + 7_000;
    expect(limiter.take('a', t).allowed).toBe(true);
    expect(limiter.take('a', t + 9_000)).toMatchObject({ allowed: false, resetMs: 1_000 });
    expect(limiter.take('b', t + 9_000).allowed).toBe(true);
    expect(limiter.take('a', t + 10_000).allowed).toBe(true);
  });

  it('lets a full token bucket burst, then refills at the sustained rate (Lever: 10 a second, bursts to 20)', () => {
    const limiter = new TokenBucketLimiter(10, 1_000, 20);
    const t = 1_800_000_000_000;
    const burst = Array.from({ length: 21 }, () => limiter.take('key', t).allowed);
    expect(burst.filter(Boolean)).toHaveLength(20);
    expect(limiter.take('key', t)).toMatchObject({ allowed: false, resetMs: 100 });
    // A tenth of a second refills one request; a second, ten; never more than the burst.
    expect(limiter.take('key', t + 100).allowed).toBe(true);
    expect(limiter.take('key', t + 100).allowed).toBe(false);
    const second = Array.from({ length: 12 }, () => limiter.take('key', t + 1_100).allowed);
    expect(second.filter(Boolean)).toHaveLength(10);
    const rested = Array.from({ length: 25 }, () => limiter.take('key', t + 60_000).allowed);
    expect(rested.filter(Boolean)).toHaveLength(20);
    expect(limiter.take('other', t + 1_100).allowed).toBe(true);
  });
});
