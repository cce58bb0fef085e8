import { createHash, randomUUID } from 'node:crypto';
import { ashbyProfile } from '../../../../../shared/ats/ashby/profile';
import { route, sendJson } from '../../http-kit';
import { retag, startAtsSandbox, type Body, type SandboxOptions } from '../ats-sandbox-kit';
import type { KitApplication, KitChange, KitContext, KitExit, KitJob, KitNote, KitStage } from '../ats-sandbox-kit';
import { Refusal } from '../edge';
import { bodyPage } from '../paging';
import { signDelivery, type WebhookTarget } from '../signed-webhooks';
import { AshbyAssessments, fail } from './assessments';

export type AshbySandbox = Awaited<ReturnType<typeof startAshbySandbox>>;

const PLAN_ID = 'c0f1a2b3-plan-backend';
/** The plan's stages of type Archived and Hired, where Ashby puts an application that left. */
const ARCHIVED_STAGE = { id: '3ae2b801-archived', name: 'Archived', type: 'Archived' };
const HIRED_STAGE = { id: '3ae2b801-hired', name: 'Hired', type: 'Hired' };
const CLOSED_JOB_STAGES = [{ id: '9c2e01aa-hired', name: 'Hired' }];
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
  { id: '9c2e01aa-closed', name: 'Support Engineer', stages: CLOSED_JOB_STAGES, state: 'closed' },
];

/** Ashby's RPC API: a POST per method, its parameters the JSON body's fields, answered by the body it returns. */
type Rpcs = Record<string, (body: Body) => unknown>;
const ok = (results: unknown) => ({ success: true, results });
/** One cursor page (Ashby OpenAPI): `limit` (100 at most) from the `cursor`; `moreDataAvailable`, `nextCursor`. */
const page = <T>(all: readonly T[], body: Body, show?: (item: T) => unknown) => ({
  success: true,
  ...bodyPage(ashbyProfile.paging, all, { limit: body.limit, token: body.cursor }, show),
});

const signed = (target: WebhookTarget, document: { action: string; [key: string]: unknown }) =>
  signDelivery(ashbyProfile.signature, target, document, { event: document.action });

const statusOf = (state: string | undefined) =>
  state === 'closed' ? 'Closed' : state === 'archived' ? 'Archived' : state === 'draft' ? 'Draft' : 'Open';

const jobJson = (j: KitJob) => ({
  id: j.id,
  title: j.name,
  status: statusOf(j.state),
  defaultInterviewPlanId: PLAN_ID,
});

/**
 * Where an application that left stands (application, archive reason schemas): rejected or withdrawn `Archived` in the
 * Archived-type stage with its `archiveReason` and `archivedAt`, hired `Hired`; the stage it left kept for unarchive.
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
  const primaryEmailAddress = { value: candidate.email, type: 'Personal', isPrimary: true };
  return {
    ...{ id: application.id, ...place, createdAt: application.updatedAt, updatedAt: application.updatedAt },
    candidate: { id: candidate.id, name: `${candidate.firstName} ${candidate.lastName}`, primaryEmailAddress },
    currentInterviewStage: { id: stage.id, title: stage.name, type: stage.type, interviewPlanId: PLAN_ID },
    ...{ job: { id: job.id, title: job.name }, hiringTeam: [] },
  };
}

/**
 * Related deliveries share a top-level `webhookActionId` (docs: related-webhooks): a move, an archive or an unarchive
 * is candidateStageChange with applicationUpdate; a hire `candidateHire`, which "also triggers" both.
 */
function changeDeliveries(kit: KitContext, application: KitApplication, target: WebhookTarget, { action }: KitChange) {
  // One action, one id, whichever webhook (one per type) it goes to; a stage change sent again is a new action.
  const webhookActionId = action
    ? createHash('sha256').update(`${application.id}|${action}|${application.updatedAt}`).digest('hex')
    : randomUUID();
  const data = { application: applicationJson(kit, application) };
  const hire = ['candidateHire', 'applicationUpdate', 'candidateStageChange'];
  return (action === 'hire' ? hire : ['candidateStageChange', 'applicationUpdate']).map((name) =>
    signed(target, { action: name, webhookActionId, data }),
  );
}

