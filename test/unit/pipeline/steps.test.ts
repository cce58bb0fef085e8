import { describe, expect, it, vi } from 'vitest';
import { runStep, type Step } from '../../../shared/pipeline/steps';

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
});
