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
}

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
    });
    const bodyText = await response.text();
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

/** Query strings can carry search keywords (names, e-mails): error messages keep only origin and path. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '<invalid url>';
  }
}
