import * as v from 'valibot';
import {
  HTTP_DEFAULTS,
  defaultRetryPolicy,
  parseRetryAfter,
  redactUrl,
  sendHttpRequest,
  withRetry,
  type RetryHooks,
  type RetryPolicy,
} from '../http';
import { AtsError, ATS_ERROR_CODES, atsErrorForStatus } from './errors';
import { describeFirstIssue } from '../validation';

export interface AtsHttpOptions {
  baseUrl: string;
  /** The Authorization header value; `refresh` asks for a new one after a 401. */
  authorization: (refresh: boolean) => Promise<string>;
  fetch?: typeof fetch | undefined;
  timeoutMs?: number | undefined;
  retry?: Partial<RetryPolicy> | undefined;
  sleep?: RetryHooks['sleep'];
  now?: () => number;
  /** An error hidden in a successful answer (Ashby's HTTP 200 with `success: false`). */
  failureInBody?: (body: unknown) => string | undefined;
}

export interface AtsRequest {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** A read sent as POST (Ashby's RPC API): safe to send again after a 5xx or a lost answer. */
  readOnly?: boolean;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Rate-limit windows announce their end in epoch seconds (Greenhouse `X-RateLimit-Reset`, Workable
 * `X-Rate-Limit-Reset`).
 */
function resetDelayMs(headers: Headers, now: number): number | undefined {
  const reset = Number(headers.get('x-ratelimit-reset') ?? headers.get('x-rate-limit-reset') ?? NaN);
  if (!Number.isFinite(reset) || reset <= 0) return undefined;
  return Math.max(0, reset * 1000 - now);
}

function errorDetail(text: string): string {
  const body = safeJson(text) as { message?: unknown; error?: unknown } | undefined;
  const detail = typeof body?.message === 'string' ? body.message : typeof body?.error === 'string' ? body.error : '';
  return detail.slice(0, 200);
}

/**
 * The HTTP side every ATS adapter shares: auth header, one re-authentication after a 401, bounded retries
 * that wait as Retry-After (or the rate-limit reset header) says, and writes retried only when the ATS refused
 * them outright (429), never after an answer that may hide a write (5xx, timeout).
 */
export class AtsHttpClient {
  private readonly options: AtsHttpOptions;
  private readonly policy: RetryPolicy;
  private readonly fetchImpl: typeof fetch;

  public constructor(options: AtsHttpOptions) {
    this.options = options;
    this.policy = { ...defaultRetryPolicy, ...options.retry };
    this.fetchImpl = options.fetch ?? fetch;
  }

  public async request<T>(request: AtsRequest, schema: v.GenericSchema<unknown, T>): Promise<T> {
    const url = this.options.baseUrl.replace(/\/+$/, '') + request.path;
    const where = `${request.method} ${redactUrl(url)}`;
    const isWrite = request.method !== 'GET' && !request.readOnly;
    const now = this.options.now ?? Date.now;
    let refreshed = false;
    const attempt = async (): Promise<T> => {
      const authorization = await this.options.authorization(false);
      const send = (auth: string) =>
        sendHttpRequest(
          {
            url,
            method: request.method,
            headers: {
              authorization: auth,
              accept: 'application/json',
              ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            body: request.body === undefined ? undefined : JSON.stringify(request.body),
            timeoutMs: this.options.timeoutMs ?? HTTP_DEFAULTS.timeoutMs,
            signal: request.signal,
          },
          this.fetchImpl,
        ).catch((error: unknown) => {
          throw new AtsError(ATS_ERROR_CODES.unavailable, (error as Error).message, {
            cause: error,
            mayHaveSucceeded: isWrite,
          });
        });
      let response = await send(authorization);
      if (response.status === 401 && !refreshed) {
        // An expired or revoked token: authenticate once more (nothing was written with a 401).
        refreshed = true;
        response = await send(await this.options.authorization(true));
      }
      if (response.status < 200 || response.status >= 300) {
        const retryAfter =
          parseRetryAfter(response.headers, now()) ??
          (response.status === 429 ? resetDelayMs(response.headers, now()) : undefined);
        throw atsErrorForStatus(response.status, where, errorDetail(response.bodyText), retryAfter, isWrite);
      }
      const body = safeJson(response.bodyText);
      const failure = this.options.failureInBody?.(body);
      if (failure !== undefined)
        throw new AtsError(ATS_ERROR_CODES.invalidRequest, `${where}: ${failure}`, { status: response.status });
      const parsed = v.safeParse(schema, body);
      if (!parsed.success)
        throw new AtsError(ATS_ERROR_CODES.malformedResponse, `${where}: ${describeFirstIssue(parsed.issues).message}`);
      return parsed.output;
    };
    return withRetry(attempt, this.policy, {
      sleep: this.options.sleep,
      signal: request.signal,
      shouldRetry: (error) => !isWrite || !(error as AtsError).mayHaveSucceeded,
    });
  }
}

export function basicAuth(user: string, password = ''): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
