import { ashbyProfile } from '../../../../../shared/ats/ashby/profile';
import { signatureFor } from '../../../../../shared/ats/signatures';
import { createHash, randomUUID } from 'node:crypto';
import { sendJson, type RouteContext } from '../../http-kit';
import {
  startAtsSandbox,
  type AtsSandbox,
  type KitApplication,
  type KitContext,
  type KitExit,
  type LifecycleAction,
} from '../ats-sandbox-kit';
import { AshbyAssessments } from './assessments';

export interface AshbySandbox extends AtsSandbox {
  /** Ashby's side of Ashby Assessments: the partner's registration, "Start Assessment", `assessment.update`. */
  assessments: AshbyAssessments;
}

export const ASHBY_SANDBOX_DEFAULTS = { port: 4030, apiKey: 'ashby-sandbox-key' } as const;
const PLAN_ID = 'c0f1a2b3-plan-backend';
/** The plan's stages of type Archived and Hired, where Ashby puts an application that left. */
const ARCHIVED_STAGE = { id: '3ae2b801-archived', name: 'Archived' };
const HIRED_STAGE = { id: '3ae2b801-hired', name: 'Hired' };

const signed = (secret: string, document: { action: string; [key: string]: unknown }) => {
  const body = Buffer.from(JSON.stringify(document));
  return {
    body,
    headers: { [ashbyProfile.signature.header.toLowerCase()]: signatureFor(ashbyProfile.signature, secret, body) },
    eventId: randomUUID(),
    event: document.action,
  };
};

/** Ashby's webhook object (`webhook.create`, `webhook.info`). */
const webhookJson = (w: { id?: string; url: string; events?: string[]; enabled?: boolean }) => ({
  id: w.id,
  webhookType: w.events?.[0],
  requestUrl: w.url,
  enabled: w.enabled !== false,
});

/** Ashby's answers: HTTP 200 with `success` either way (errors inside the body, as Ashby does). */
const ok = (response: Parameters<typeof sendJson>[0], results: unknown) =>
  sendJson(response, 200, { success: true, results });
const failed = (response: Parameters<typeof sendJson>[0], error: string) =>
  sendJson(response, 200, { success: false, errors: [error] });

/**
 * One cursor page of a list, as Ashby's list endpoints answer (OpenAPI): `limit` items (100 at most and by default)
 * from the body's `cursor`, `moreDataAvailable`, and the `nextCursor` while there is more.
 */
function cursorPage<T>(all: readonly T[], body: Record<string, unknown>, json: (item: T) => unknown = (i) => i) {
  const limit = Math.min(100, Math.max(1, Number(body.limit ?? 100) || 100));
  const offset = Number(Buffer.from(String(body.cursor ?? ''), 'base64url').toString() || 0);
  const more = offset + limit < all.length;
  return {
    success: true,
    results: all.slice(offset, offset + limit).map(json),
    moreDataAvailable: more,
    ...(more ? { nextCursor: Buffer.from(String(offset + limit)).toString('base64url') } : {}),
  };
}

/**
 * Where an application that left stands, as Ashby's application schema has it: rejected and withdrawn are `Archived`
 * in the plan's Archived-type stage with an `archiveReason{id, text, reasonType}` (RejectedByOrg, RejectedByCandidate:
 * Ashby's archive reason OpenAPI) and `archivedAt`; hired is `Hired` in the Hired-type stage, with no archive reason.
 * Ashby moves an application into those stages; the sandbox shows them while `exit` is set and keeps the stage it
 * left, so an unarchive moves it back there.
 */
function placeJson(exit: KitExit | undefined) {
  if (!exit) return { status: 'Active', archiveReason: null, archivedAt: null, stage: undefined };
  if (exit.kind === 'hired')
    return { status: 'Hired', archiveReason: null, archivedAt: null, stage: { ...HIRED_STAGE, type: 'Hired' } };
  const reasonType = exit.kind === 'withdrawn' ? 'RejectedByCandidate' : 'RejectedByOrg';
  const archiveReason = { id: `reason-${reasonType}`, text: exit.reason, reasonType, customFields: [] };
  return { status: 'Archived', archiveReason, archivedAt: exit.at, stage: { ...ARCHIVED_STAGE, type: 'Archived' } };
}

