import { describe, expect, it } from 'vitest';
import { deadlineSignal } from '../../../functions/_runtime/deadline';

describe('Function: deadlineSignal', () => {
  it.each([
    [60_000, 57_000],
    [10_000, 8_000],
    [9_999, 7_999],
    [3_001, 2_400],
    [100, 500],
  ])(
    'with %i ms left, aborts after about %i ms (never a fraction, never under 500 ms)',
    async (remaining, expected) => {
      const started = Date.now();
      const signal = deadlineSignal({ getRemainingTimeInMillis: () => remaining });
      expect(signal.aborted).toBe(false);
      if (expected <= 500) {
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        expect(Date.now() - started).toBeGreaterThanOrEqual(480);
      }
    },
  );
});
