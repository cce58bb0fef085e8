import { describe, expect, it, vi } from 'vitest';
import { deadlineAfter } from '../../../shared/http/deadline';
import { NoRoomBeforeDeadlineError, stoppedUnsent } from '../../../shared/pipeline/errors';
import { runStep, type Step, UNCERTAIN_STEP_ROOM_MS } from '../../../shared/pipeline/steps';

const lost = Object.assign(new Error('no answer in 5 s'), { definitelyNotSent: false });
const throttled = Object.assign(new Error('throttled'), { definitelyNotSent: true });

/** A step whose effect fails with `error`; `shape` picks what it records and whether it can be looked up. */
function failingStep(error: Error, shape: { recordStart: boolean; lookup: boolean }) {
  const step = {
    name: 'invite-emailed',
    done: false,
    started: false,
    perform: vi.fn(() => Promise.reject(error)),
    clearStart: vi.fn(() => Promise.resolve()),
    recordDone: vi.fn((_result: unknown, _outcome: string, _last: boolean, _cause?: string) => Promise.resolve()),
    ...(shape.recordStart ? { recordStart: vi.fn(() => Promise.resolve()) } : {}),
    ...(shape.lookup ? { lookup: vi.fn(() => Promise.resolve(undefined)) } : {}),
  } satisfies Step<unknown>;
  return step;
}

describe('A side effect run as a step', () => {
  it('is uncertain at once when its answer did not come and nothing can look it up', async () => {
    const step = failingStep(lost, { recordStart: true, lookup: false });
    expect(await runStep(step, 'app-1')).toBe('uncertain');
    expect(step.recordDone).toHaveBeenCalledWith(undefined, 'uncertain', true, 'no answer in 5 s');
    expect(step.clearStart).not.toHaveBeenCalled();
  });

  it('is tried again when its failure shows it did not happen', async () => {
    const step = failingStep(throttled, { recordStart: true, lookup: false });
    await expect(runStep(step, 'app-1')).rejects.toBe(throttled);
    expect(step.clearStart).toHaveBeenCalledTimes(1);
    expect(step.recordDone).not.toHaveBeenCalled();
  });

  it('is left for the next try to look up, or to perform, when it can be looked up or records no start', async () => {
    for (const shape of [
      { recordStart: true, lookup: true },
      { recordStart: false, lookup: true },
      { recordStart: false, lookup: false },
    ]) {
      const step = failingStep(lost, shape);
      await expect(runStep(step, 'app-1')).rejects.toBe(lost);
      expect(step.recordDone).not.toHaveBeenCalled();
    }
  });

  it('is not begun when the deadline leaves no room for its answer and nothing can look it up', async () => {
    const sent = { messageId: 'm1' };
    const step = (signal: AbortSignal, lookup: boolean) => ({
      ...failingStep(lost, { recordStart: true, lookup }),
      perform: vi.fn(() => Promise.resolve(sent)),
      signal,
    });
    // Too near the deadline (a minute's invocation with 1.5 s left): a call the deadline cut would be uncertain, and
    // never made again.
    const near = step(
      deadlineAfter(60_000, () => Date.now() - 60_000 + UNCERTAIN_STEP_ROOM_MS - 500),
      false,
    );
    const refused = await runStep(near, 'app-1').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NoRoomBeforeDeadlineError);
    // Retryable, nothing half-done: the claim is handed back and the message comes back shortly.
    expect(refused).toMatchObject({ retryable: true, retryAfterMs: 1_000 });
    expect(stoppedUnsent(refused)).toBe(true);
    expect(near.recordStart).not.toHaveBeenCalled();
    expect(near.perform).not.toHaveBeenCalled();
    expect(near.recordDone).not.toHaveBeenCalled();
    // With the room, it is performed; a step that can be looked up needs none.
    for (const performed of [
      step(deadlineAfter(UNCERTAIN_STEP_ROOM_MS + 5_000), false),
      step(deadlineAfter(500), true),
    ]) {
      expect(await runStep(performed, 'app-1')).toBe('performed');
      expect(performed.recordDone).toHaveBeenCalledWith(sent, 'performed', true);
    }
  });

  it("asks at most a third of the invocation's time as room: a function given seconds still begins one", async () => {
    const step = (signal: AbortSignal) => ({
      ...failingStep(lost, { recordStart: true, lookup: false }),
      perform: vi.fn(() => Promise.resolve({ messageId: 'm1' })),
      signal,
    });
    // A 2.4-s invocation (a 3-s timeout less its margin) with 1 s left: room for the third it needs (0.8 s).
    const begun = step(deadlineAfter(2_400, () => Date.now() - 1_400));
    expect(await runStep(begun, 'app-1')).toBe('performed');
    // With 0.7 s left it is not begun.
    const late = step(deadlineAfter(2_400, () => Date.now() - 1_700));
    expect(await runStep(late, 'app-1').catch((error: unknown) => error)).toBeInstanceOf(NoRoomBeforeDeadlineError);
    expect(late.perform).not.toHaveBeenCalled();
  });
});