function applicationJson(kit: KitContext, application: KitApplication) {
  const { candidate, job } = kit.parties(application);
  const current = kit.stage(job.id, application.stageId) ?? { id: application.stageId, name: application.stageId };
  const { stage: exitStage, ...place } = placeJson(application.exit);
  const stage = exitStage ?? { ...current, type: 'Active' };
  return {
    id: application.id,
    ...place,
    createdAt: application.updatedAt,
    updatedAt: application.updatedAt,
    candidate: {
      id: candidate.id,
      name: `${candidate.firstName} ${candidate.lastName}`,
      primaryEmailAddress: { value: candidate.email, type: 'Personal', isPrimary: true },
    },
    currentInterviewStage: { id: stage.id, title: stage.name, type: stage.type, interviewPlanId: PLAN_ID },
    job: { id: job.id, title: job.name },
    hiringTeam: [],
  };
}

/**
 * What Ashby sends when an application leaves or comes back, related deliveries sharing one `webhookActionId` (docs:
 * related-webhooks): a rejection or withdrawal is a move into the Archived-type stage (`candidateStageChange`, status
 * Archived) with its `applicationUpdate`; a hire is `candidateHire` (data.application, and data.offer when there is
 * one: the sandbox has none), which "also triggers applicationUpdate and candidateStageChange"; an unarchive moves the
 * application back to its stage, Active.
 */
function lifecycleDeliveries(kit: KitContext, application: KitApplication, secret: string, action: LifecycleAction) {
  // One action, one id: a resend of the same action (the kit's `repeat`) is Ashby's retry of the same deliveries.
  const webhookActionId = createHash('sha256')
    .update(`${application.id}|${action}|${application.updatedAt}`)
    .digest('hex')
    .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12}).*$/, '$1-$2-$3-$4-$5');
  const data = { application: applicationJson(kit, application) };
  const actions =
    action === 'hire'
      ? ['candidateHire', 'applicationUpdate', 'candidateStageChange']
      : ['candidateStageChange', 'applicationUpdate'];
  return actions.map((name) => signed(secret, { action: name, webhookActionId, data }));
}

