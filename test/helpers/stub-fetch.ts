import { createAtsAdapter } from '../../shared/ats';
import { parseConnections } from '../../shared/config';
import { atsOfPath, undocumentedCalls } from '../../infra/local/sandbox/documented-routes';
import { shapeOf } from '../../infra/local/sandbox/http-kit';
import { connectionDocument } from './connections';
import { recordUndocumented } from './documented-calls';

/** One request as the stub saw it. */
export interface StubCall {
  method: string;
  url: URL;
  body: unknown;
}

/** What the stub answers: a status, a JSON body (or raw text, or nothing), headers. */
export interface StubAnswer {
  status: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

/**
 * A `fetch` that answers as a vendor documents, without a network: `answer` sees each request and says what the
 * vendor would reply; every call is recorded, so a test can say which routes were (and were not) used. A call to an
 * ATS's API is held against the routes its vendor documents, and one outside them fails the test
 * (test/setup/documented-calls.ts).
 */
export function stubFetch(answer: (call: StubCall) => StubAnswer): { fetch: typeof fetch; calls: StubCall[] } {
  const calls: StubCall[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const text = typeof init?.body === 'string' ? init.body : undefined;
    let body: unknown = text;
    try {
      body = text === undefined ? undefined : JSON.parse(text);
    } catch {
      // A form body (an OAuth token request) stays text.
    }
    const call: StubCall = { method: init?.method ?? 'GET', url: new URL(String(input)), body };
    calls.push(call);
    holdAgainstDocumentedRoutes(call);
    const reply = answer(call);
    const payload = reply.json === undefined ? (reply.text ?? null) : JSON.stringify(reply.json);
    const noBody = reply.status === 204 || payload === null;
    return new Response(noBody ? null : payload, {
      status: reply.status,
      headers: { ...(reply.json === undefined ? {} : { 'content-type': 'application/json' }), ...reply.headers },
    });
  }) as typeof fetch;
  return { fetch: fetchImpl, calls };
}

/** `METHOD /path?query` of a call, for routing and for asserting on. */
export const route = (call: StubCall): string => `${call.method} ${call.url.pathname}${call.url.search}`;

/** A Greenhouse adapter of the test connection whose calls go to `fetch` (its token from `/token` of the stub). */
export function stubbedGreenhouse(fetchImpl: typeof fetch) {
  return createAtsAdapter(
    parseConnections(connectionDocument({ atsAuthUrl: 'https://auth.example.test/token' }))[0]!,
    {
      interviewApiKey: 'k',
      interviewWebhookToken: 't'.repeat(32),
      atsWebhookSecret: 'whsec_test_0123456789',
      atsClientId: 'id',
      atsClientSecret: 'secret',
    },
    { fetch: fetchImpl },
  );
}

function holdAgainstDocumentedRoutes(call: StubCall): void {
  const kind = atsOfPath(call.url.pathname);
  if (kind) recordUndocumented(undocumentedCalls(kind, [shapeOf(call.method, call.url.pathname, call.url, call.body)]));
}
