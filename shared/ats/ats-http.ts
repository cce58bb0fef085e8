import * as v from 'valibot';
import { HTTP_DEFAULTS, defaultRetryPolicy, parseRetryAfter, redactUrl, sendHttpRequest, withRetry } from '../http';
import type { RetryHooks, RetryPolicy } from '../http';
import { AtsError, ATS_ERROR_CODES, answeredByServer, atsErrorForStatus } from './errors';
import type { CallGate } from './call-gate';
import { announcedResetAt, PROFILES, type RateHeaders } from './profiles';
import type { AtsAdapterOptions } from './webhook-body';
import { describeFirstIssue } from '../validation';
import { errorMessage, mayHaveSucceeded } from '../errors';

export interface AtsHttpOptions {
  baseUrl: string;
  /** The Authorization header value; `refresh` asks for a new one after a 401. */
  authorization: (refresh: boolean) => Promise<string>;
  fetch?: typeof fetch | undefined;
  timeoutMs?: number | undefined;
  retry?: Partial<RetryPolicy> | undefined;
  sleep?: RetryHooks['sleep'];
  now?: () => number;
  /** A refusal hidden in a successful answer (Ashby's HTTP 200 with `success: false`); undefined when none. */
  failureInBody?: (body: unknown) => string | undefined;
  /** Asked before each call is sent and told of each answer: the connection's pacing (shared/pacing/). */
  gate?: CallGate | undefined;
  /** The headers the ATS announces its window in (its profile's): a 429 without Retry-After waits for its reset. */
  rateHeaders?: RateHeaders | undefined;
  /** The least wait after a 429 that names no wait and no reset (its profile's `throttled.backOffFromMs`). */
  throttledWaitMs?: number | undefined;
  /** An API that passes writes on to another (Kombo's): none of its 5xx says the write behind it is not landing. */
  relayed?: boolean | undefined;
  /** Sent with every call besides the credentials (Kombo's `X-Integration-Id`). */
  headers?: Record<string, string> | undefined;
}

/** An answer read by its schema, with its headers (where a list's next page may be: shared/ats/paging.ts). */
export interface AtsAnswer<T> {
  body: T;
  headers: Headers;
}

export interface AtsRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** A path under the base URL, or a whole URL on the base URL's origin (a `Link` header's next page). */
  path: string;
  body?: unknown;
  /** A multipart/form-data body instead of JSON (a file upload). */
  form?: FormData | undefined;
  signal?: AbortSignal | undefined;
  /** A read sent as POST (Ashby's RPC API): safe to send again after a 5xx or a lost answer. */
  readOnly?: boolean;
  /** A write whose repeat changes nothing (a tag set or taken off): sent again after a 5xx or a lost answer too. */
  idempotent?: boolean;
  /**
   * With `idempotent`: a write another worker's later one must not be undone by (a status tag). Sent again only after
   * the ATS's own 5xx; with no answer (a timeout, a lost connection, a gateway's 502 or 504) the first attempt may
   * still land, after a later status, so it goes up as may-have-landed and the message's retry shows the status again.
   */
  ordered?: boolean;
}

/** The body as JSON, or undefined when it is not (an empty 204, an HTML error page). */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The longest Retry-After a call sits out in its own invocation; a longer one goes back to the queue with its
 * delay, so a worker slot every connection shares is never held idle by one connection's limit.
 */
const ATS_WAIT_IN_SLOT_MS = 5_000;

/**
 * What an error body says: its `message`, or its `error` as text, or as an object with its code first (`{error:
 * {code, message}}`, Kombo's envelope: its code is what to branch on, ats-routes.json `ats.kombo.rateLimit`).
 */
export function errorDetail(text: string): string {
  const body = safeJson(text) as { message?: unknown; error?: unknown } | undefined;
  const error = body?.error as { code?: unknown; message?: unknown } | string | undefined;
  const nested =
    error && typeof error === 'object'
      ? [error.code, error.message].filter((part) => typeof part === 'string' && part).join(': ')
      : '';
  const detail = typeof body?.message === 'string' ? body.message : typeof error === 'string' ? error : nested;
  return detail.slice(0, 200);
}

