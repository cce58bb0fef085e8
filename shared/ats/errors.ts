import { httpStatus, OutwardCallError } from '../errors';

export const ATS_ERROR_CODES = {
  unauthorized: 'ats-unauthorized',
  forbidden: 'ats-forbidden',
  notFound: 'ats-not-found',
  invalidRequest: 'ats-invalid-request',
  rateLimited: 'ats-rate-limited',
  unavailable: 'ats-unavailable',
  malformedResponse: 'ats-malformed-response',
  unsupported: 'ats-unsupported',
} as const;
export type AtsErrorCode = (typeof ATS_ERROR_CODES)[keyof typeof ATS_ERROR_CODES];

/** A failure talking to an ATS; `code` is stable, `retryable` says whether SQS should try the message again. */
export class AtsError extends OutwardCallError {
  declare public readonly code: AtsErrorCode;
  /**
   * The pacing kept the call back (nothing was sent): the message waits in the queue, not in the worker. `turnAt`,
   * where set, is the turn it reserved on the connection's schedule, which it keeps when it comes back.
   */
  public readonly paced: boolean;
  public readonly turnAt: number | undefined;
  /** The calls the turn holds intervals for. */
  public readonly turnCalls: number | undefined;
  /** The step the turn was booked for (shared/ats/profile.ts STEP_KINDS). */
  public readonly turnKind: string | undefined;

  public constructor(
    code: AtsErrorCode,
    message: string,
    context: {
      status?: number;
      retryAfterMs?: number;
      paced?: boolean;
      turnAt?: number;
      turnCalls?: number;
      turnKind?: string;
      mayHaveSucceeded?: boolean;
      /** It failed before its write was sent (a read the write needs first): nothing was written. */
      beforeWrite?: boolean;
      cause?: unknown;
    } = {},
  ) {
    const rateLimited = code === ATS_ERROR_CODES.rateLimited;
    const paced = context.paced ?? context.turnAt !== undefined;
    // Kept back by the pacing, or refused outright (a 429, a 4xx but a 408): nothing was written, so a step may be done
    // again.
    const { status } = context;
    const refused = status !== undefined && status >= 400 && status < 500 && status !== 408;
    const definitelyNotSent = !context.mayHaveSucceeded && (paced || refused || context.beforeWrite === true);
    const retryable = rateLimited || code === ATS_ERROR_CODES.unavailable;
    super(code, message, { ...context, retryable, rateLimited, definitelyNotSent });
    this.name = 'AtsError';
    this.paced = paced;
    this.turnAt = context.turnAt;
    this.turnCalls = context.turnCalls;
    this.turnKind = context.turnKind;
  }
}

/**
 * Whether the ATS's own server gave this status: anything under 500, or a 500, 501 or 503 (its refusal). A gateway's
 * giving up on it (502, 504, a CDN's 520 to 524) is no answer: the write behind it may still land.
 */
export const answeredByServer = (status: number): boolean => status < 500 || [500, 501, 503].includes(status);

/** An error the ATS's own server answered with (answeredByServer): none when no answer came at all. */
export const answeredByAts = (error: unknown): boolean => {
  const status = httpStatus(error);
  return status !== undefined && answeredByServer(status);
};

/** Maps an ATS's HTTP status to an AtsError; 2xx is not an error. */
export function atsErrorForStatus(
  answer: { status: number; retryAfterMs?: number | undefined },
  where: string,
  detail: string,
  isWrite = false,
): AtsError {
  const { status, retryAfterMs } = answer;
  const message = `${where}: ${status}${detail ? ` ${detail}` : ''}`;
  if (status === 401) return new AtsError(ATS_ERROR_CODES.unauthorized, message, { status });
  if (status === 403) return new AtsError(ATS_ERROR_CODES.forbidden, message, { status });
  if (status === 404) return new AtsError(ATS_ERROR_CODES.notFound, message, { status });
  if (status === 429)
    return new AtsError(
      ATS_ERROR_CODES.rateLimited,
      message,
      retryAfterMs === undefined ? { status } : { status, retryAfterMs },
    );
  // A 408: the server stopped waiting for the request (as a 5xx, it may pass on a retry).
  if (status >= 500 || status === 408)
    return new AtsError(ATS_ERROR_CODES.unavailable, message, { status, mayHaveSucceeded: isWrite });
  return new AtsError(ATS_ERROR_CODES.invalidRequest, message, { status });
}

/**
 * A failure of a read a write needs first (Kombo's table of what the integration can write): the write was never
 * sent, so a step recorded as begun may be cleared and done again (shared/pipeline/steps.ts).
 */
export function failedBeforeWrite(error: unknown): unknown {
  if (!(error instanceof AtsError) || error.definitelyNotSent || error.mayHaveSucceeded) return error;
  const { status, retryAfterMs, paced, turnAt, turnCalls, turnKind } = error;
  const facts = { status, retryAfterMs, paced, turnAt, turnCalls, turnKind };
  return new AtsError(error.code, error.message, { ...facts, beforeWrite: true, cause: error });
}
