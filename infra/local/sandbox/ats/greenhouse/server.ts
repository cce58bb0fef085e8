import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { greenhouseProfile } from '../../../../../shared/ats/greenhouse/profile';
import { errorMessage } from '../../../../../shared/errors';
import { basicAuth } from '../../../../../shared/ats/ats-http';
import { callShape, json, readBody, route, sendJson, shapeOf } from '../../http-kit';
import { startAtsSandbox, type KitApplication, type KitChange, type KitContext } from '../ats-sandbox-kit';
import type { AtsSandboxState, Body, KitCandidate, SandboxOptions } from '../ats-sandbox-kit';
import { recordCall, Refusal } from '../edge';
import { sendChange, signDelivery, type DeliveryRecord, type WebhookTarget } from '../signed-webhooks';
import { GreenhouseAssessments } from './assessments';
import { candidateV3, harvestRoutes, unprocessable } from './routes';
import { GREENHOUSE_SANDBOX_DEFAULTS, greenhouseRecords, refuses, SEEDED_JOBS, statusOf } from './state';
import type { GreenhouseRecords } from './state';

/** Greenhouse unicode-escapes its JSON before signing (webhooks/_introduction.md); re-serialising breaks it. */
const greenhouseJson = (document: unknown) =>
  Buffer.from(JSON.stringify(document).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026'));

/** A webhook's document as Greenhouse signs it (`Signature: sha256 <hex>`, a `Greenhouse-Event-ID` each). */
const signed = (target: WebhookTarget, action: string, payload: unknown) =>
  signDelivery(greenhouseProfile.signature, target, { action, payload }, { event: action, serialize: greenhouseJson });

/** What every application payload carries: its link, the candidate, the job. */
function common(kit: KitContext, application: KitApplication) {
  const { candidate, job } = kit.parties(application);
  return {
    url: `https://app.greenhouse.io/people/${candidate.id}?application_id=${application.id}`,
    candidate: { ...candidateV3(candidate), phone_numbers: [], attachments: [], custom_fields: {} },
    jobs: [{ id: Number(job.id), name: job.name, requisition_id: `REQ-${job.id}` }],
    custom_fields: {},
  };
}

/** The application as the stage-change, reject, unreject and unhire webhooks show it (active|rejected|hired). */
function payloadOf(kit: KitContext, records: GreenhouseRecords, application: KitApplication) {
  const rejected = statusOf(application) === 'rejected';
  const stage = kit.stage(application.jobId, application.stageId);
  return {
    ...{ id: Number(application.id), rejected_at: rejected ? (application.exit?.at ?? null) : null, prospect: false },
    ...{ status: statusOf(application), applied_at: new Date().toISOString(), ...common(kit, application) },
    rejection_reason: records.reasonOf(application),
    rejection_details: rejected ? { custom_fields: {} } : null,
    current_stage: { id: Number(application.stageId), name: stage?.name ?? '', interviews: [] },
  };
}

/** "Candidate hired": the application with its accepted offer, no status and no current stage. */
function hiredPayload(kit: KitContext, records: GreenhouseRecords, application: KitApplication) {
  const [now, id] = [new Date().toISOString(), Number(records.newId())];
  const [day, version] = [now.slice(0, 10), 1];
  const offer = { id, version, created_at: now, sent_at: day, resolved_at: now, starts_at: day, custom_fields: {} };
  return { id: Number(application.id), ...common(kit, application), offer };
}

type Event = [event: string, payload: unknown];
/**
 * Each change's webhook (webhooks/_candidate_events.md): a move `candidate_stage_change`; reject, unreject and unhire
 * carry the application as a stage change does; `hire_candidate` carries no status and no stage but the `offer`.
 */
function eventOf(kit: KitContext, records: GreenhouseRecords, application: KitApplication, change: KitChange): Event {
  const { action, was } = change;
  const shown = () => ({ application: payloadOf(kit, records, application) });
  if (action === 'hire') return ['hire_candidate', { application: hiredPayload(kit, records, application) }];
  if (action === 'unreject') return [was?.kind === 'hired' ? 'unhire_candidate' : 'unreject_candidate', shown()];
  return [action ? 'reject_candidate' : 'candidate_stage_change', shown()];
}

/** The OAuth tokens issued (RFC 6749 client credentials), each acting for the API credential that asked. */
function tokens() {
  const { clientId, clientSecret, userIds, tokenTtlSeconds } = GREENHOUSE_SANDBOX_DEFAULTS;
  const issued = new Map<string, { expiresAt: number; clientId: string }>();
  const refused = (status: number, error: string, error_description?: string) =>
    new Refusal(status, { error, error_description });
  /** `POST /token`: a form body, recorded by its field names; `sub` a user of the organisation the token acts as. */
  const issue = (state: AtsSandboxState) =>
    json('POST /token', async ({ request, url }) => {
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

/** The candidate as the merge and deletion webhooks name them (`person`). */
const person = (c: KitCandidate) => ({ id: Number(c.id), first_name: c.firstName, last_name: c.lastName });

type Send = (action: string, payload: Body) => Promise<DeliveryRecord[]>;
/** A candidate merged into a new record, or anonymised: each with its webhook; `send` posts it to every endpoint. */
function candidateChanges(kit: () => KitContext, records: GreenhouseRecords, send: Send) {
  const candidateOf = (applicationId: string) => {
    const application = kit().application(applicationId);
    if (!application) throw new Error(`application_id: no application ${applicationId}`);
    return kit().parties(application).candidate;
  };
  return {
    mergeCandidate: (applicationId: string) => {
      const { state } = kit();
      const loser = candidateOf(applicationId);
      const winner = { ...loser, id: records.newId() };
      state.candidates = [...state.candidates.filter((c) => c.id !== loser.id), winner];
      for (const a of state.applications) if (a.candidateId === loser.id) a.candidateId = winner.id;
      return send('merge_candidate', { person: { ...person(loser), new_candidate_id: Number(winner.id) } });
    },
    anonymizeCandidate: (applicationId: string) => {
      const candidate = candidateOf(applicationId);
      Object.assign(candidate, { firstName: 'Anonymized', lastName: candidate.id, email: '' });
      const payload = { candidate_id: Number(candidate.id), anonymized_fields: ['full_name', 'email_addresses'] };
      return send('candidate_anonymized', payload);
    },
  };
}

/** Where a partner PATCHes a take-home test's completion (Assessment Partner API). */
const COMPLETION = '/integrations/testing_partners/take_home_tests/:id';
export type GreenhouseSandbox = Awaited<ReturnType<typeof startGreenhouseSandbox>>;
/** A stand-in of Greenhouse Harvest v3 (its extra records in state.ts, its routes in routes.ts) and its webhooks. */
export async function startGreenhouseSandbox(options: SandboxOptions = {}) {
  const { clientId, clientSecret } = GREENHOUSE_SANDBOX_DEFAULTS;
  let kit: KitContext | undefined;
  const kitOf = () => kit as KitContext;
  const records = greenhouseRecords(kitOf);
  const { issue, principal } = tokens();
  const assessments = new GreenhouseAssessments(kitOf, records);
  const send: Send = (action, payload) => {
    const hub = { state: kitOf().state, random: Math.random };
    return sendChange(hub, { action, deliveries: (target) => [signed(target, action, payload)] });
  };
  const changes = candidateChanges(kitOf, records, send);
  const named = (body: Body) => String(body.application_id ?? body.applicationId);
  let hooks = 0;
  const sandbox = await startAtsSandbox(
    {
      ...{ profile: greenhouseProfile, jobs: SEEDED_JOBS, seed: 7, newId: records.newId, refuses },
      // Counted per API credential (the client id), whatever token it was given, each window from its first request.
      ...{ authenticate: principal, credentials: { atsClientId: clientId, atsClientSecret: clientSecret } },
      unauthorized: new Refusal(401, { message: 'Invalid or expired access token' }),
      uploadRefusal: unprocessable('content', 'the file could not be attached'),
      routes: (k) => {
        kit = k;
        return harvestRoutes(k, records);
      },
      open: (k) => [
        issue(k.state),
        route(`PATCH ${COMPLETION}`, (context) => {
          recordCall(k.state, callShape(context.request, COMPLETION, context.url));
          return assessments.patchCompleted(context.request, context.response, Number(context.params.id));
        }),
        // "Send Test" in a recruiter's hands, and the tests Greenhouse keeps.
        json('POST /_sandbox/send-test', async ({ request }) => {
          const input = (await k.json(request)) as { application_id: number; partner_test_id: string };
          const refused = (error: unknown) => Promise.reject(new Refusal(502, { error: errorMessage(error) }));
          return assessments.sendTest(input).catch(refused);
        }),
        json('GET /_sandbox/take-home-tests', () => assessments.tests),
      ],
      controls: {
        'merge-candidate': async (body) => ({ deliveries: await changes.mergeCandidate(named(body)) }),
        'anonymize-candidate': async (body) => ({ deliveries: await changes.anonymizeCandidate(named(body)) }),
      },
      // Harvest v1/v2 are out of service and took another credential: a v3 token is refused there.
      unrouted: ({ response, url }, record) => {
        if (!/^\/v[12]\//.test(url.pathname)) return sendJson(response, 404, { message: `No route ${url.pathname}` });
        record(url.pathname);
        sendJson(response, 401, { message: 'Harvest v1 and v2 do not accept this credential' });
      },
      changed: (k, application, target, change) => [signed(target, ...eventOf(k, records, application, change))],
      candidateDeleted: (candidate, removed, target) => {
        const deleted_application_ids = removed.map((a) => Number(a.id));
        return signed(target, 'delete_candidate', { person: { ...person(candidate), deleted_application_ids } });
      },
      // A new endpoint gets a ping (its answer decides whether Greenhouse enables it).
      ping: (target) =>
        signed(target, 'ping', { web_hook_id: ++hooks, endpoint_url: target.url, event: 'candidate_stage_change' }),
    },
    options,
  );
  return Object.assign(sandbox, { assessments, clientId, clientSecret, ...changes });
}