/** A stand-in of Ashby's API (RPC over POST, Basic auth) and its signed webhooks. */
export async function startAshbySandbox(
  options: { port?: number; rateLimit?: number | undefined; rateWindowMs?: number | undefined } = {},
): Promise<AshbySandbox> {
  const assessments = new AshbyAssessments();
  const sandbox = await startAtsSandbox({
    kind: 'ashby',
    port: options.port ?? ASHBY_SANDBOX_DEFAULTS.port,
    jobs: [
      {
        id: '4071538b-backend',
        name: 'Backend Engineer',
        stages: [
          { id: '3ae2b801-applied', name: 'Application Review' },
          { id: '3ae2b801-ai', name: 'AI Interview' },
          { id: '3ae2b801-hm', name: 'Hiring Manager Review' },
          { id: '3ae2b801-offer', name: 'Offer' },
          // A stage whose activity is the partner's assessment, "Automate on Stage Entry" (assessments.ts).
          { id: '3ae2b801-assessment', name: 'Skills Assessment' },
        ],
      },
      // A closed job of another hiring process, without the AI interview stage: "all jobs" means open ones.
      {
        id: '9c2e01aa-closed',
        name: 'Support Engineer',
        stages: [{ id: '9c2e01aa-hired', name: 'Hired' }],
        state: 'closed',
      },
    ],
    // Ashby's numbers are unconfirmed; a per-key window with 429 + Retry-After is what its OpenAPI implies.
    rateLimit: { limit: options.rateLimit ?? 50, windowMs: options.rateWindowMs ?? 10_000 },
    rateLimited: (response, resetMs) =>
      sendJson(
        response,
        429,
        { success: false, errors: ['rate_limit_exceeded'] },
        { 'retry-after': String(Math.ceil(resetMs / 1000)) },
      ),
    credentials: { atsApiKey: ASHBY_SANDBOX_DEFAULTS.apiKey },
    authenticate: (request) =>
      request.headers.authorization === `Basic ${Buffer.from(`${ASHBY_SANDBOX_DEFAULTS.apiKey}:`).toString('base64')}`
        ? 'key'
        : undefined,
    unauthorized: (response) => sendJson(response, 401, { success: false, errors: ['invalid_api_key'] }),
    // RPC: every parameter is a body field; a query string is refused in Ashby's 200-with-errors form.
    defaultQuery: [],
    unknownParameter: (response, name) =>
      sendJson(response, 200, { success: false, errors: [{ message: `Unknown parameter ${name}`, parameter: name }] }),
    routes: (kit) => {
      const ashbyTags: { id: string; title: string }[] = [];
      assessments.attach(kit);
      return [
        assessments.route(),
        {
          method: 'POST',
          pattern: '/job.list',
          // Open, closed and archived jobs unless `status` (an array of Draft, Open, Closed, Archived) says; cursor
          // pages of `limit` (at most 100) with `moreDataAvailable` and `nextCursor` (Ashby OpenAPI, job.list).
          handle: async ({ request, response }) => {
            const body = await kit.json(request);
            const statusOf = (state: string | undefined) =>
              state === 'closed' ? 'Closed' : state === 'archived' ? 'Archived' : state === 'draft' ? 'Draft' : 'Open';
            const wanted = Array.isArray(body.status) ? (body.status as unknown[]).map(String) : undefined;
            const all = kit.state.jobs.filter((j) =>
              wanted ? wanted.includes(statusOf(j.state)) : statusOf(j.state) !== 'Draft',
            );
            sendJson(
              response,
              200,
              cursorPage(all, body, (j) => ({
                id: j.id,
                title: j.name,
                status: statusOf(j.state),
                defaultInterviewPlanId: PLAN_ID,
              })),
            );
          },
        },
        {
          // Cursor pages of `limit` (at most 100), `status` and `jobId` filters; no stage filter.
          method: 'POST',
          pattern: '/application.list',
          handle: async ({ request, response }) => {
            const body = await kit.json(request);
            // `status` one of Hired, Archived, Active, Lead (application.list OpenAPI): the status each is shown with.
            const all = kit.state.applications.filter(
              (a) =>
                (!body.jobId || a.jobId === body.jobId) && (!body.status || placeJson(a.exit).status === body.status),
            );
            sendJson(
              response,
              200,
              cursorPage(all, body, (a) => applicationJson(kit, a)),
            );
          },
        },
        {
          method: 'POST',
          pattern: '/job.info',
          handle: async ({ request, response }) => {
            const job = kit.job(String((await kit.json(request)).id));
            if (!job) return failed(response, 'job_not_found');
            ok(response, { id: job.id, title: job.name, status: 'Open', defaultInterviewPlanId: PLAN_ID });
          },
        },
        {
          // docs: setting-up-webhooks; one webhook per type and URL ("Duplicate webhook" otherwise).
          method: 'POST',
          pattern: '/webhook.create',
          handle: async ({ request, response }) => {
            const body = await kit.json(request);
            if (typeof body.webhookType !== 'string' || typeof body.requestUrl !== 'string')
              return failed(response, 'invalid_input: webhookType, requestUrl');
            if (
              kit.state.webhooks.some((w) => w.url === body.requestUrl && w.events?.includes(String(body.webhookType)))
            )
              return failed(response, 'duplicate_webhook');
            const target = {
              id: randomUUID(),
              url: body.requestUrl,
              secret: typeof body.secretToken === 'string' ? body.secretToken : '',
              events: [body.webhookType],
              enabled: true,
            };
            kit.state.webhooks.push(target);
            ok(response, webhookJson(target));
          },
        },
        {
          method: 'POST',
          pattern: '/webhook.info',
          handle: async ({ request, response }) => {
            const id = String((await kit.json(request)).webhookId);
            const found = kit.state.webhooks.find((w) => w.id === id);
            if (!found) return failed(response, 'webhook_not_found');
            ok(response, webhookJson(found));
          },
        },
        {
          method: 'POST',
          pattern: '/candidateTag.list',
          // Cursor pages of `limit` (100 by default) with `moreDataAvailable` and `nextCursor` (Ashby OpenAPI).
          handle: async ({ request, response }) =>
            sendJson(response, 200, cursorPage(ashbyTags, await kit.json(request))),
        },
        {
          method: 'POST',
          pattern: '/candidateTag.create',
          handle: async ({ request, response }) => {
            const title = String((await kit.json(request)).title ?? '');
            if (!title) return failed(response, 'invalid_input: title');
            const tag = ashbyTags.find((t) => t.title === title) ?? { id: randomUUID(), title };
            if (!ashbyTags.includes(tag)) ashbyTags.push(tag);
            ok(response, tag);
          },
        },
        {
          method: 'POST',
          pattern: '/candidate.info',
          handle: async ({ request, response }) => {
            const id = String((await kit.json(request)).id);
            if (!kit.candidate(id)) return failed(response, 'candidate_not_found');
            const held = kit.state.tags[id] ?? [];
            ok(response, { id, tags: ashbyTags.filter((t) => held.includes(t.title)) });
          },
        },
        ...(['addTag', 'removeTag'] as const).map((action) => ({
          method: 'POST',
          pattern: `/candidate.${action}`,
          handle: async ({ request, response }: RouteContext) => {
            const body = await kit.json(request);
            const candidateId = String(body.candidateId);
            const tag = ashbyTags.find((t) => t.id === body.tagId);
            if (!kit.candidate(candidateId)) return failed(response, 'candidate_not_found');
            if (!tag) return failed(response, 'tag_not_found');
            const held = new Set(kit.state.tags[candidateId] ?? []);
            if (action === 'addTag') held.add(tag.title);
            else held.delete(tag.title);
            kit.state.tags[candidateId] = [...held];
            ok(response, { id: candidateId });
          },
        })),
        {
          method: 'POST',
          pattern: '/candidate.createNote',
          handle: async ({ request, response }) => {
            const body = await kit.json(request);
            const application = kit.state.applications.find((a) => a.candidateId === body.candidateId);
            if (!application) return failed(response, 'candidate_not_found');
            if (typeof body.note !== 'string' && typeof (body.note as { value?: unknown })?.value !== 'string')
              return failed(response, 'invalid_input: note');
            const text = typeof body.note === 'string' ? body.note : (body.note as { value: string }).value;
            const note = kit.addNote(application, text);
            ok(response, { id: note.id, content: note.body, createdAt: note.at });
          },
        },
        {
          method: 'POST',
          pattern: '/candidate.listNotes',
          handle: async ({ request, response }) => {
            const body = await kit.json(request);
            ok(
              response,
              kit.state.notes
                .filter((n) => n.candidateId === body.candidateId)
                .map((n) => ({ id: n.id, content: n.body, createdAt: n.at })),
            );
          },
        },
        {
          method: 'POST',
          pattern: '/application.info',
          handle: async ({ request, response }) => {
            const application = kit.application(String((await kit.json(request)).applicationId));
            if (!application) return failed(response, 'application_not_found');
            ok(response, applicationJson(kit, application));
          },
        },
        {
          method: 'POST',
          pattern: '/interviewStage.list',
          handle: async ({ request, response }) => {
            if ((await kit.json(request)).interviewPlanId !== PLAN_ID)
              return failed(response, 'interview_plan_not_found');
            ok(
              response,
              (kit.state.jobs[0]?.stages ?? []).map((s, i) => ({
                id: s.id,
                title: s.name,
                type: 'Active',
                orderInInterviewPlan: i,
                interviewPlanId: PLAN_ID,
              })),
            );
          },
        },
        {
          method: 'POST',
          pattern: '/application.changeStage',
          handle: async ({ request, response }) => {
            const body = await kit.json(request);
            const application = kit.application(String(body.applicationId));
            if (!application) return failed(response, 'application_not_found');
            if (!kit.stage(application.jobId, String(body.interviewStageId)))
              return failed(response, 'invalid_input: interviewStageId');
            kit.moveByApi(application, String(body.interviewStageId));
            ok(response, applicationJson(kit, application));
          },
        },
      ];
    },
    // One move fires candidateStageChange and, related to it, applicationUpdate; related deliveries share one
    // webhookActionId, at the top level of each (docs: related-webhooks, "Common Payload Data").
    stageChange: (kit, application, target) => {
      const webhookActionId = randomUUID();
      const data = { application: applicationJson(kit, application) };
      return [
        signed(target.secret, { action: 'candidateStageChange', webhookActionId, data }),
        signed(target.secret, { action: 'applicationUpdate', webhookActionId, data }),
      ];
    },
    lifecycleChange: (kit, application, target, action) => lifecycleDeliveries(kit, application, target.secret, action),
    // `candidateDelete` names the deleted candidate only (webhook payloads OpenAPI).
    candidateDeleted: (candidate, _applications, target) =>
      signed(target.secret, {
        action: 'candidateDelete',
        webhookActionId: randomUUID(),
        data: { candidate: { id: candidate.id } },
      }),
    ping: (secret) => signed(secret, { action: 'ping', data: { webhookId: randomUUID() } }),
  });
  // "Automate on Stage Entry": a move into a stage with an automated assessment starts it, as Ashby does.
  const move = sandbox.moveCandidate.bind(sandbox);
  sandbox.moveCandidate = async (input) => {
    const deliveries = await move(input);
    await assessments.stageEntered(input.applicationId, sandbox.stageNameOf(input.applicationId));
    return deliveries;
  };
  return Object.assign(sandbox, { assessments });
}
