/**
 * The connector's one error type for calls to outside systems (an ATS, the interview service, SES, a plain HTTP
 * transport), and the guards that read any error. A call ends in one of four ways, and the pipeline acts on which:
 * - **not sent**: nothing reached the system (`definitelyNotSent`); it can be done again, nothing to look for;
 * - **maybe sent**: no answer came back and a write may have been carried out (`mayHaveSucceeded`); look before
 *   writing again;
 * - **refused**: the system answered no (`retryable: false`, a status); permanent;
 * - **rate limited**: the system asked to wait (`rateLimited`, `retryAfterMs`); retried after that.
 * Nothing outside this module casts an error: it reads one through these guards.
 */
export interface OutwardCallFacts {
  retryable: boolean;
  status?: number | undefined;
  retryAfterMs?: number | undefined;
  mayHaveSucceeded?: boolean | undefined;
  definitelyNotSent?: boolean | undefined;
  rateLimited?: boolean | undefined;
  cause?: unknown;
}

export class OutwardCallError extends Error {
  /** Stable, e.g. `ats-not-found`, `unauthorized`, `mail-failed`, `timeout`: read this rather than the class. */
  public readonly code: string;
  /** Whether SQS should try the message again. */
  public readonly retryable: boolean;
  public readonly status: number | undefined;
  public readonly retryAfterMs: number | undefined;
  /** The write may have been carried out though no answer came back: look before writing again. */
  public readonly mayHaveSucceeded: boolean;
  /** Nothing was sent: the step can be cleared and done again. */
  public readonly definitelyNotSent: boolean;
  /** The system asked to wait (a spent window, a 429). */
  public readonly rateLimited: boolean;

  public constructor(code: string, message: string, facts: OutwardCallFacts) {
    super(message, facts.cause === undefined ? undefined : { cause: facts.cause });
    this.name = 'OutwardCallError';
    this.code = code;
    this.retryable = facts.retryable;
    this.status = facts.status;
    this.retryAfterMs = facts.retryAfterMs;
    this.mayHaveSucceeded = facts.mayHaveSucceeded ?? false;
    this.definitelyNotSent = facts.definitelyNotSent ?? false;
    this.rateLimited = facts.rateLimited ?? false;
  }
}

/** One property of whatever was thrown (an Error, an SDK exception, a string), or undefined. */
function field(error: unknown, name: string): unknown {
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[name] : undefined;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The error's stable code, else its name (an SDK exception's), else 'unknown'. */
export function errorCode(error: unknown): string {
  return text(field(error, 'code')) ?? text(field(error, 'name')) ?? 'unknown';
}

export function errorName(error: unknown): string {
  return text(field(error, 'name')) ?? 'unknown';
}

/** The error's message; a thrown string as itself. */
export function errorMessage(error: unknown): string {
  return text(field(error, 'message')) ?? (typeof error === 'string' ? error : String(error));
}

/** Errors carry `retryable`; anything without it (a bug, an SDK fault) is retryable, so nothing is lost. */
export function isPermanent(error: unknown): boolean {
  return field(error, 'retryable') === false;
}

export function isRetryable(error: unknown): boolean {
  return field(error, 'retryable') === true;
}

/** The system asked to wait (a 429, a spent window): no verdict on the call. */
export function isRateLimited(error: unknown): boolean {
  return field(error, 'rateLimited') === true;
}

export function mayHaveSucceeded(error: unknown): boolean {
  return field(error, 'mayHaveSucceeded') === true;
}

export function definitelyNotSent(error: unknown): boolean {
  return field(error, 'definitelyNotSent') === true;
}

export function hasCode(error: unknown, code: string): boolean {
  return field(error, 'code') === code;
}

/** The HTTP status of the answer: the connector's errors' `status`, or an AWS SDK exception's `$metadata`. */
export function httpStatus(error: unknown): number | undefined {
  const status = field(error, 'status') ?? field(field(error, '$metadata'), 'httpStatusCode');
  return typeof status === 'number' ? status : undefined;
}

/**
 * The request never left: the connection was refused, its host not found, or it was not established within the
 * client's connection timeout (`@smithy/node-http-handler` destroys the request before any byte of it is written, and
 * says so only in its message). Any other error without an answer may have carried the request out.
 */
export function connectionNeverOpened(error: unknown): boolean {
  const code = field(error, 'code');
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return true;
  const message = text(field(error, 'message')) ?? '';
  return field(error, 'name') === 'TimeoutError' && message.includes('did not establish a connection');
}

/** How long the system asked to wait, in ms, when it said. */
export function retryAfterMs(error: unknown): number | undefined {
  const wait = field(error, 'retryAfterMs');
  return typeof wait === 'number' ? wait : undefined;
}

/** A definite refusal of one channel (SES will not send this e-mail), with its reason; undefined otherwise. */
export function refusalReason(error: unknown): string | undefined {
  return field(error, 'refused') === true ? (text(field(error, 'reason')) ?? 'refused') : undefined;
}

/** An error of Node's own URL parser (`ERR_INVALID_URL`) or a URIError. */
export function isInvalidUrl(error: unknown): boolean {
  return error instanceof URIError || hasCode(error, 'ERR_INVALID_URL');
}
