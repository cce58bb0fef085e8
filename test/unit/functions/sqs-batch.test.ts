import { describe, expect, it } from 'vitest';
import { closingSignal, deadlineSignal } from '../../../functions/_runtime/deadline';
import { deadlineSpanMs } from '../../../shared/http/deadline';

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

describe("Function: closingSignal (the console's record after the records are answered)", () => {
  it.each([
    [60_000, 59_500, 57_000],
    [10_000, 9_500, 8_000],
    [3_000, 2_700, 2_400],
    [100, 100, 500],
  ])("with %i ms left, gives %i ms, past the work deadline (%i ms), never past Lambda's", (remaining, span, work) => {
    const context = { getRemainingTimeInMillis: () => remaining };
    expect(deadlineSpanMs(closingSignal(context))).toBe(span);
    expect(deadlineSpanMs(deadlineSignal(context))).toBe(work);
    if (remaining > 500) expect(span).toBeGreaterThan(work);
    expect(span).toBeLessThanOrEqual(remaining);
  });
});
