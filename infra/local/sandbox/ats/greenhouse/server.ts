import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { greenhouseProfile } from '../../../../../shared/ats/greenhouse/profile';
import { errorMessage } from '../../../../../shared/errors';
import { callShape, readBody, sendJson, shapeOf, type Route } from '../../http-kit';
import { controlRoutes, jsonBody, type SandboxOptions } from '../ats-sandbox-kit';
import { recordCall, startEdge } from '../edge';
import type { DeliveryRecord, WebhookTarget } from '../signed-webhooks';
import { GreenhouseAssessments } from './assessments';
import { harvestRoutes } from './routes';
import { GREENHOUSE_SANDBOX_DEFAULTS, GreenhouseRecords, seededState } from './state';
import type { Application, GreenhouseSandboxState, LifecycleInput, StageMove } from './state';
import { GreenhouseWebhooks } from './webhooks';

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
  moveCandidate(input: StageMove & { repeat?: number | undefined }): Promise<DeliveryRecord[]>;
  /** Sends the application's current stage again as a new event (a new Greenhouse-Event-ID). */
  resendStageChange(applicationId: number): Promise<DeliveryRecord>;
  /** Deletes the application's candidate and sends the signed `delete_candidate` webhook, as Greenhouse does. */
  deleteCandidate(applicationId: number): Promise<DeliveryRecord[]>;
  /** Merges the application's candidate into a new record, which takes the applications: `merge_candidate`. */
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

/** The OAuth tokens issued (RFC 6749 client credentials), each acting for the API credential that asked. */
class Tokens {
  private readonly issued = new Map<string, { expiresAt: number; clientId: string }>();

  /** The credential a bearer token acts for, while it lasts: the principal its rate window counts against. */
  public principal(request: IncomingMessage): string | undefined {
    const auth = request.headers.authorization ?? '';
    const issued = this.issued.get(auth.startsWith('Bearer ') ? auth.slice(7) : '');
    return issued && issued.expiresAt >= Date.now() ? issued.clientId : undefined;
  }

  /** `POST /token`: a form body, recorded by its field names; `sub` a user of the organisation the token acts as. */
  public async issue(state: GreenhouseSandboxState, request: IncomingMessage, response: ServerResponse) {
    const { clientId, clientSecret, userIds, tokenTtlSeconds } = GREENHOUSE_SANDBOX_DEFAULTS;
    const form = new URLSearchParams((await readBody(request)).toString('utf8'));
    recordCall(state, shapeOf('POST', '/token', new URL(request.url ?? '/', 'http://x'), Object.fromEntries(form)));
    if (request.headers.authorization !== `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`)
      return sendJson(response, 401, { error: 'invalid_client' });
    if (form.get('grant_type') !== 'client_credentials')
      return sendJson(response, 400, { error: 'unsupported_grant_type' });
    const sub = form.get('sub');
    if (sub !== null && !userIds.includes(sub))
      return sendJson(response, 400, { error: 'invalid_grant', error_description: 'sub is not a user' });
    const [token, expiresAt] = [randomUUID(), Date.now() + tokenTtlSeconds * 1000];
    this.issued.set(token, { expiresAt, clientId });
    // Greenhouse says when the token ends, not how long it lasts (ats-facts, Corrections 2026-11).
    sendJson(response, 200, {
      access_token: token,
      token_type: 'Bearer',
      expires_at: new Date(expiresAt).toISOString(),
    });
  }
}

type Actions = Omit<GreenhouseSandbox, 'url' | 'close' | 'clientId' | 'clientSecret'>;

/** What a recruiter does in Greenhouse, and the webhooks each action sends (the sandbox's methods). */
function recruiter(
  records: GreenhouseRecords,
  webhooks: GreenhouseWebhooks,
  assessments: GreenhouseAssessments,
): Actions {
  const { state } = records;
  return {
    state,
    assessments,
    registerWebhook: async (target) => {
      state.webhooks.push(target);
      return webhooks.ping(target);
    },
    addCandidate: (input) => records.addCandidate(input),
    addApplication: (input) => records.addApplication(input),
    moveCandidate: (input) => webhooks.stageChange(records.move(input), input.repeat),
    resendStageChange: (id) => webhooks.resendStageChange(id),
    deleteCandidate: (id) => webhooks.candidateDeleted(id),
    mergeCandidate: (id) => webhooks.candidateMerged(id),
    anonymizeCandidate: (id) => webhooks.candidateAnonymized(id),
    changeLifecycle: async (input) => {
      const event = records.changeLifecycle(input.application_id, input.action, input.reason);
      if (input.deliver === false) return [];
      return webhooks.lifecycleChange(records.application(input.application_id), event, input.repeat);
    },
  };
}

