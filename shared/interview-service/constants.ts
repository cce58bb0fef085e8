/** Limits, enums and defaults of the interview service (interview-service-api.md §2.5, §8; facts "Inputs"). */
export const INTERVIEW_LANGUAGES = ['en', 'fr', 'de', 'he', 'hi', 'pt', 'es', 'tr', 'es-la', 'ja', 'sv', 'ar'] as const;
export type InterviewLanguage = (typeof INTERVIEW_LANGUAGES)[number];

export const QUESTION_TYPES = ['audio', 'text'] as const;

export const INTERVIEW_LIMITS = {
  maxQuestions: 20,
  maxSkills: 5,
  /** custom_question_list[].time is in minutes (facts: 1 to 4). */
  minQuestionMinutes: 1,
  maxQuestionMinutes: 4,
} as const;

export const INTERVIEW_DEFAULTS = {
  interview_language: 'en',
  can_change_interview_language: false,
  is_proctoring_required: true,
} as const;

export const EVENT_KINDS = {
  reportCreated: 'interview_report.created',
} as const;

export const API_KEY_HEADER = 'x-api-key';

export const PAGINATION = {
  /** Items asked for per page by listAll. The service documents no maximum; the sandbox honours any limit. */
  pageSize: 100,
  /** listAll gives up past this many pages rather than loop on a service that ignores `page`. */
  maxPages: 200,
} as const;

export const ERROR_CODES = {
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  invalidRequest: 'invalid-request',
  notFound: 'not-found',
  rateLimited: 'rate-limited',
  unavailable: 'unavailable',
  malformedResponse: 'malformed-response',
  pageLimitExceeded: 'page-limit-exceeded',
} as const;
export type InterviewServiceErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];