/** Ashby's jobs, applications and stages. */
function processRpcs(kit: KitContext): Rpcs {
  /** An RPC about one application (`applicationId`): `application_not_found` without it. */
  const withApplication = (handle: (application: KitApplication, body: Body) => unknown) => (body: Body) => {
    const application = kit.application(String(body.applicationId));
    return application ? handle(application, body) : fail('application_not_found');
  };
  const stageJson = (s: KitStage, i: number) => ({ id: s.id, title: s.name, type: 'Active', orderInInterviewPlan: i });
  return {
    // Open, closed and archived jobs unless `status` (Draft, Open, Closed, Archived) says (Ashby OpenAPI, job.list).
    'job.list': (body) => {
      const wanted = Array.isArray(body.status) ? body.status.map(String) : undefined;
      const listed = (j: KitJob) => (wanted ? wanted.includes(statusOf(j.state)) : statusOf(j.state) !== 'Draft');
      return page(kit.state.jobs.filter(listed), body, jobJson);
    },
    // `status` (Hired, Archived, Active, Lead) and `jobId` filters; no stage filter (application.list OpenAPI).
    'application.list': (body) => {
      const listed = (a: KitApplication) =>
        (!body.jobId || a.jobId === body.jobId) && (!body.status || placeJson(a.exit).status === body.status);
      return page(kit.state.applications.filter(listed), body, (a) => applicationJson(kit, a));
    },
    'job.info': ({ id }) => {
      const job = kit.job(String(id));
      return job ? ok({ ...jobJson(job), status: 'Open' }) : fail('job_not_found');
    },
    'application.info': withApplication((application) => ok(applicationJson(kit, application))),
    'interviewStage.list': ({ interviewPlanId }) => {
      if (interviewPlanId !== PLAN_ID) return fail('interview_plan_not_found');
      return ok((kit.state.jobs[0]?.stages ?? []).map((s, i) => ({ ...stageJson(s, i), interviewPlanId: PLAN_ID })));
    },
    'application.changeStage': withApplication((application, { interviewStageId }) => {
      if (!kit.stage(application.jobId, String(interviewStageId))) return fail('invalid_input: interviewStageId');
      kit.moveByApi(application, String(interviewStageId));
      return ok(applicationJson(kit, application));
    }),
  };
}

const noteJson = (n: KitNote) => ({ id: n.id, content: n.body, createdAt: n.at });
const UPLOAD_CONTEXTS = ['CandidateResume', 'CandidateFiles', 'ApplicationForm'];
const webhookJson = (w: WebhookTarget) =>
  ok({ id: w.id, webhookType: w.events?.[0], requestUrl: w.url, enabled: w.enabled !== false });