/**
 * The HTTP side every ATS adapter shares: auth header, one re-authentication after a 401, bounded retries that wait
 * as Retry-After (or the rate-limit reset header) says, and writes retried only when the ATS refused them outright
 * (429), never after an answer that may hide a write (5xx, timeout). An `idempotent` write is sent again after a 5xx
 * or no answer too; one also `ordered` only after its server's own 5xx. Pacing is the gate's (shared/pacing/).
 */
export class AtsHttpClient {
  private readonly options: AtsHttpOptions;
  private readonly policy: RetryPolicy;
  private readonly fetchImpl: typeof fetch;

  /** An adapter's client: its connection's base URL and the options the adapter was made with (`extra` over them). */
  public static forAdapter(
    options: AtsAdapterOptions,
    authorization: AtsHttpOptions['authorization'],
    extra: Partial<AtsHttpOptions> = {},
  ): AtsHttpClient {
    const { connection, fetch, timeoutMs, retry, gate, sleep } = options;
    return new AtsHttpClient({
      baseUrl: connection.atsBaseUrl,
      authorization,
      fetch,
      timeoutMs,
      retry,
      gate,
      sleep,
      rateHeaders: PROFILES[connection.ats as keyof typeof PROFILES]?.rateHeaders,
      throttledWaitMs: (PROFILES[connection.ats as keyof typeof PROFILES]?.throttled as { backOffFromMs?: number })
        ?.backOffFromMs,
      ...extra,
    });
  }

