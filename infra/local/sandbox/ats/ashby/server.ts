import { createHash, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { ashbyProfile } from '../../../../../shared/ats/ashby/profile';
import { sendJson, type Route } from '../../http-kit';
import { startAtsSandbox, type SandboxOptions } from '../ats-sandbox-kit';
import type {
  AtsSandbox,
  KitApplication,
  KitContext,
  KitExit,
  KitJob,
  KitStage,
  LifecycleAction,
} from '../ats-sandbox-kit';
import { bodyPage } from '../paging';
import { signDelivery, type WebhookTarget } from '../signed-webhooks';
import { AshbyAssessments } from './assessments';

export interface AshbySandbox extends AtsSandbox {
  /** Ashby's side of Ashby Assessments: the partner's registration, "Start Assessment", `assessment.update`. */
  assessments: AshbyAssessments;
}

export const ASHBY_SANDBOX_DEFAULTS = { port: 4030, apiKey: 'ashby-sandbox-key' } as const;
const PLAN_ID = 'c0f1a2b3-plan-backend';
/** The plan's stages of type Archived and Hired, where Ashby puts an application that left. */
const ARCHIVED_STAGE = { id: '3ae2b801-archived', name: 'Archived', type: 'Archived' };
const HIRED_STAGE = { id: '3ae2b801-hired', name: 'Hired', type: 'Hired' };

const JOBS: KitJob[] = [
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
];

const signed = (secret: string, document: { action: string; [key: string]: unknown }) =>
  signDelivery(ashbyProfile.signature, secret, document, { event: document.action });

/** Ashby's answers: HTTP 200 with `success` either way (errors inside the body, as Ashby does). */
const ok = (response: ServerResponse, results: unknown) => sendJson(response, 200, { success: true, results });
const failed = (response: ServerResponse, error: string) =>
  sendJson(response, 200, { success: false, errors: [error] });

/** One cursor page (Ashby OpenAPI): `limit` (100 at most) from the `cursor`; `moreDataAvailable`, `nextCursor`. */
const page = <T>(all: readonly T[], body: Record<string, unknown>, show?: (item: T) => unknown) => ({
  success: true,
  ...bodyPage(ashbyProfile.paging, all, { limit: body.limit, token: body.cursor }, show),
});

/** Ashby's webhook object (`webhook.create`, `webhook.info`). */
const webhookJson = (w: WebhookTarget) => ({
  id: w.id,
  webhookType: w.events?.[0],
  requestUrl: w.url,
  enabled: w.enabled !== false,
});

const jobStatus = (state: string | undefined) =>
  state === 'closed' ? 'Closed' : state === 'archived' ? 'Archived' : state === 'draft' ? 'Draft' : 'Open';

/**
 * Where an application that left stands (Ashby's application and archive reason schemas): rejected and withdrawn
 * are `Archived` in the plan's Archived-type stage with an `archiveReason{id, text, reasonType}` (RejectedByOrg,
 * RejectedByCandidate) and `archivedAt`; hired is `Hired` in the Hired-type stage. The sandbox shows those stages
 * while `exit` is set and keeps the stage it left, so an unarchive moves it back there.
 */
function placeJson(exit: KitExit | undefined) {
  if (!exit) return { status: 'Active', archiveReason: null, archivedAt: null, stage: undefined };
  if (exit.kind === 'hired') return { status: 'Hired', archiveReason: null, archivedAt: null, stage: HIRED_STAGE };
  const reasonType = exit.kind === 'withdrawn' ? 'RejectedByCandidate' : 'RejectedByOrg';
  const archiveReason = { id: `reason-${reasonType}`, text: exit.reason, reasonType, customFields: [] };
  return { status: 'Archived', archiveReason, archivedAt: exit.at, stage: ARCHIVED_STAGE };
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
 * Related deliveries share one `webhookActionId`, at the top level of each (docs: related-webhooks): a move is
 * candidateStageChange with applicationUpdate; a rejection or withdrawal is a move into the Archived-type stage; a
 * hire is `candidateHire` (data.offer when there is one: the sandbox has none), which "also triggers
 * applicationUpdate and candidateStageChange"; an unarchive moves the application back to its stage, Active.
 */
function changeDeliveries(kit: KitContext, application: KitApplication, secret: string, action?: LifecycleAction) {
  // One action, one id, whichever webhook (one per type) it goes to; a stage change sent again is a new action.
  const webhookActionId = action
    ? createHash('sha256').update(`${application.id}|${action}|${application.updatedAt}`).digest('hex')
    : randomUUID();
  const data = { application: applicationJson(kit, application) };
  const hire = ['candidateHire', 'applicationUpdate', 'candidateStageChange'];
  return (action === 'hire' ? hire : ['candidateStageChange', 'applicationUpdate']).map((name) =>
    signed(secret, { action: name, webhookActionId, data }),
  );
}

type Rpc = (body: Record<string, unknown>, response: ServerResponse) => void;

/** A route of Ashby's RPC API: a POST whose parameters are the JSON body's fields. */
const rpc = (kit: KitContext, name: string, handle: Rpc): Route => ({
  method: 'POST',
  pattern: `/${name}`,
  handle: async ({ request, response }) => handle(await kit.json(request), response),
});

/** An RPC about one application (`applicationId`): `application_not_found` without it. */
const withApplication = (kit: KitContext, handle: (application: KitApplication, response: ServerResponse) => void) =>
  ((body, response) => {
    const application = kit.application(String(body.applicationId));
    return application ? handle(application, response) : failed(response, 'application_not_found');
  }) satisfies Rpc;

/** Ashby's jobs, applications and stages, as a table of RPC routes. */
function processRoutes(kit: KitContext): Route[] {
  return [
    // Open, closed and archived jobs unless `status` (Draft, Open, Closed, Archived) says (Ashby OpenAPI, job.list).
    rpc(kit, 'job.list', (body, response) => {
      const wanted = Array.isArray(body.status) ? body.status.map(String) : undefined;
      const listed = (j: KitJob) => (wanted ? wanted.includes(jobStatus(j.state)) : jobStatus(j.state) !== 'Draft');
      const show = (j: KitJob) => ({
        id: j.id,
        title: j.name,
        status: jobStatus(j.state),
        defaultInterviewPlanId: PLAN_ID,
      });
      sendJson(response, 200, page(kit.state.jobs.filter(listed), body, show));
    }),
    // `status` (Hired, Archived, Active, Lead) and `jobId` filters; no stage filter (application.list OpenAPI).
    rpc(kit, 'application.list', (body, response) => {
      const listed = (a: KitApplication) =>
        (!body.jobId || a.jobId === body.jobId) && (!body.status || placeJson(a.exit).status === body.status);
      sendJson(
        response,
        200,
        page(kit.state.applications.filter(listed), body, (a) => applicationJson(kit, a)),
      );
    }),
    rpc(kit, 'job.info', (body, response) => {
      const job = kit.job(String(body.id));
      if (!job) return failed(response, 'job_not_found');
      ok(response, { id: job.id, title: job.name, status: 'Open', defaultInterviewPlanId: PLAN_ID });
    }),
    rpc(
      kit,
      'application.info',
      withApplication(kit, (application, response) => ok(response, applicationJson(kit, application))),
    ),
    rpc(kit, 'interviewStage.list', (body, response) => {
      if (body.interviewPlanId !== PLAN_ID) return failed(response, 'interview_plan_not_found');
      const stages = kit.state.jobs[0]?.stages ?? [];
      const shown = (s: KitStage, i: number) => ({ id: s.id, title: s.name, type: 'Active', orderInInterviewPlan: i });
      ok(
        response,
        stages.map((s, i) => ({ ...shown(s, i), interviewPlanId: PLAN_ID })),
      );
    }),
    rpc(kit, 'application.changeStage', (body, response) =>
      withApplication(kit, (application) => {
        if (!kit.stage(application.jobId, String(body.interviewStageId)))
          return failed(response, 'invalid_input: interviewStageId');
        kit.moveByApi(application, String(body.interviewStageId));
        ok(response, applicationJson(kit, application));
      })(body, response),
    ),
  ];
}

/** Webhooks made through the API (docs: setting-up-webhooks), one per type and URL. */
function webhookRoutes(kit: KitContext): Route[] {
  return [
    rpc(kit, 'webhook.create', (body, response) => {
      const { webhookType: type, requestUrl: url, secretToken } = body;
      if (typeof type !== 'string' || typeof url !== 'string')
        return failed(response, 'invalid_input: webhookType, requestUrl');
      if (kit.state.webhooks.some((w) => w.url === url && w.events?.includes(type)))
        return failed(response, 'duplicate_webhook');
      const secret = typeof secretToken === 'string' ? secretToken : '';
      const target = { id: randomUUID(), url, secret, events: [type], enabled: true };
      kit.state.webhooks.push(target);
      ok(response, webhookJson(target));
    }),
    rpc(kit, 'webhook.info', (body, response) => {
      const found = kit.state.webhooks.find((w) => w.id === String(body.webhookId));
      return found ? ok(response, webhookJson(found)) : failed(response, 'webhook_not_found');
    }),
  ];
}

/** Candidates' tags (the organisation's, by title) and notes, as a table of RPC routes. */
function candidateRoutes(kit: KitContext): Route[] {
  const tags: { id: string; title: string }[] = [];
  return [
    rpc(kit, 'candidateTag.list', (body, response) => sendJson(response, 200, page(tags, body))),
    rpc(kit, 'candidateTag.create', (body, response) => {
      const title = String(body.title ?? '');
      if (!title) return failed(response, 'invalid_input: title');
      const tag = tags.find((t) => t.title === title) ?? { id: randomUUID(), title };
      if (!tags.includes(tag)) tags.push(tag);
      ok(response, tag);
    }),
    rpc(kit, 'candidate.info', (body, response) => {
      const id = String(body.id);
      if (!kit.candidate(id)) return failed(response, 'candidate_not_found');
      ok(response, { id, tags: tags.filter((t) => (kit.state.tags[id] ?? []).includes(t.title)) });
    }),
    ...(['addTag', 'removeTag'] as const).map((action) =>
      rpc(kit, `candidate.${action}`, (body, response) => {
        const candidateId = String(body.candidateId);
        const tag = tags.find((t) => t.id === body.tagId);
        if (!kit.candidate(candidateId)) return failed(response, 'candidate_not_found');
        if (!tag) return failed(response, 'tag_not_found');
        const held = new Set(kit.state.tags[candidateId] ?? []);
        if (action === 'addTag') held.add(tag.title);
        else held.delete(tag.title);
        kit.state.tags[candidateId] = [...held];
        ok(response, { id: candidateId });
      }),
    ),
    rpc(kit, 'candidate.createNote', (body, response) => {
      const application = kit.state.applications.find((a) => a.candidateId === body.candidateId);
      if (!application) return failed(response, 'candidate_not_found');
      const text = typeof body.note === 'string' ? body.note : (body.note as { value?: unknown } | undefined)?.value;
      if (typeof text !== 'string') return failed(response, 'invalid_input: note');
      const note = kit.addNote(application, text);
      ok(response, { id: note.id, content: note.body, createdAt: note.at });
    }),
    rpc(kit, 'candidate.listNotes', (body, response) => {
      const notes = kit.state.notes.filter((n) => n.candidateId === body.candidateId);
      ok(
        response,
        notes.map((n) => ({ id: n.id, content: n.body, createdAt: n.at })),
      );
    }),
  ];
}

/** A stand-in of Ashby's API (RPC over POST, Basic auth) and its signed webhooks. */
export async function startAshbySandbox(options: SandboxOptions = {}): Promise<AshbySandbox> {
  const assessments = new AshbyAssessments();
  const basic = `Basic ${Buffer.from(`${ASHBY_SANDBOX_DEFAULTS.apiKey}:`).toString('base64')}`;
  const sandbox = await startAtsSandbox(
    {
      profile: ashbyProfile,
      port: ASHBY_SANDBOX_DEFAULTS.port,
      jobs: JOBS,
      // No general limit is published: a per-key window stands in, with the 429 and Retry-After its OpenAPI implies.
      unpublishedRate: { limit: 50, windowMs: 10_000 },
      credentials: { atsApiKey: ASHBY_SANDBOX_DEFAULTS.apiKey },
      authenticate: (request) => (request.headers.authorization === basic ? 'key' : undefined),
      unauthorized: (response) => sendJson(response, 401, { success: false, errors: ['invalid_api_key'] }),
      // RPC: every parameter is a body field; a query string is refused in Ashby's 200-with-errors form.
      defaultQuery: [],
      unknownParameter: (response, name) =>
        sendJson(response, 200, {
          success: false,
          errors: [{ message: `Unknown parameter ${name}`, parameter: name }],
        }),
      routes: (kit) => {
        assessments.attach(kit);
        return [assessments.route(), ...processRoutes(kit), ...webhookRoutes(kit), ...candidateRoutes(kit)];
      },
      stageChange: (kit, application, target) => changeDeliveries(kit, application, target.secret),
      lifecycleChange: (kit, application, target, action) => changeDeliveries(kit, application, target.secret, action),
      // `candidateDelete` names the deleted candidate only (webhook payloads OpenAPI).
      candidateDeleted: (candidate, _applications, target) =>
        signed(target.secret, {
          action: 'candidateDelete',
          webhookActionId: randomUUID(),
          data: { candidate: { id: candidate.id } },
        }),
      ping: (secret) => signed(secret, { action: 'ping', data: { webhookId: randomUUID() } }),
    },
    options,
  );
  // "Automate on Stage Entry": a move into a stage with an automated assessment starts it, as Ashby does.
  const move = sandbox.moveCandidate;
  sandbox.moveCandidate = async (input) => {
    const deliveries = await move(input);
    await assessments.stageEntered(input.applicationId, sandbox.stageNameOf(input.applicationId));
    return deliveries;
  };
  return Object.assign(sandbox, { assessments });
}
