import * as v from 'valibot';
import { ERROR_CODES, type InterviewServiceErrorCode } from './constants';
import { OutwardCallError } from '../errors';

interface ErrorContext {
  status?: number | undefined;
  retryAfterMs?: number | undefined;
  /** The path of the offending field (`custom_question_list`, `data[2].candidate_id`), when one is known. */
  field?: string | undefined;
  /**
   * True when the request may have been carried out although no answer came back (timeout, network error,
   * 5xx on a create). The caller must look before it writes again.
   */
  mayHaveSucceeded?: boolean | undefined;
  cause?: unknown;
}

/** Base of every interview-service failure; check `code`, which is stable, rather than the class. */
export class InterviewServiceError extends OutwardCallError {
  declare public readonly code: InterviewServiceErrorCode;
  public readonly field: string | undefined;

  public constructor(code: InterviewServiceErrorCode, retryable: boolean, message: string, context: ErrorContext = {}) {
    super(code, message, { ...context, retryable, rateLimited: code === ERROR_CODES.rateLimited });
    this.name = 'InterviewServiceError';
    this.field = context.field;
  }
}

export class UnauthorizedError extends InterviewServiceError {
  public constructor(serviceMessage: string, context: ErrorContext = {}) {
    super(
      ERROR_CODES.unauthorized,
      false,
      `the interview service refused the API key (${serviceMessage}): put a valid key in the connection's secret`,
      context,
    );
    this.name = 'UnauthorizedError';
  }
}

/** 403 in the service's envelope: the key is expired or wrong (the service's guide says so), or lacks a permission. */
export class ForbiddenError extends InterviewServiceError {
  public constructor(serviceMessage: string, context: ErrorContext = {}) {
    super(
      ERROR_CODES.forbidden,
      false,
      `the interview service refused the API key (403: ${serviceMessage}): an expired key is refused this way, ` +
        "so rotate it in the connection's secret; if it is current, give it permission for this resource",
      context,
    );
    this.name = 'ForbiddenError';
  }
}

/** 403 without the service's envelope: its gateway has no such route, so `interviewService.baseUrl` is wrong. */
export class WrongBaseUrlError extends InterviewServiceError {
  public constructor(where: string, gatewayMessage: string, context: ErrorContext = {}) {
    super(
      ERROR_CODES.wrongBaseUrl,
      false,
      `${where}: route not found at this base URL (403 ${gatewayMessage || 'without the service envelope'}): ` +
        "check the connection's interviewService.baseUrl",
      context,
    );
    this.name = 'WrongBaseUrlError';
  }
}

/** A kind of failure the service answers: its code, whether a retry may pass, and its class's name. */
const failureKind = (code: InterviewServiceErrorCode, retryable: boolean, name: string) =>
  class extends InterviewServiceError {
    public constructor(message: string, context: ErrorContext = {}) {
      super(code, retryable, message, context);
      this.name = name;
    }
  };

export class InvalidRequestError extends failureKind(ERROR_CODES.invalidRequest, false, 'InvalidRequestError') {}
export class NotFoundError extends failureKind(ERROR_CODES.notFound, false, 'NotFoundError') {}
export class RateLimitedError extends failureKind(ERROR_CODES.rateLimited, true, 'RateLimitedError') {}
export class UnavailableError extends failureKind(ERROR_CODES.unavailable, true, 'UnavailableError') {}
export class MalformedResponseError extends failureKind(
  ERROR_CODES.malformedResponse,
  false,
  'MalformedResponseError',
) {}

export class PageLimitExceededError extends InterviewServiceError {
  public constructor(maxPages: number) {
    super(
      ERROR_CODES.pageLimitExceeded,
      false,
      `listing stopped after ${maxPages} pages without reaching an empty page`,
    );
    this.name = 'PageLimitExceededError';
  }
}

/** `custom_question_list: custom_question_list allows at most 20 questions`; the first issue names the field. */
export function describeIssues(
  issues: readonly v.BaseIssue<unknown>[],
  prefix = '',
): { field: string; message: string } {
  const first = issues[0];
  if (!first) return { field: prefix || '(root)', message: 'invalid value' };
  const path = v.getDotPath(first);
  const field = [prefix, path].filter(Boolean).join('.') || '(root)';
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? 's' : ''})` : '';
  return { field, message: `${field}: ${first.message}${more}` };
}
