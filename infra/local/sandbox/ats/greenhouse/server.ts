import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { greenhouseProfile } from '../../../../../shared/ats/greenhouse/profile';
import { errorMessage } from '../../../../../shared/errors';
import { FileStore, fileRoutes } from '../../file-store';
import { basicAuth } from '../../../../../shared/ats/ats-http';
import { callShape, json, readBody, route, seededRandom, sendJson, shapeOf } from '../../http-kit';
import { SANDBOX_PORTS, controlRoutes, jsonBody, type Body, type SandboxOptions } from '../ats-sandbox-kit';
import { recordCall, Refusal, startEdge } from '../edge';
import { deliverSigned, sendChange, signDelivery, type ChangeOptions } from '../signed-webhooks';
import type { DeliveryRecord, WebhookTarget } from '../signed-webhooks';
import { GreenhouseAssessments } from './assessments';
import { harvestRoutes, unprocessable } from './routes';
import { greenhouseRecords, GREENHOUSE_SANDBOX_DEFAULTS, type GreenhouseSandboxState } from './state';
import type { Application, GreenhouseRecords, LifecycleInput, StageMove } from './state';

/** Greenhouse unicode-escapes its JSON before signing (webhooks/_introduction.md); re-serialising breaks it. */
const greenhouseJson = (document: unknown) =>
  Buffer.from(JSON.stringify(document).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026'));

/** A webhook's document as Greenhouse signs it (`Signature: sha256 <hex>`, a `Greenhouse-Event-ID` each). */
const signed = (target: WebhookTarget, action: string, payload: unknown) =>
  signDelivery(greenhouseProfile.signature, target, { action, payload }, { event: action, serialize: greenhouseJson });

/** What every application payload carries: its link, the candidate, the job. */
function common(records: GreenhouseRecords, application: Application) {
  const [candidate, job] = [records.candidateOf(application), records.jobOf(application)];
  return {
    url: `https://app.greenhouse.io/people/${candidate.id}?application_id=${application.id}`,
    candidate: { ...candidate, phone_numbers: [], attachments: [], custom_fields: {} },
    jobs: [{ id: job.id, name: job.name, requisition_id: `REQ-${job.id}` }],
    custom_fields: {},
  };
}

/** The application as the stage-change, reject, unreject and unhire webhooks show it (active|rejected|hired). */
function payloadOf(records: GreenhouseRecords, application: Application) {
  const rejected = application.status === 'rejected';
  return {
    ...{ id: application.id, rejected_at: rejected ? (application.rejected_at ?? null) : null, prospect: false },
    ...{ status: application.status, applied_at: new Date().toISOString(), ...common(records, application) },
    rejection_reason: rejected ? (application.rejection_reason ?? null) : null,
    rejection_details: rejected ? { custom_fields: {} } : null,
    current_stage: { ...application.current_stage, interviews: [] },
  };
}

/** "Candidate hired": the application with its accepted offer, no status and no current stage. */
function hiredPayload(records: GreenhouseRecords, application: Application) {
  const [now, id] = [new Date().toISOString(), records.newId()];
  const [day, version] = [now.slice(0, 10), 1];
  const offer = { id, version, created_at: now, sent_at: day, resolved_at: now, starts_at: day, custom_fields: {} };
  return { id: application.id, ...common(records, application), offer };
}

type Send = (action: string, payload: unknown, options?: ChangeOptions) => Promise<DeliveryRecord[]>;

/** A candidate deleted with all their applications, merged into a new record, or anonymised: each webhook. */
function candidateChanges(records: GreenhouseRecords, send: Send) {
  const { state } = records;
  const candidateOf = (applicationId: number) => records.candidateOf(records.application(applicationId));
  return {
    deleteCandidate: (applicationId: number) => {
      const { id, first_name, last_name } = candidateOf(applicationId);
      const deleted_application_ids = state.applications.filter((a) => a.candidate_id === id).map((a) => a.id);
      state.applications = state.applications.filter((a) => a.candidate_id !== id);
      state.candidates = state.candidates.filter((c) => c.id !== id);
      return send('delete_candidate', { person: { id, first_name, last_name, deleted_application_ids } });
    },
    mergeCandidate: (applicationId: number) => {
      const loser = candidateOf(applicationId);
      const winner = { ...loser, id: records.newId() };
      state.candidates = [...state.candidates.filter((c) => c.id !== loser.id), winner];
      for (const a of state.applications) if (a.candidate_id === loser.id) a.candidate_id = winner.id;
      const { id, first_name, last_name } = loser;
      return send('merge_candidate', { person: { id, first_name, last_name, new_candidate_id: winner.id } });
    },
    anonymizeCandidate: (applicationId: number) => {
      const candidate = candidateOf(applicationId);
      Object.assign(candidate, { first_name: 'Anonymized', last_name: String(candidate.id), email_addresses: [] });
      const payload = { candidate_id: candidate.id, anonymized_fields: ['full_name', 'email_addresses'] };
      return send('candidate_anonymized', payload);
    },
  };
}

/** What a recruiter does in Greenhouse, and each action's webhook to the endpoints made for its event ("When"). */
function greenhouseRecruiter(records: GreenhouseRecords, seed: number) {
  const { state } = records;
  const hub = { state, random: seededRandom(seed) };
  const send: Send = (action, payload, options = {}) =>
    sendChange(hub, { action, deliveries: (target) => [signed(target, action, payload)], ...options });
  /** Each application's last stage change, to send again as a new event. */
  const lastStageChange = new Map<number, unknown>();
  return {
    ...{ state, ...candidateChanges(records, send) },
    /** A new endpoint gets a ping (its answer decides whether Greenhouse enables it). */
    registerWebhook: (target: WebhookTarget): Promise<DeliveryRecord> => {
      state.webhooks.push(target);
      const payload = { web_hook_id: state.webhooks.length, endpoint_url: target.url, event: 'candidate_stage_change' };
      return deliverSigned(target, signed(target, 'ping', payload), state.deliveries, 'ping');
    },
    addCandidate: (input: Parameters<GreenhouseRecords['addCandidate']>[0]) => records.addCandidate(input),
    addApplication: (input: { candidate_id: number; job_id: number }) => records.addApplication(input),
    /** Moves the application and sends the signed `candidate_stage_change` `repeat` times (one event id). */
    moveCandidate: (input: StageMove & { repeat?: number | undefined }) => {
      const payload = { application: payloadOf(records, records.move(input)) };
      lastStageChange.set(input.application_id, payload);
      return send('candidate_stage_change', payload, { repeat: input.repeat, droppable: true });
    },
    /** The application's last stage change again, as a new event (a new Greenhouse-Event-ID). */
    resendStageChange: async (applicationId: number) => {
      const payload = lastStageChange.get(applicationId);
      if (!payload) throw new Error(`application ${applicationId} has sent no stage change yet`);
      return (await send('candidate_stage_change', payload))[0] as DeliveryRecord;
    },
    /**
     * A lifecycle action, its event sent `repeat` times with one event id: reject, unreject and unhire carry the
     * application as a stage change does; `hire_candidate` carries no status and no stage but the accepted `offer`.
     */
    changeLifecycle: async ({ application_id, action, reason, deliver, repeat }: LifecycleInput) => {
      const event = records.changeLifecycle(application_id, action, reason);
      if (deliver === false) return [];
      const application = records.application(application_id);
      const shown = event === 'hire_candidate' ? hiredPayload(records, application) : payloadOf(records, application);
      return send(event, { application: shown }, { repeat });
    },
  };
}

/** Greenhouse's side of the Assessment Partner API: the partner's registration, "Send Test", the PATCH. */
type Recruiter = ReturnType<typeof greenhouseRecruiter> & { assessments: GreenhouseAssessments };
export type GreenhouseSandbox = Awaited<ReturnType<typeof startGreenhouseSandbox>>;

/** The OAuth tokens issued (RFC 6749 client credentials), each acting for the API credential that asked. */
function tokens(state: GreenhouseSandboxState) {
  const { clientId, clientSecret, userIds, tokenTtlSeconds } = GREENHOUSE_SANDBOX_DEFAULTS;
  const issued = new Map<string, { expiresAt: number; clientId: string }>();
  /** `POST /token`: a form body, recorded by its field names; `sub` a user of the organisation the token acts as. */
  const refused = (status: number, error: string, error_description?: string) =>
    new Refusal(status, { error, error_description });
  const issue = json('POST /token', async ({ request, url }) => {
    const form = new URLSearchParams((await readBody(request)).toString('utf8'));
    recordCall(state, shapeOf('POST', '/token', url, Object.fromEntries(form)));
    if (request.headers.authorization !== basicAuth(clientId, clientSecret)) throw refused(401, 'invalid_client');
    if (form.get('grant_type') !== 'client_credentials') throw refused(400, 'unsupported_grant_type');
    const sub = form.get('sub');
    if (sub !== null && !userIds.includes(sub)) throw refused(400, 'invalid_grant', 'sub is not a user');
    const [token, expiresAt] = [randomUUID(), Date.now() + tokenTtlSeconds * 1000];
    issued.set(token, { expiresAt, clientId });
    // Greenhouse says when the token ends, not how long it lasts (ats-facts, Corrections 2026-11).
    return { access_token: token, token_type: 'Bearer', expires_at: new Date(expiresAt).toISOString() };
  });
  /** The credential a bearer token acts for, while it lasts: the principal its rate window counts against. */
  const principal = (request: IncomingMessage) => {
    const auth = request.headers.authorization ?? '';
    const known = issued.get(auth.startsWith('Bearer ') ? auth.slice(7) : '');
    return known && known.expiresAt >= Date.now() ? known.clientId : undefined;
  };
  return { issue, principal };
}

/** The sandbox's own routes (`/_sandbox/…`): a recruiter's actions, "Send Test", the tests Greenhouse keeps. */
function controls(sandbox: Recruiter) {
  const { assessments } = sandbox;
  const deliveries = (act: (id: number) => Promise<unknown>) => async (body: Body) => ({
    deliveries: await act(Number(body.application_id)),
  });
  return [
    json('POST /_sandbox/send-test', async ({ request }) => {
      const input = (await jsonBody(request)) as { application_id: number; partner_test_id: string };
      const refused = (error: unknown) => Promise.reject(new Refusal(502, { error: errorMessage(error) }));
      return assessments.sendTest(input).catch(refused);
    }),
    json('GET /_sandbox/take-home-tests', () => assessments.tests),
    ...controlRoutes(sandbox, (body) => ({ application_id: Number(body.application_id ?? body.applicationId) }), {
      'delete-candidate': deliveries(sandbox.deleteCandidate),
      'merge-candidate': deliveries(sandbox.mergeCandidate),
      'anonymize-candidate': deliveries(sandbox.anonymizeCandidate),
    }),
  ];
}

/** A stand-in of Greenhouse Harvest v3 (its records in state.ts, its routes in routes.ts) and its webhooks. */
export async function startGreenhouseSandbox(options: SandboxOptions = {}) {
  const records = greenhouseRecords();
  const { state } = records;
  const { issue, principal } = tokens(state);
  let url = '';
  const seed = options.seed ?? 7;
  const assessments = new GreenhouseAssessments(records, () => url);
  const files = new FileStore(unprocessable('content', 'the file could not be attached'));
  const sandbox = { ...greenhouseRecruiter(records, seed + 1), assessments, files };
  const patch = route('PATCH /integrations/testing_partners/take_home_tests/:id', (context) => {
    recordCall(state, callShape(context.request, '/integrations/testing_partners/take_home_tests/:id', context.url));
    return sandbox.assessments.patchCompleted(context.request, context.response, Number(context.params.id));
  });
  const moved = (id: number, stageId: number) => void sandbox.moveCandidate({ application_id: id, stage_id: stageId });
  const running = await startEdge(
    {
      ...{ profile: greenhouseProfile, port: options.port ?? SANDBOX_PORTS.greenhouse, seed },
      // Counted per API credential (the client id), whatever token it was given, each window from its first request.
      ...{ rate: options, authenticate: principal },
      unauthorized: new Refusal(401, { message: 'Invalid or expired access token' }),
      api: harvestRoutes(records, moved, files),
      open: [issue, patch, ...controls(sandbox), ...fileRoutes(files)],
      // Harvest v1/v2 are out of service and took another credential: a v3 token is refused there.
      unrouted: ({ response, url }, record) => {
        if (!/^\/v[12]\//.test(url.pathname)) return sendJson(response, 404, { message: `No route ${url.pathname}` });
        record(url.pathname);
        sendJson(response, 401, { message: 'Harvest v1 and v2 do not accept this credential' });
      },
    },
    state,
  );
  url = running.url;
  files.origin = url;
  const { clientId, clientSecret } = GREENHOUSE_SANDBOX_DEFAULTS;
  return { ...sandbox, url, clientId, clientSecret, close: running.close };
}
