import { ATS_ERROR_CODES } from '../ats/errors';
import { errorCode, errorMessage, hasCode, isPermanent, mayHaveSucceeded } from '../errors';

export { errorCode, isPermanent } from '../errors';

/**
 * The ATS refusing the connection's key itself (a 401 after the key was fetched again, ats-http.ts: revoked or
 * rotated): the connection's to fix, nothing of the work's own, whichever call met it. A 403 refuses what the key may
 * do on one route (a permission left out): that channel is refused, and the others go on.
 */
export function refusesKey(error: unknown): boolean {
  return isPermanent(error) && errorCode(error) === ATS_ERROR_CODES.unauthorized;
}

/**
 * An ATS refusal no retry will change, said and left: a warning naming the application and the refusal's code, which
 * it answers. Anything that may pass on a retry goes up, and so does the connection's key refused (key-refused.ts).
 */
export function warnRefusedForGood(
  error: unknown,
  logger: { warn(message: string, attributes?: Record<string, unknown>): void },
  line: string,
  application: { connectionId: string; atsApplicationId: string },
): string {
  if (!isPermanent(error) || refusesKey(error)) throw error;
  const { connectionId, atsApplicationId } = application;
  logger.warn(line, { connectionId, atsApplicationId, code: errorCode(error) });
  return errorCode(error);
}

/** Another worker is creating this job's interview and did not finish in time: SQS retries the message later. */
export class InterviewNotReadyError extends Error {
  public readonly code = 'interview-not-ready';
  public readonly retryable = true;
  /** The creator's lease ends by then: the interview is ready, or its creation can be taken over. */
  public readonly retryAfterMs: number | undefined;

  public constructor(jobKey: string, retryAfterMs?: number) {
    super(`the interview for ${jobKey} is being created by another worker`);
    this.name = 'InterviewNotReadyError';
    this.retryAfterMs = retryAfterMs;
  }
}

/** A failure SQS retries later: the message comes back after its visibility timeout. */
class RetriedLater extends Error {
  public readonly retryable = true;

  public constructor(message: string, name: string) {
    super(message);
    this.name = name;
  }
}

/** The service does not list the report yet; retried a few receives, then parked. */
export class ReportNotVisibleError extends RetriedLater {
  public readonly code = 'report-not-visible';

  public constructor(reportId: string) {
    super(`report ${reportId} is not listed by the interview service yet`, 'ReportNotVisibleError');
  }
}

/**
 * A step that cannot be looked up (the invite e-mail) was not begun: the worker's deadline was too near for its call
 * to be answered before it, and a call the deadline cuts is uncertain, never made again. Nothing was recorded or
 * sent: the message comes back shortly, with the claim handed back (time is not a verdict).
 */
export class NoRoomBeforeDeadlineError extends Error {
  public readonly code = 'no-room-before-deadline';
  public readonly retryable = true;
  public readonly definitelyNotSent = true;
  /** Back on the queue as soon as SQS allows: the next delivery has a whole invocation's time. */
  public readonly retryAfterMs = 1_000;

  public constructor(step: string, leftMs: number) {
    super(`${step}: ${Math.round(leftMs)} ms left before the worker's deadline; not begun, tried again`);
    this.name = 'NoRoomBeforeDeadlineError';
  }
}

/**
 * The worker stopped with nothing half-done: the ATS refused the call unsent (the call gate found its window spent)
 * or answered 429 (nothing was written), or a step was not begun for want of time before the deadline. The claim can
 * be handed back at once, and its next holder need not look for a note the refused call never wrote.
 */
export function stoppedUnsent(error: unknown): boolean {
  return (hasCode(error, 'ats-rate-limited') && !mayHaveSucceeded(error)) || hasCode(error, 'no-room-before-deadline');
}

/**
 * Another worker holds the claim. The message must come back later rather than be acknowledged: if that worker
 * dies, this message may be the only one left to finish the work.
 */
export class ClaimHeldElsewhereError extends Error {
  public readonly code = 'claim-held-elsewhere';
  public readonly retryable = true;
  /** The holder's lease runs out by then: look again after it. */
  public readonly retryAfterMs: number | undefined;

  public constructor(what: string, retryAfterMs?: number) {
    super(`${what}: another worker holds the claim; retrying later`);
    this.name = 'ClaimHeldElsewhereError';
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Finishing the invitation of a candidate who left the stage, the service no longer shows the invitation a look had
 * just found: nothing is made anew for them. The message comes back; a look that finds none then leaves it unsent.
 */
export class InvitationNotFoundError extends RetriedLater {
  public readonly code = 'invitation-not-found';

  public constructor(interviewId: string) {
    const message = `interview ${interviewId}: the invitation begun is not found at the service; nothing is sent anew`;
    super(message, 'InvitationNotFoundError');
  }
}

/**
 * The service refused for good to give again the link of an invitation it had e-mailed, found on a resume: the
 * candidate has the invitation, only the link for the ATS is missing. Permanent, with the refusal's code.
 */
export class LinkWithheldError extends Error {
  public readonly code: string;
  public readonly retryable = false;

  public constructor(refusal: unknown) {
    super(`the service e-mailed the invitation and refused to give its link again: ${errorMessage(refusal)}`);
    this.name = 'LinkWithheldError';
    this.code = errorCode(refusal);
  }
}
