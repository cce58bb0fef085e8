/** Limits, enums and defaults of the interview service (interview-service-api.md §2.5, §8; facts "Inputs"). */
export const INTERVIEW_LANGUAGES = ['en', 'fr', 'de', 'he', 'hi', 'pt', 'es', 'tr', 'es-la', 'ja', 'sv', 'ar'] as const;
export type InterviewLanguage = (typeof INTERVIEW_LANGUAGES)[number];

/** The 24 codes the service's OpenAPI documents beyond the spec's 12 (facts, Corrections: "Limits and paging"). */
export const DOCUMENTED_EXTRA_LANGUAGES = [
  'pl',
  'dk',
  'kr',
  'it',
  'nl',
  'cz',
  'ua',
  'ur',
  'id',
  'en-GB',
  'es-MX',
  'cn',
  'zh-CN',
  'zh-TW',
  'zh-HK',
  'ru',
  'bn',
  'ms',
  'pt-BR',
  'vi',
  'tl',
  'th',
  'afb',
  'pt-PT',
] as const;

/** Every `interview_language` the service documents: the client accepts these 36 without an opt-in. */
export const DOCUMENTED_LANGUAGES = [...INTERVIEW_LANGUAGES, ...DOCUMENTED_EXTRA_LANGUAGES] as const;

/** `selected_coding_language` as the OpenAPI enumerates it. */
export const CODING_LANGUAGES = [
  'user_choice',
  'javascript',
  'cpp',
  'c',
  'csharp',
  'go',
  'java',
  'kotlin',
  'php',
  'python',
  'ruby',
  'rust',
  'swift',
  'typescript',
] as const;

export const QUESTION_TYPES = ['audio', 'text'] as const;

export const INTERVIEW_LIMITS = {
  maxQuestions: 20,
  /** The OpenAPI allows 10 (the spec said 5). */
  maxSkills: 10,
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
  /** Items asked for per page by listAll. The service documents no maximum, and may cap what it gives. */
  pageSize: 100,
  /** Report pages carry whole transcripts: small pages (facts, Corrections). */
  reportPageSize: 20,
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
  /** A 403 without the service's envelope: the gateway has no such route, so the base URL is wrong. */
  wrongBaseUrl: 'wrong-base-url',
} as const;
export type InterviewServiceErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];
