import { describe, expect, it } from 'vitest';
import { FixedWindowLimiter } from '../../../infra/local/sandbox/ats/signed-webhooks';

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
});
