import type { IncomingMessage, ServerResponse } from 'node:http';
import type { VendorProfile } from '../../../../shared/ats/profile';
import { documentedQuery } from '../documented-routes';
import { answerFailure, callShape, receiveWholeBody, seededRandom, sendJson, serveRoutes, sleep } from '../http-kit';
import type { CallShape, Route, RouteContext, RunningServer } from '../http-kit';
import { limiterOf, type RateAnswer, type RateOptions } from './limits';

/**
 * What every ATS sandbox counts of the API calls it served (`throttled`: 429s of a spent window), and its injected
 * faults: shares of calls answered 429, 500, 403 (a key without the permission) or slowly, of recruiters' stage
 * changes whose webhook is never sent, routes the key was not granted (always 403), and the next calls of a route
 * whose answer is lost after the write (`loseAnswers`: route → count; the connection closes instead of answering).
 */
export const edgeState = () => ({
  ...{ requests: {} as Record<string, number>, calls: {} as Record<string, CallShape>, throttled: 0 },
  faults: {
    ...{ rate429: 0, rate500: 0, rate403: 0, latencyMs: 0, slowRate: 0, slowMs: 0, dropStageChangeRate: 0 },
    forbiddenRoutes: undefined as string[] | undefined,
    loseAnswers: {} as Record<string, number>,
  },
});
export type EdgeState = ReturnType<typeof edgeState>;
export type AtsFaults = EdgeState['faults'];
/** What the tests read of a sandbox's edge (requests per route, faults included), and the faults they set. */
export const edgeReadings = (state: EdgeState) => ({
  setFaults: (faults: Partial<AtsFaults>) => void Object.assign(state.faults, faults),
  requests: () => state.requests,
  calls: () => Object.values(state.calls),
  throttled: () => state.throttled,
});

/** What a route refuses by throwing it: answered with its status and the vendor's body. */
export class Refusal extends Error {
  public constructor(
    public readonly status: number,
    public readonly body: unknown,
  ) {
    super(`refused with ${status}`);
  }
}

/** The API's door as a vendor keeps it: who is let in, and how it refuses. */
export interface EdgeSpec {
  profile: VendorProfile;
  port: number;
  seed: number;
  rate: RateOptions;
  /** The principal the rate limit counts against; none is refused with `unauthorized`. */
  authenticate(request: IncomingMessage): string | undefined;
  unauthorized: Refusal;
  /** The refusal of a query parameter the vendor does not document for the route (documented-routes.json). */
  unknownParameter?(name: string): Refusal;
  api: Route[];
  /** The sandbox's own routes (`/_sandbox/…`) and the vendor's routes outside the API's gate (an OAuth token). */
  open: Route[];
  /** A request no route serves (Greenhouse refuses its retired API versions): 404 unless it says. */
  unrouted?(context: RouteContext, record: (route: string) => void): void;
}

