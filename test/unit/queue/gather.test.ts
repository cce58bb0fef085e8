import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gatherDelaySeconds } from '../../../shared/queue';

describe('gatherDelaySeconds', () => {
  it('keeps a message out of sight until the next multiple of the period, never past it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 0, max: 4_000_000_000_000 }), (period, now) => {
        const delay = gatherDelaySeconds(period, now);
        const periodMs = period * 1000;
        const releaseAt = Math.ceil(now / periodMs) * periodMs;
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(period);
        // Visible within the second before the release, with the others of its period.
        expect(now + delay * 1000).toBeLessThanOrEqual(releaseAt);
        expect(now + delay * 1000).toBeGreaterThan(releaseAt - 1000);
      }),
    );
  });

  it('releases every message of the same period in the same second', () => {
    const period = 20;
    // Just past a multiple of the period: every offset below falls in the period that ends at `start - 1 + 20 s`.
    const start = 1_800_000_000_001;
    const visible = [0, 3_400, 11_999, 19_998].map(
      (offset) => start + offset + gatherDelaySeconds(period, start + offset) * 1000,
    );
    for (const at of visible) expect(Math.floor(at / 1000)).toBeGreaterThanOrEqual((start - 1) / 1000 + period - 1);
    expect(Math.max(...visible) - Math.min(...visible)).toBeLessThan(1000);
  });

  it('sends at once with no period, and never past SQS’s 900 s', () => {
    expect(gatherDelaySeconds(0, 1_234_567)).toBe(0);
    expect(gatherDelaySeconds(Number.NaN, 1_234_567)).toBe(0);
    expect(gatherDelaySeconds(5_000, 1)).toBeLessThanOrEqual(900);
  });
});