/** The sandbox's own routes (`/_sandbox/…`): a recruiter's actions, "Send Test", the tests Greenhouse keeps. */
function controls(actions: Actions): Route[] {
  const deliveries = (act: (id: number) => Promise<DeliveryRecord[]>) => async (body: Record<string, unknown>) => ({
    deliveries: await act(Number(body.application_id)),
  });
  const sendTest: Route = {
    method: 'POST',
    pattern: '/_sandbox/send-test',
    handle: async ({ request, response }) => {
      const input = (await jsonBody(request)) as { application_id: number; partner_test_id: string };
      const sent = await actions.assessments.sendTest(input).catch((error: unknown) => new Error(errorMessage(error)));
      sendJson(response, sent instanceof Error ? 502 : 200, sent instanceof Error ? { error: sent.message } : sent);
    },
  };
  const tests: Route = {
    method: 'GET',
    pattern: '/_sandbox/take-home-tests',
    handle: ({ response }) => sendJson(response, 200, actions.assessments.tests),
  };
  return [
    sendTest,
    tests,
    ...controlRoutes(actions.state, {
      candidates: (body) => actions.addCandidate(body as never),
      move: async (body) => ({ deliveries: await actions.moveCandidate(body as never) }),
      'delete-candidate': deliveries(actions.deleteCandidate),
      'merge-candidate': deliveries(actions.mergeCandidate),
      'anonymize-candidate': deliveries(actions.anonymizeCandidate),
      lifecycle: async (body) => ({
        deliveries: await actions.changeLifecycle({
          application_id: Number(body.application_id ?? body.applicationId),
          action: body.action as LifecycleInput['action'],
          reason: typeof body.reason === 'string' ? body.reason : undefined,
          deliver: body.deliver !== false,
        }),
      }),
      faults: (body) => Object.assign(actions.state.faults, body),
    }),
  ];
}

/**
 * A stand-in of Greenhouse Harvest v3 and its webhooks, on the kit's edge: the organisation's records (state.ts),
 * the API as a table of routes (routes.ts), the signed webhooks (webhooks.ts); the OAuth token here.
 */
export async function startGreenhouseSandbox(options: SandboxOptions = {}): Promise<GreenhouseSandbox> {
  const records = new GreenhouseRecords(seededState());
  const { state } = records;
  const webhooks = new GreenhouseWebhooks(records, (options.seed ?? 7) + 1);
  const tokens = new Tokens();
  let baseUrl = '';
  const assessments = new GreenhouseAssessments(records, () => baseUrl);
  const actions = recruiter(records, webhooks, assessments);
  const patch: Route = {
    method: 'PATCH',
    pattern: '/integrations/testing_partners/take_home_tests/:id',
    handle: ({ request, response, url, params }) => {
      recordCall(state, callShape(request, '/integrations/testing_partners/take_home_tests/:id', url));
      return assessments.patchCompleted(request, response, Number(params.id));
    },
  };
  const token: Route = { method: 'POST', pattern: '/token', handle: (c) => tokens.issue(state, c.request, c.response) };
  const moved = (id: number, stageId: number) => void actions.moveCandidate({ application_id: id, stage_id: stageId });
  const running = await startEdge(
    {
      ...{
        profile: greenhouseProfile,
        port: options.port ?? GREENHOUSE_SANDBOX_DEFAULTS.port,
        seed: options.seed ?? 7,
      },
      // Counted per API credential (the client id), whatever token it was given, each window from its first request.
      rate: options,
      authenticate: (request) => tokens.principal(request),
      unauthorized: (response) => sendJson(response, 401, { message: 'Invalid or expired access token' }),
      api: harvestRoutes(records, moved),
      open: [token, patch, ...controls(actions)],
      // Harvest v1/v2 are out of service and took another credential: a v3 token is refused there.
      unrouted: ({ response, url }, record) => {
        if (!/^\/v[12]\//.test(url.pathname)) return sendJson(response, 404, { message: `No route ${url.pathname}` });
        record(url.pathname);
        sendJson(response, 401, { message: 'Harvest v1 and v2 do not accept this credential' });
      },
    },
    state,
  );
  baseUrl = running.url;
  const { clientId, clientSecret } = GREENHOUSE_SANDBOX_DEFAULTS;
  return { ...actions, url: running.url, clientId, clientSecret, close: running.close };
}
