import { deadlinePassed } from './deadline';
import { HttpTransportError } from './errors';
import { errorMessage } from '../errors';

export interface HttpRequest {
  url: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  /** JSON or text; a multipart form (an upload) sets its own content type. */
  body?: string | FormData;
  timeoutMs: number;
  /** The caller's deadline (e.g. shortly before the Lambda's); aborting it ends the call and any retries. */
  signal?: AbortSignal;
  /** `manual`: a redirect is answered as it came (a 3xx), not followed; a credential then goes nowhere else. */
  redirect?: 'manual';
}

/**
 * The most of an answer's body that is read, the rest cancelled: an ATS's page is far smaller than the first; an
 * error's body only says what went wrong. A server that answers without end cannot fill the worker's memory.
 */
export const BODY_LIMITS = { ok: 32 * 1024 * 1024, error: 64 * 1024 } as const;

export interface HttpResponse {
  status: number;
  headers: Headers;
  bodyText: string;
}

/** One HTTP exchange with a timeout; transport failures become HttpTransportError, statuses are returned. */
export async function sendHttpRequest(request: HttpRequest, fetchImpl: typeof fetch = fetch): Promise<HttpResponse> {
  // Nothing is sent past the caller's deadline, even when a starved event loop has not yet run its timer.
  if (deadlinePassed(request.signal))
    throw new HttpTransportError('aborted', `${request.method} ${redactUrl(request.url)} not sent: deadline passed`);
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  try {
    const response = await fetchImpl(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal,
      ...(request.redirect ? { redirect: request.redirect } : {}),
    });
    const bodyText = await readBody(response, response.ok ? BODY_LIMITS.ok : BODY_LIMITS.error);
    return { status: response.status, headers: response.headers, bodyText };
  } catch (error) {
    if (request.signal?.aborted) {
      throw new HttpTransportError('aborted', `${request.method} ${redactUrl(request.url)} aborted by the caller`, {
        cause: error,
      });
    }
    if (timeout.aborted) {
      throw new HttpTransportError(
        'timeout',
        `${request.method} ${redactUrl(request.url)} timed out after ${request.timeoutMs} ms`,
        { cause: error },
      );
    }
    throw new HttpTransportError(
      'network',
      `${request.method} ${redactUrl(request.url)} failed: ${errorMessage(error)}`,
      { cause: error },
    );
  }
}

/** The body as text, up to `limit` bytes: the rest is not read (the stream is cancelled). */
async function readBody(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Bounded: each read adds bytes until the limit, and the call's timeout aborts the stream.
  while (size < limit) {
    const { done, value } = await reader.read();
    if (done) return new TextDecoder().decode(Buffer.concat(chunks));
    chunks.push(value.subarray(0, limit - size));
    size += Math.min(value.length, limit - size);
  }
  await reader.cancel().catch(() => undefined);
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** Query strings can carry search keywords (names, e-mails): error messages keep only origin and path. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '<invalid url>';
  }
}
