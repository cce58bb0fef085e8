export { HTTP_DEFAULTS } from './constants';
export { deadlineAfter, deadlinePassed, timeLeftMs } from './deadline';
export { HttpTransportError } from './errors';
export { sendHttpRequest, redactUrl, type HttpRequest, type HttpResponse } from './fetch';
export {
  withRetry,
  sleep,
  parseRetryAfter,
  computeDelayMs,
  defaultRetryPolicy,
  type RetryPolicy,
  type RetryHooks,
  type RetryableFailure,
} from './retry';
export { hmacSha256, digestMatches, secretEquals } from './signature';
