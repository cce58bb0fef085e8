import { afterSideEffect, type SideEffectPoint } from './fault-injection';
import { definitelyNotSent, errorMessage } from '../errors';
import { deadlineSpanMs, timeLeftMs } from '../http/deadline';
import { NoRoomBeforeDeadlineError } from './errors';

/**
 * The time a step that records its start and cannot be looked up (an e-mail) needs before the worker's deadline to
 * begin: its call is then answered before the deadline, not cut by it and left uncertain (never sent). An e-mail's
 * call takes tens of milliseconds, a busy machine's up to a second or two. At most a third of the invocation's whole
 * time: where a function is given only seconds (the chaos run's compressed time), two of them would leave a step
 * almost never begun, its message deferred over and over toward the DLQ on a busy machine.
 */
export const UNCERTAIN_STEP_ROOM_MS = 2_000;

/** Throws a NoRoomBeforeDeadlineError, before anything of `what` is recorded, when the deadline leaves it no room. */
export function ensureRoomBeforeDeadline(what: string, signal: AbortSignal | undefined): void {
  const left = timeLeftMs(signal);
  if (left < Math.min(UNCERTAIN_STEP_ROOM_MS, deadlineSpanMs(signal) / 3))
    throw new NoRoomBeforeDeadlineError(what, left);
}

/**
 * One outward side effect of an application (an invitation on the service, the invite e-mail, a note), made
 * crash-safe the same way for all (architecture: "Side effects as steps"): record that it started where the outside
 * system cannot tell, perform it, record it done. A step found started and not done on resume is either looked up
 * where the outside system can be asked (an invitation by interview and e-mail, a note by its marker) or recorded
 * as uncertain where it cannot (an e-mail), never performed blindly a second time. For the same reason a step that
 * records its start and cannot be looked up is recorded uncertain at once when its answer does not come (a timeout, a
 * lost connection, a 5xx): a redelivery could only record the same, after the queue's visibility timeout.
 */
export interface Step<R> {
  /** Also the chaos run's crash point: the moment the world is ahead of the mapping tables. */
  name: SideEffectPoint;
  /** Already recorded as done: skipped. */
  done: boolean;
  /** Recorded as started by an earlier worker (or, for steps that record no start, the claim was resumed). */
  started: boolean;
  /** Records the start, before the effect; steps whose lookup needs no record of it leave this out. */
  recordStart?: () => Promise<void>;
  /**
   * The worker's deadline. A step that records its start and has no lookup begins only with `UNCERTAIN_STEP_ROOM_MS`
   * left before it; otherwise nothing is recorded and a NoRoomBeforeDeadlineError brings the message back.
   */
  signal?: AbortSignal | undefined;
  /** After a start: whether the effect happened, and what it gave. Without one, a started step is uncertain. */
  lookup?: () => Promise<R | undefined>;
  perform: () => Promise<R>;
  /**
   * A failure that shows the effect did not happen (`definitelyNotSent`: a refusal, throttling): the start is cleared
   * so a later try performs it again.
   */
  clearStart?: () => Promise<void>;
  /**
   * Records the step done (`uncertain`: it may have happened, it is not done again; `cause` says why, when its
   * answer did not come). `last`: no step follows, so the same write can close the whole sequence (e.g. move the
   * application to `invited`).
   */
  recordDone(result: R | undefined, outcome: StepOutcome, last: boolean, cause?: string): Promise<void>;
}

export type StepOutcome = 'performed' | 'found' | 'uncertain';

/** Runs one step to done; `key` names the application for the chaos run's crash points. */
export async function runStep<R>(step: Step<R>, key: string, last = true): Promise<StepOutcome | 'skipped'> {
  if (step.done) return 'skipped';
  return performStep(step, key, last);
}

async function performStep<R>(step: Step<R>, key: string, last: boolean): Promise<StepOutcome> {
  if (step.started) {
    if (!step.lookup) {
      await step.recordDone(undefined, 'uncertain', last);
      return 'uncertain';
    }
    const found = await step.lookup();
    if (found !== undefined) {
      await step.recordDone(found, 'found', last);
      return 'found';
    }
  }
  if (step.recordStart && !step.lookup) ensureRoomBeforeDeadline(step.name, step.signal);
  await step.recordStart?.();
  let result: R;
  try {
    result = await step.perform();
  } catch (error) {
    if (definitelyNotSent(error)) {
      await step.clearStart?.();
      throw error;
    }
    // An answer that did not come may hide the effect: one that can be looked up is, on the next try; one that
    // cannot is uncertain now.
    if (!step.recordStart || step.lookup) throw error;
    afterSideEffect(step.name, key);
    await step.recordDone(undefined, 'uncertain', last, errorMessage(error));
    return 'uncertain';
  }
  afterSideEffect(step.name, key);
  await step.recordDone(result, 'performed', last);
  return 'performed';
}

/** Runs the steps in order; the last one is told so. */
export async function runSteps(steps: readonly Step<unknown>[], key: string): Promise<void> {
  for (const [index, step] of steps.entries()) await runStep(step, key, index === steps.length - 1);
}
