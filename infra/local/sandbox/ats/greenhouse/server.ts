import { greenhouseProfile } from '../../../../../shared/ats/greenhouse/profile';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerFailure, callShape, listen, matchRoute, readBody, seededRandom, sendJson } from '../../http-kit';
import type { Route } from '../../http-kit';
import { addLatency, answeredByFault } from '../faults';
import { FixedWindowLimiter, type DeliveryRecord, type WebhookTarget } from '../signed-webhooks';
import { controlRoutes, harvestRoutes } from './routes';
import { GreenhouseWebhooks } from './webhooks';
import { GreenhouseAssessments } from './assessments';
import {
  GREENHOUSE_SANDBOX_DEFAULTS,
  GreenhouseRecords,
  seededState,
  type Application,
  type GreenhouseSandboxState,
  type LifecycleInput,
  type StageMove,
} from './state';

export { GREENHOUSE_SANDBOX_DEFAULTS, type GreenhouseSandboxState } from './state';

export interface GreenhouseSandbox {
  url: string;
  clientId: string;
  clientSecret: string;
  state: GreenhouseSandboxState;
  registerWebhook(target: WebhookTarget): Promise<DeliveryRecord>;
  addCandidate(input: { first_name: string; last_name: string; email: string; job_id: number }): Application;
  /** A further application of an existing candidate, to another job (a candidate applies more than once). */
  addApplication(input: { candidate_id: number; job_id: number }): Application;
  /** Moves the application and sends the signed `candidate_stage_change` webhook `repeat` times (same event id). */
  moveCandidate(input: StageMove & { repeat?: number }): Promise<DeliveryRecord[]>;
  /** Sends the application's current stage again as a new event (a new Greenhouse-Event-ID). */
  resendStageChange(applicationId: number): Promise<DeliveryRecord>;
  /** Deletes the application's candidate and sends the signed `delete_candidate` webhook, as Greenhouse does. */
  deleteCandidate(applicationId: number): Promise<DeliveryRecord[]>;
  /**
   * Merges the application's candidate into a new record: the applications move to it, and `merge_candidate`
   * is sent (instead of `delete_candidate`, as when both webhooks are configured).
   */
  mergeCandidate(applicationId: number): Promise<DeliveryRecord[]>;
  /** Anonymises the application's candidate (name and e-mail) and sends `candidate_anonymized`. */
  anonymizeCandidate(applicationId: number): Promise<DeliveryRecord[]>;
  /**
   * Rejects, withdraws (a rejection whose reason type is "They rejected us"), hires or unrejects (unhires, when hired)
   * the application as a recruiter would, and sends `reject_candidate`, `hire_candidate`, `unreject_candidate` or
   * `unhire_candidate`, `repeat` times with one event id (`deliver: false`: the webhook is lost).
   */
  changeLifecycle(input: LifecycleInput): Promise<DeliveryRecord[]>;
  /** Greenhouse's side of the Assessment Partner API: the partner's registration, "Send Test", the PATCH. */
  assessments: GreenhouseAssessments;
  close(): Promise<void>;
}

/**
 * A stand-in of Greenhouse Harvest v3 and its webhooks, on 127.0.0.1: the organisation's records (state.ts), the API
 * as a table of routes (routes.ts), the signed webhooks (webhooks.ts), and here what every API call passes first: the
 * OAuth token, the rate limit per API credential, injected faults.
 */
