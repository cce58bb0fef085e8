/** The outward side effects, each followed by a write that records it. */
export type SideEffectPoint =
  | 'interview-created'
  | 'service-invited'
  | 'invite-emailed'
  | 'invite-note-posted'
  | 'report-link-attached'
  | 'report-note-posted'
  /** The report file attached to the candidate's record (shared/pipeline/report-file.ts). */
  | 'report-attached'
  | 'stage-moved'
  | 'reminder-emailed'
  | 'expiry-note-posted'
  /** A note telling the recruiter why an invitation could not go out (shared/pipeline/failure-note.ts). */
  | 'failure-note-posted'
  | 'status-shown'
  /** An assessment order's end told to its ATS (shared/orders/order-result.use-case.ts). */
  | 'order-announced';

/**
 * A seam for the chaos run (`npm run chaos`), empty in production: called right after an outward side effect
 * and before it is recorded, the one place where a crash can leave the world ahead of the mapping tables.
 */
export const faultInjection: { afterSideEffect?: ((point: SideEffectPoint, key: string) => void) | undefined } = {};

export function afterSideEffect(point: SideEffectPoint, key: string): void {
  faultInjection.afterSideEffect?.(point, key);
}

/** What the chaos run throws at a crash point: like a Lambda that died, the message is retried later. */
export class SimulatedCrash extends Error {
  public readonly code = 'simulated-crash';
  public readonly retryable = true;

  public constructor(point: SideEffectPoint) {
    super(`simulated crash after ${point}`);
    this.name = 'SimulatedCrash';
  }
}
