import type { IncomingMessage, ServerResponse } from 'node:http';
import type { VendorProfile } from '../../../../shared/ats/profile';
import { answerFailure, callShape, listen, matchRoute, seededRandom, sendJson } from '../http-kit';
import type { CallShape, Route, RouteContext, RunningServer } from '../http-kit';
import { addLatency, answeredByFault, type AtsFaults } from './faults';
import { limiterOf, type RateAnswer, type RateOptions } from './limits';

/** What every ATS sandbox counts of the API calls it served. */
export interface EdgeState {
  requests: Record<string, number>;
  /** The distinct shapes of the API requests served (infra/local/sandbox/http-kit.ts, `callShape`), by key. */
  calls: Record<string, CallShape>;
  /** 429s answered because the caller's window was spent (injected 429s are not counted). */
  throttled: number;
  faults: AtsFaults;
}

/** The API's door as a vendor keeps it: who is let in, and how it refuses. */
export interface EdgeSpec {
  profile: VendorProfile;
  port: number;
  seed: number;
  rate: RateOptions;
  /** The window where the profile publishes none (Ashby). */
  unpublishedRate?: { limit: number; windowMs: number };
  /** The principal the rate limit counts against, or undefined for 401. */
  authenticate(request: IncomingMessage): string | undefined;
  unauthorized(response: ServerResponse): void;
  /** Answers a query parameter the route does not document, as the ATS refuses one. */
  unknownParameter?(response: ServerResponse, name: string): void;
  /** The query parameters of a route that lists none (Ashby's RPC routes take theirs in the body: none). */
  defaultQuery?: readonly string[];
  api: Route[];
  /** The sandbox's own routes (`/_sandbox/…`) and the vendor's routes outside the API's gate (an OAuth token). */
  open: Route[];
  /** A request no route serves (Greenhouse refuses its retired API versions): 404 unless it says. */
  unrouted?(context: RouteContext, record: (route: string) => void): void;
}

/** The 429 body a profile describes (`{message}`, `{code: "TooManyRequests", message}`), its bare fields saying why. */
export function throttledBody(profile: VendorProfile): unknown {
  const text = profile.throttled.body
    .replace(/([{,]\s*)(\w+)(?=\s*[,}])/g, '$1$2: "Too many requests"')
    .replace(/([{,]\s*)(\w+):/g, '$1"$2":');
  return JSON.parse(text);
}

/** The rate headers a profile declares, announcing `window`; none where the vendor sends none. */
function rateHeaders(profile: VendorProfile, limit: number, window: RateAnswer): Record<string, string> {
  const names = profile.rateHeaders;
  if (!names) return {};
  return {
    [names.limit]: String(limit),
    [names.remaining]: String(window.remaining),
    [names.reset]: String(Math.ceil((Date.now() + window.resetMs) / 1000)),
  };
}

/** A 429 as the profile has it, asking for `waitMs`: Retry-After where the vendor sends it, the window spent. */
function answerThrottled(response: ServerResponse, profile: VendorProfile, limit: number, waitMs: number): void {
  const headers = rateHeaders(profile, limit, { allowed: false, remaining: 0, resetMs: waitMs });
  if (profile.throttled.retryAfter) headers['retry-after'] = String(Math.ceil(waitMs / 1000));
  sendJson(response, 429, throttledBody(profile), headers);
}

/** The route's answer, or the vendor's refusal of a query parameter the route does not document. */
async function answer(spec: EdgeSpec, context: RouteContext, route: Route): Promise<void> {
  const documented = route.query ?? spec.defaultQuery;
  const unknown = documented && [...context.url.searchParams.keys()].find((key) => !documented.includes(key));
  if (unknown && spec.unknownParameter) return spec.unknownParameter(context.response, unknown);
  await route.handle(context);
}

/** Records the shape of a call served (the API's and the vendor's routes outside its gate). */
export function recordCall(state: EdgeState, shape: CallShape): void {
  state.calls[JSON.stringify(shape)] = shape;
}

/**
 * An ATS's API on 127.0.0.1: every API call is counted, delayed by injected latency, authenticated, let in by the
 * limiter its profile declares (announcing the window in the profile's headers, refusing with its 429), and
 * answered by an injected fault or by its route, which refuses a query parameter it does not document.
 */
export async function startEdge(spec: EdgeSpec, state: EdgeState): Promise<RunningServer> {
  const { limit, limiter } = limiterOf(spec.profile.rate, spec.rate, spec.unpublishedRate);
  const random = seededRandom(spec.seed);

  async function gate(context: RouteContext, route: Route): Promise<void> {
    const name = `${context.request.method} ${route.pattern}`;
    state.requests[name] = (state.requests[name] ?? 0) + 1;
    await addLatency(state.faults);
    const principal = spec.authenticate(context.request);
    if (!principal) return spec.unauthorized(context.response);
    const roll = random();
    if (!admitted(context.response, principal, roll)) return;
    if (await answeredByFault(context.response, state.faults, { roll, random }, name)) return;
    try {
      await answer(spec, context, route);
    } finally {
      recordCall(state, callShape(context.request, route.pattern, context.url));
    }
  }

  /** Counts the call against the principal's window, announced on the answer; a 429 where it is spent. */
  function admitted(response: ServerResponse, principal: string, roll: number): boolean {
    const window = limiter.take(principal);
    for (const [header, value] of Object.entries(rateHeaders(spec.profile, limit, window)))
      response.setHeader(header, value);
    if (!window.allowed) state.throttled++;
    // An injected 429 asks for a one-second wait; only a spent window announces its whole reset.
    const waitMs = !window.allowed ? Math.max(1000, window.resetMs) : roll < state.faults.rate429 ? 1000 : 0;
    if (waitMs) answerThrottled(response, spec.profile, limit, waitMs);
    return !waitMs;
  }

  let baseUrl = '';
  const running = await listen((request, response) => {
    const url = new URL(request.url ?? '/', baseUrl);
    const method = request.method ?? 'GET';
    const open = matchRoute(spec.open, method, url.pathname);
    const api = open ? undefined : matchRoute(spec.api, method, url.pathname);
    const context = { request, response, url, params: (open ?? api)?.params ?? {} };
    const record = (route: string) => recordCall(state, callShape(request, route, url));
    const work = open
      ? open.route.handle(context)
      : api
        ? gate(context, api.route)
        : spec.unrouted
          ? spec.unrouted(context, record)
          : sendJson(response, 404, { message: `No route ${method} ${url.pathname}` });
    Promise.resolve(work).catch((error: unknown) => {
      // A body that is not JSON is the client's mistake, as a real API would say.
      if (error instanceof SyntaxError && !response.headersSent) sendJson(response, 400, { message: error.message });
      else answerFailure(request, response, error);
    });
  }, spec.port);
  baseUrl = running.url;
  return running;
}