  public constructor(options: AtsHttpOptions) {
    this.options = options;
    this.policy = { ...defaultRetryPolicy, maxRetryAfterMs: ATS_WAIT_IN_SLOT_MS, ...options.retry };
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** A read: the answer must match `schema`, or the read fails naming the field. */
  public async request<T>(request: AtsRequest, schema: v.GenericSchema<unknown, T>): Promise<T> {
    return (await this.answer(request, schema)).body;
  }

  /** A read whose headers matter too (a list's page, whose next page may be named in a `Link` header). */
  public async answer<T>(request: AtsRequest, schema: v.GenericSchema<unknown, T>): Promise<AtsAnswer<T>> {
    const { where, body, headers } = await this.exchange(request);
    const parsed = v.safeParse(schema, body);
    if (!parsed.success)
      throw new AtsError(ATS_ERROR_CODES.malformedResponse, `${where}: ${describeFirstIssue(parsed.issues).message}`);
    return { body: parsed.output, headers };
  }

  /**
   * A write. Once the ATS answered 2xx the write is done, whatever the answer's body (Workable's empty 201,
   * Greenhouse's 204): what `schema` can read of it is returned (an id), else undefined; it is never an error.
   */
  public async write<T>(request: AtsRequest, schema: v.GenericSchema<unknown, T>): Promise<T | undefined> {
    const { body } = await this.exchange(request);
    const parsed = v.safeParse(schema, body);
    return parsed.success ? parsed.output : undefined;
  }

  /**
   * A form posted to a URL the ATS answered for it (Ashby's presigned storage URL): another host, so no credential and
   * no pacing go with it. Any 2xx is the upload done; an answer that did not come may hide it.
   */
  public async postToStorage(url: string, form: FormData, signal?: AbortSignal): Promise<void> {
    const where = `POST ${redactUrl(url)}`;
    // The bytes go to https storage, or to the ATS's own origin (its sandbox on one machine): never elsewhere.
    if (!url.startsWith('https://') && URL.parse(url)?.origin !== new URL(this.options.baseUrl).origin)
      throw new AtsError(ATS_ERROR_CODES.malformedResponse, `${where}: the storage URL is not https`);
    const response = await sendHttpRequest(
      { url, method: 'POST', body: form, timeoutMs: this.options.timeoutMs ?? HTTP_DEFAULTS.timeoutMs, signal },
      this.fetchImpl,
    ).catch((error: unknown) => {
      throw new AtsError(ATS_ERROR_CODES.unavailable, errorMessage(error), { cause: error, mayHaveSucceeded: true });
    });
    if (response.status < 200 || response.status >= 300)
      throw atsErrorForStatus({ status: response.status }, where, errorDetail(response.bodyText), true);
  }

  private target(path: string): string {
    const base = this.options.baseUrl.replace(/\/+$/, '');
    if (!/^https?:\/\//i.test(path)) return base + path;
    // A next-page URL from the ATS: followed only on the ATS's own origin, where the credentials belong.
    if (new URL(path).origin !== new URL(base).origin)
      throw new AtsError(ATS_ERROR_CODES.malformedResponse, `a next page on another origin: ${redactUrl(path)}`);
    return path;
  }

  private send(request: AtsRequest, url: string, authorization: string, isWrite: boolean) {
    return sendHttpRequest(
      {
        url,
        method: request.method,
        headers: {
          ...this.options.headers,
          authorization,
          accept: 'application/json',
          ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: request.form ?? (request.body === undefined ? undefined : JSON.stringify(request.body)),
        timeoutMs: this.options.timeoutMs ?? HTTP_DEFAULTS.timeoutMs,
        signal: request.signal,
      },
      this.fetchImpl,
    ).catch((error: unknown) => {
      throw new AtsError(ATS_ERROR_CODES.unavailable, errorMessage(error), {
        cause: error,
        mayHaveSucceeded: isWrite,
      });
    });
  }

  private async exchange(request: AtsRequest): Promise<{ where: string; body: unknown; headers: Headers }> {
    const url = this.target(request.path);
    const where = `${request.method} ${redactUrl(url)}`;
    const isWrite = request.method !== 'GET' && !request.readOnly && !request.idempotent;
    const unanswered = isWrite || request.ordered === true;
    const now = this.options.now ?? Date.now;
    const gate = this.options.gate;
    let refreshed = false;
    const attempt = async (): Promise<{ where: string; body: unknown; headers: Headers }> => {
      await gate?.beforeCall(where, request.signal);
      let response = await this.send(request, url, await this.options.authorization(false), unanswered);
      gate?.afterAnswer(response.status, response.headers);
      if (response.status === 401 && !refreshed) {
        // An expired or revoked token: authenticate once more (nothing was written with a 401).
        refreshed = true;
        response = await this.send(request, url, await this.options.authorization(true), unanswered);
        gate?.afterAnswer(response.status, response.headers);
      }
      if (response.status < 200 || response.status >= 300) {
        const retryAfter =
          parseRetryAfter(response.headers, now()) ??
          (response.status === 429
            ? (resetWaitMs(this.options.rateHeaders, response.headers, now()) ?? this.options.throttledWaitMs)
            : undefined);
        throw atsErrorForStatus(
          { status: response.status, retryAfterMs: retryAfter },
          where,
          errorDetail(response.bodyText),
          isWrite ||
            (request.ordered === true && (this.options.relayed === true || !answeredByServer(response.status))),
        );
      }
      const body = safeJson(response.bodyText);
      const failure = this.options.failureInBody?.(body);
      if (failure !== undefined)
        throw new AtsError(ATS_ERROR_CODES.invalidRequest, `${where}: ${failure}`, { status: response.status });
      return { where, body, headers: response.headers };
    };
    return withRetry(attempt, this.policy, {
      sleep: this.options.sleep,
      signal: request.signal,
      // A call the pacing kept back waits in the queue for its turn, not in the worker; a write is sent again only
      // when the ATS refused it outright (an idempotent one: when nothing sent may still land).
      shouldRetry: (error) => !(error instanceof AtsError && error.paced) && (!unanswered || !mayHaveSucceeded(error)),
    });
  }
}

/** The wait until the rate-limit reset a 429 announced, where it announced one that can be believed. */
function resetWaitMs(names: RateHeaders | undefined, headers: Headers, now: number): number | undefined {
  const at = announcedResetAt(names, headers, now);
  return at === undefined ? undefined : at - now;
}

export function basicAuth(user: string, password = ''): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