/** The 429 body a profile describes (`{message}`, `{code: "TooManyRequests", message}`), its bare fields saying why. */
function throttledBody(profile: VendorProfile): unknown {
  const text = profile.throttled.body
    .replace(/([{,]\s*)(\w+)(?=\s*[,}])/g, '$1$2: "Too many requests"')
    .replace(/([{,]\s*)(\w+):/g, '$1"$2":');
  return JSON.parse(text);
}

/** The rate headers a profile declares, announcing `window`; none where the vendor sends none. */
function rateHeaders(profile: VendorProfile, limit: number, window: RateAnswer): Record<string, string> {
  const names = profile.rateHeaders;
  if (!names) return {};
  const reset = String(Math.ceil((Date.now() + window.resetMs) / 1000));
  return { [names.limit]: String(limit), [names.remaining]: String(window.remaining), [names.reset]: reset };
}

/** The call's roll (its 429 or 500) and the generator of its other faults. */
type Draw = { roll: number; random: () => number };
const FORBIDDEN = new Refusal(403, { message: 'This API key lacks the permission for this endpoint' });

/**
 * After the 429 check (`roll` decided it): a route the key was not granted, an injected 500, 403 or slow answer, or an
 * answer lost after the write (the route does its work; the connection closes instead of answering).
 */
async function injectFaults(faults: AtsFaults, route: string, context: RouteContext, draw: Draw) {
  if (faults.forbiddenRoutes?.includes(route)) throw FORBIDDEN;
  if (draw.roll < faults.rate429 + faults.rate500) throw new Refusal(500, { message: 'Internal error' });
  if (faults.rate403 && draw.random() < faults.rate403) throw FORBIDDEN;
  if (draw.random() < faults.slowRate) {
    await receiveWholeBody(context.request);
    await sleep(faults.slowMs);
  }
  if ((faults.loseAnswers[route] ?? 0) <= 0) return;
  faults.loseAnswers[route] = (faults.loseAnswers[route] ?? 1) - 1;
  context.response.end = (() => context.request.socket.destroy()) as never;
}

/** A refusal as the vendor answers it; a body that is not JSON is the client's mistake, as a real API would say. */
function answerError(request: IncomingMessage, response: ServerResponse, error: unknown): void {
  const refusal = error instanceof SyntaxError ? new Refusal(400, { message: error.message }) : error;
  if (refusal instanceof Refusal && !response.headersSent) sendJson(response, refusal.status, refusal.body);
  else answerFailure(request, response, error);
}

/** Records the shape of a call served (the API's and the vendor's routes outside its gate). */
export function recordCall(state: EdgeState, shape: CallShape): void {
  state.calls[JSON.stringify(shape)] = shape;
}

/**
 * An ATS's API on 127.0.0.1: each call counted, delayed by injected latency, authenticated, let in by its profile's
 * limiter (its headers, its 429), then answered by an injected fault or its route.
 */
export async function startEdge(spec: EdgeSpec, state: EdgeState): Promise<RunningServer> {
  const { limit, limiter } = limiterOf(spec.profile.rate, spec.rate);
  const random = seededRandom(spec.seed);

  async function gate(context: RouteContext, route: Route): Promise<void> {
    const name = `${context.request.method} ${route.pattern}`;
    state.requests[name] = (state.requests[name] ?? 0) + 1;
    if (state.faults.latencyMs) await sleep(state.faults.latencyMs);
    const principal = spec.authenticate(context.request);
    if (!principal) throw spec.unauthorized;
    const roll = random();
    admit(context.response, principal, roll);
    await injectFaults(state.faults, name, context, { roll, random });
    try {
      const documented = spec.unknownParameter && documentedQuery(spec.profile.kind, route.method, route.pattern);
      const unknown = documented && [...context.url.searchParams.keys()].find((key) => !documented.includes(key));
      if (unknown) throw spec.unknownParameter?.(unknown);
      await route.handle(context);
    } finally {
      recordCall(state, callShape(context.request, route.pattern, context.url));
    }
  }

  /** Counts the call against the principal's window, announced on the answer; a 429 where it is spent. */
  function admit(response: ServerResponse, principal: string, roll: number): void {
    const window = limiter.take(principal);
    const announce = (headers: Record<string, string>) => {
      for (const [header, value] of Object.entries(headers)) response.setHeader(header, value);
    };
    announce(rateHeaders(spec.profile, limit, window));
    if (!window.allowed) state.throttled++;
    // An injected 429 asks for a one-second wait; only a spent window announces its whole reset.
    const waitMs = !window.allowed ? Math.max(1000, window.resetMs) : roll < state.faults.rate429 ? 1000 : 0;
    if (!waitMs) return;
    announce(rateHeaders(spec.profile, limit, { allowed: false, remaining: 0, resetMs: waitMs }));
    if (spec.profile.throttled.retryAfter) announce({ 'retry-after': String(Math.ceil(waitMs / 1000)) });
    throw new Refusal(429, throttledBody(spec.profile));
  }

  const unrouted = (context: RouteContext) => {
    const { request, response, url } = context;
    if (spec.unrouted) return spec.unrouted(context, (route) => recordCall(state, callShape(request, route, url)));
    sendJson(response, 404, { message: `No route ${request.method} ${url.pathname}` });
  };
  const failed = ({ request, response }: RouteContext, error: unknown) => answerError(request, response, error);
  return serveRoutes({ open: spec.open, api: spec.api, gate, unrouted, failed }, spec.port);
}