/** Webhooks made through the API (docs: setting-up-webhooks), one per type and URL; candidates' tags and notes. */
function candidateRpcs(kit: KitContext): Rpcs {
  const tags: { id: string; title: string }[] = [];
  const retagged = (add: boolean) => (body: Body) => {
    const [candidateId, tag] = [String(body.candidateId), tags.find((t) => t.id === body.tagId)];
    if (!kit.candidate(candidateId)) return fail('candidate_not_found');
    if (!tag) return fail('tag_not_found');
    retag(kit.state, candidateId, [tag.title], add);
    return ok({ id: candidateId });
  };
  const candidateJson = (id: string) => ({
    ...{ id, tags: tags.filter((t) => (kit.state.tags[id] ?? []).includes(t.title)) },
    // A file's handle is an opaque token (what `file.info` takes).
    fileHandles: kit.files.list([id]).map((f) => ({ id: f.id, name: f.name, handle: `file-${f.id}` })),
  });
  return {
    'webhook.create': ({ webhookType: type, requestUrl: url, secretToken }) => {
      if (typeof type !== 'string' || typeof url !== 'string') return fail('invalid_input: webhookType, requestUrl');
      if (kit.state.webhooks.some((w) => w.url === url && w.events?.includes(type))) return fail('duplicate_webhook');
      const secret = typeof secretToken === 'string' ? secretToken : '';
      const target = { id: randomUUID(), url, secret, events: [type], enabled: true };
      kit.state.webhooks.push(target);
      return webhookJson(target);
    },
    'webhook.info': ({ webhookId }) => {
      const found = kit.state.webhooks.find((w) => w.id === String(webhookId));
      return found ? webhookJson(found) : fail('webhook_not_found');
    },
    'candidateTag.list': (body) => page(tags, body),
    'candidateTag.create': (body) => {
      const title = String(body.title ?? '');
      if (!title) return fail('invalid_input: title');
      const tag = tags.find((t) => t.title === title) ?? { id: randomUUID(), title };
      if (!tags.includes(tag)) tags.push(tag);
      return ok(tag);
    },
    'candidate.info': (body) =>
      kit.candidate(String(body.id)) ? ok(candidateJson(String(body.id))) : fail('candidate_not_found'),
    // An upload: a handle and a presigned URL, the bytes posted there, the handle put on the candidate (changelog
    // 2026-02-23-presigned-file-uploads); files are the candidate's, the answer the candidate.
    'file.createFileUploadHandle': ({ fileUploadContext, filename, contentType, contentLength: length }) => {
      if (!UPLOAD_CONTEXTS.includes(String(fileUploadContext)) || typeof filename !== 'string' || !filename)
        return fail('invalid_input: fileUploadContext, filename');
      if (typeof contentType !== 'string' || !Number.isInteger(length) || Number(length) < 0)
        return fail('invalid_input: contentType, contentLength');
      return ok(kit.files.presign({ filename, contentType, contentLength: Number(length) }));
    },
    'candidate.uploadFile': ({ candidateId, fileHandle: handle }) => {
      const [id, upload] = [String(candidateId), kit.files.uploaded(String(handle))];
      if (!kit.candidate(id)) return fail('candidate_not_found');
      if (!upload) return fail('invalid_input: fileHandle');
      kit.files.add({ owner: id, name: upload.filename, contentType: upload.contentType, bytes: upload.bytes });
      return ok(candidateJson(id));
    },
    'candidate.addTag': retagged(true),
    'candidate.removeTag': retagged(false),
    'candidate.createNote': ({ candidateId, note }) => {
      const application = kit.state.applications.find((a) => a.candidateId === candidateId);
      if (!application) return fail('candidate_not_found');
      const text = typeof note === 'string' ? note : (note as { value?: unknown } | undefined)?.value;
      return typeof text === 'string' ? ok(noteJson(kit.addNote(application, text))) : fail('invalid_input: note');
    },
    'candidate.listNotes': ({ candidateId }) =>
      ok(kit.state.notes.filter((n) => n.candidateId === candidateId).map(noteJson)),
  };
}

/** A stand-in of Ashby's API (RPC over POST, Basic auth) and its signed webhooks. */
export async function startAshbySandbox(options: SandboxOptions = {}) {
  /** Ashby's side of Ashby Assessments: the partner's registration, "Start Assessment", `assessment.update`. */
  const assessments = new AshbyAssessments();
  const rpcs = (kit: KitContext) =>
    Object.entries({ ...processRpcs(kit), ...candidateRpcs(kit) }).map(([name, handle]) =>
      route(`POST /${name}`, async ({ request, response }) => sendJson(response, 200, handle(await kit.json(request)))),
    );
  const sandbox = await startAtsSandbox(
    {
      ...{ profile: ashbyProfile, jobs: JOBS, apiKey: 'ashby-sandbox-key' },
      unauthorized: new Refusal(401, fail('invalid_api_key')),
      uploadRefusal: new Refusal(200, fail('file_upload_failed')),
      // RPC: every parameter is a body field; a query string is refused in Ashby's 200-with-errors form.
      unknownParameter: (name) => new Refusal(200, fail({ message: `Unknown parameter ${name}`, parameter: name })),
      routes: (kit) => [assessments.route(kit), ...rpcs(kit)],
      changed: changeDeliveries,
      // `candidateDelete` names the deleted candidate only (webhook payloads OpenAPI).
      candidateDeleted: ({ id }, _applications, target) =>
        signed(target, { action: 'candidateDelete', webhookActionId: randomUUID(), data: { candidate: { id } } }),
      ping: (target) => signed(target, { action: 'ping', data: { webhookId: randomUUID() } }),
      // "Automate on Stage Entry": a move into a stage with an automated assessment starts it, as Ashby does.
      stageEntered: (application, stage) => assessments.stageEntered(application.id, stage.name),
    },
    options,
  );
  return Object.assign(sandbox, { assessments });
}