export async function startGreenhouseSandbox(
  options: { port?: number; seed?: number; rateLimit?: number | undefined; rateWindowMs?: number | undefined } = {},
): Promise<GreenhouseSandbox> {
  const state = seededState();
  const records = new GreenhouseRecords(state);
  const webhooks = new GreenhouseWebhooks(records, (options.seed ?? 7) + 1);
  const tokens = new Map<string, { expiresAt: number; clientId: string }>();
  const rateLimit = options.rateLimit ?? GREENHOUSE_SANDBOX_DEFAULTS.rateLimit;
  // Fixed windows counted per API credential (the client id), whatever token it was given. Whether they are fixed on
  // the clock or start at a window's first request is not documented: they start at the first request here.
  const limiter = new FixedWindowLimiter(rateLimit, options.rateWindowMs ?? GREENHOUSE_SANDBOX_DEFAULTS.rateWindowMs);
  const random = seededRandom(options.seed ?? 7);
  let baseUrl = '';
  const assessments = new GreenhouseAssessments(records, () => baseUrl);

  const moveCandidate = (input: Parameters<GreenhouseSandbox['moveCandidate']>[0]) =>
    webhooks.stageChange(records.move(input), input.repeat);
  const actions = {
    state,
    addCandidate: (input: Parameters<GreenhouseRecords['addCandidate']>[0]) => records.addCandidate(input),
    moveCandidate,
    deleteCandidate: (id: number) => webhooks.candidateDeleted(id),
    mergeCandidate: (id: number) => webhooks.candidateMerged(id),
    anonymizeCandidate: (id: number) => webhooks.candidateAnonymized(id),
    changeLifecycle: async (input: LifecycleInput) => {
      const event = records.changeLifecycle(input.application_id, input.action, input.reason);
      if (input.deliver === false) return [];
      return webhooks.lifecycleChange(records.application(input.application_id), event, input.repeat);
    },
    assessments,
  };
  const api = harvestRoutes(
    records,
    () => baseUrl,
    (applicationId, stageId) => void moveCandidate({ application_id: applicationId, stage_id: stageId }),
  );
  const control = controlRoutes(actions);

  async function handleApi(
    request: IncomingMessage,
    response: ServerResponse,
    route: Route,
    params: Record<string, string>,
    url: URL,
  ): Promise<void> {
    const name = `${request.method} ${route.pattern}`;
    state.requests[name] = (state.requests[name] ?? 0) + 1;
    await addLatency(state.faults);
    const auth = request.headers.authorization ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    const issued = tokens.get(token);
    if (!issued || issued.expiresAt < Date.now())
      return sendJson(response, 401, { message: 'Invalid or expired access token' });
    const limit = limiter.take(issued.clientId);
    const names = greenhouseProfile.rateHeaders;
    const rateHeaders = {
      [names.limit]: String(rateLimit),
      [names.remaining]: String(limit.remaining),
      [names.reset]: String(Math.ceil((Date.now() + limit.resetMs) / 1000)),
    };
    const roll = random();
    if (!limit.allowed || roll < state.faults.rate429) {
      // An injected 429 asks for a one-second wait; only a spent window announces its whole reset.
      const retryAfter = limit.allowed ? 1 : Math.max(1, Math.ceil(limit.resetMs / 1000));
      if (!limit.allowed) state.throttled++;
      return sendJson(
        response,
        429,
        { message: 'Too many requests' },
        { ...rateHeaders, 'retry-after': String(retryAfter) },
      );
    }
    if (await answeredByFault(response, state.faults, roll, random, name)) return;
    for (const [name, value] of Object.entries(rateHeaders)) response.setHeader(name, value);
    try {
      await route.handle({ request, response, params, url });
    } finally {
      const shape = callShape(request, route.pattern, url);
      state.calls[JSON.stringify(shape)] = shape;
    }
  }

  async function issueToken(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { clientId, clientSecret } = GREENHOUSE_SANDBOX_DEFAULTS;
    const expected = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    const form = new URLSearchParams((await readBody(request)).toString());
    if (request.headers.authorization !== expected) return sendJson(response, 401, { error: 'invalid_client' });
    if (form.get('grant_type') !== 'client_credentials')
      return sendJson(response, 400, { error: 'unsupported_grant_type' });
    // A token acts as `sub` when one is given: a user of the organisation.
    const sub = form.get('sub');
    if (sub !== null && !GREENHOUSE_SANDBOX_DEFAULTS.userIds.includes(sub))
      return sendJson(response, 400, { error: 'invalid_grant', error_description: 'sub is not a user' });
    const token = randomUUID();
    const expiresAt = Date.now() + GREENHOUSE_SANDBOX_DEFAULTS.tokenTtlSeconds * 1000;
    tokens.set(token, { expiresAt, clientId });
    // Greenhouse says when the token ends, not how long it lasts (ats-facts, Corrections 2026-11).
    sendJson(response, 200, {
      access_token: token,
      token_type: 'Bearer',
      expires_at: new Date(expiresAt).toISOString(),
    });
  }

  const running = await listen((request, response) => {
    const url = new URL(request.url ?? '/', baseUrl);
    const method = request.method ?? 'GET';
    const work = (async () => {
      if (method === 'POST' && url.pathname === '/token') {
        // A form body (RFC 6749 client credentials): its field names are recorded as a JSON body's would be.
        const form = new URLSearchParams((await readBody(request)).toString('utf8'));
        const shape = {
          method,
          route: '/token',
          query: [...url.searchParams.keys()],
          body: [...new Set(form.keys())].sort(),
        };
        state.calls[JSON.stringify(shape)] = shape;
        return issueToken(request, response);
      }
      // Harvest v1/v2 are out of service and took another credential: a v3 token is refused there.
      if (/^\/v[12]\//.test(url.pathname)) {
        const shape = callShape(request, url.pathname, url);
        state.calls[JSON.stringify(shape)] = shape;
        return sendJson(response, 401, { message: 'Harvest v1 and v2 do not accept this credential' });
      }
      const patched = /^\/integrations\/testing_partners\/take_home_tests\/(\d+)$/.exec(url.pathname);
      if (method === 'PATCH' && patched) {
        const shape = callShape(request, '/integrations/testing_partners/take_home_tests/:id', url);
        state.calls[JSON.stringify(shape)] = shape;
        return assessments.patchCompleted(request, response, Number(patched[1]));
      }
      const controlMatch = matchRoute(control, method, url.pathname);
      if (controlMatch) return controlMatch.route.handle({ request, response, params: controlMatch.params, url });
      const apiMatch = matchRoute(api, method, url.pathname);
      if (apiMatch) return handleApi(request, response, apiMatch.route, apiMatch.params, url);
      sendJson(response, 404, { message: `No route ${method} ${url.pathname}` });
    })();
    work.catch((error: unknown) => answerFailure(request, response, error));
  }, options.port ?? GREENHOUSE_SANDBOX_DEFAULTS.port);
  baseUrl = running.url;

  return {
    url: running.url,
    clientId: GREENHOUSE_SANDBOX_DEFAULTS.clientId,
    clientSecret: GREENHOUSE_SANDBOX_DEFAULTS.clientSecret,
    state,
    async registerWebhook(target) {
      state.webhooks.push(target);
      return webhooks.ping(target.url);
    },
    addCandidate: actions.addCandidate,
    addApplication: (input) => records.addApplication(input),
    moveCandidate,
    resendStageChange: (applicationId) => webhooks.resendStageChange(applicationId),
    deleteCandidate: actions.deleteCandidate,
    mergeCandidate: actions.mergeCandidate,
    anonymizeCandidate: actions.anonymizeCandidate,
    changeLifecycle: actions.changeLifecycle,
    assessments,
    close: running.close,
  };
}
