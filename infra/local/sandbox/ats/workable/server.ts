import { randomUUID } from 'node:crypto';
import { workableProfile } from '../../../../../shared/ats/workable/profile';
import { base64Bytes, contentTypeOf } from '../../file-store';
import { json, type Route, type RouteContext } from '../../http-kit';
import { setTags, startAtsSandbox, type AtsSandbox, type SandboxOptions } from '../ats-sandbox-kit';
import type { Body, KitApplication, KitContext, KitJob } from '../ats-sandbox-kit';
import { Refusal } from '../edge';
import { nextUrlPage } from '../paging';
import { signDelivery, type WebhookTarget } from '../signed-webhooks';

export const WORKABLE_SANDBOX_DEFAULTS = {
  ...{ token: 'workable-sandbox-token', subdomain: 'acme', memberIds: ['workable-member-1'] },
  /** A member who left: listed only with `status=inactive` or `all`. */
  inactiveMemberIds: ['workable-member-0'],
} as const;

/** A stage's slug (`id` here) is what moves and the job's stage list use; its name is what candidates show. */
const HIRED_STAGE = 'hired';
const STAGES = [
  { id: 'applied', name: 'Applied' },
  { id: 'ai-interview', name: 'AI Interview' },
  { id: 'hiring-manager-review', name: 'Hiring Manager Review' },
  { id: 'offer', name: 'Offer' },
  // Last, so the stages before it keep their places: a hire is a move here (ats-routes.md, lifecycle).
  { id: HIRED_STAGE, name: 'Hired' },
];

// The archived job, without the AI interview stage: "all jobs" means published ones.
const JOBS: KitJob[] = [
  { id: 'GROOV005', name: 'Backend Engineer', stages: STAGES },
  { id: 'ARCH0001', name: 'Office Manager', stages: [{ id: 'hired', name: 'Hired' }], state: 'archived' },
];
const refusal = (status: number, error: string) => new Refusal(status, { error });
/** A Workable list page: `limit` 50 by default (100 at most) after `since_id`, the next a whole URL. */
const page = <T extends { id: string }>(url: URL, key: string, all: readonly T[], show = (item: T): unknown => item) =>
  nextUrlPage(workableProfile.paging, url, { key, all, defaultLimit: 50 }, show);

/** A hired candidate is in the job's hired stage. */
const stageShown = (application: KitApplication): string =>
  application.exit?.kind === 'hired' ? HIRED_STAGE : application.stageId;

/**
 * A candidate as `GET /candidates/{id}` and `candidate_moved` show it (reference: candidate-events): `stage` by name;
 * a rejection or a withdrawal a disqualification with its free-text reason (no withdrawn flag), a hire `hired_at`.
 */
function candidateJson(kit: KitContext, application: KitApplication) {
  const { candidate, job } = kit.parties(application);
  const [stageId, exit] = [stageShown(application), application.exit];
  const disqualified = exit !== undefined && exit.kind !== 'hired';
  return {
    ...{ id: application.id, name: `${candidate.firstName} ${candidate.lastName}` },
    ...{ firstname: candidate.firstName, lastname: candidate.lastName, email: candidate.email },
    ...{ job: { shortcode: job.id, title: job.name }, stage: kit.stage(job.id, stageId)?.name ?? stageId },
    ...{ tags: kit.state.tags[application.id] ?? [], disqualified },
    disqualification_reason: disqualified ? exit.reason : null,
    disqualified_at: disqualified ? exit.at : null,
    hired_at: exit?.kind === 'hired' ? exit.at : null,
    account: { subdomain: WORKABLE_SANDBOX_DEFAULTS.subdomain, name: 'Acme' },
    updated_at: application.updatedAt,
  };
}

/** A listed candidate: the slug, and no `disqualified_at` (documented on the details only). */
function listedJson(kit: KitContext, application: KitApplication) {
  const { disqualified_at: _onDetailsOnly, ...listed } = candidateJson(kit, application);
  return { ...listed, stage: stageShown(application) };
}

/** The `candidate_moved` delivery of the candidate as of now (reference: webhooks: state at delivery), signed. */
function candidateMoved(kit: KitContext, application: KitApplication, target: WebhookTarget) {
  const document = {
    ...{ id: randomUUID(), event_type: 'candidate_moved', fired_at: new Date().toISOString() },
    ...{ resource_type: 'candidate', data: candidateJson(kit, application) },
  };
  return [signDelivery(workableProfile.signature, target, document, { event: 'candidate_moved' })];
}

/** The candidate's activity log (reference: candidate-activities): comments among the stage moves, newest first. */
function activitiesOf(kit: KitContext, application: KitApplication) {
  const comments = kit.state.notes
    .filter((n) => n.applicationId === application.id)
    .map((n) => ({ id: n.id, action: 'comment', body: n.body, created_at: n.at, member: { id: n.author } }));
  const moves = kit.state.moves
    .filter((m) => m.applicationId === application.id)
    .map((m, i) => ({
      ...{ id: `move-${application.id}-${i}`, action: 'moved', body: null, created_at: m.at },
      stage_name: kit.stage(application.jobId, m.toStageId)?.name,
    }));
  return [...comments, ...moves].sort((a, b) => b.created_at.localeCompare(a.created_at));
}

/** Active members only unless `status` (active, inactive, all) says. */
function membersOf(status: string) {
  const { memberIds, inactiveMemberIds } = WORKABLE_SANDBOX_DEFAULTS;
  return [
    ...memberIds.map((id) => ({ id, name: 'Recruiter', active: true })),
    ...inactiveMemberIds.map((id) => ({ id, name: 'Former recruiter', active: false })),
  ].filter((m) => status === 'all' || m.active === (status === 'active'));
}

/** The documented candidate list's filters (reference: job-candidates-index): the job, the stage's slug, e-mail. */
function candidatesOf(kit: KitContext, url: URL) {
  const [shortcode, stage] = [url.searchParams.get('shortcode'), url.searchParams.get('stage')];
  const email = url.searchParams.get('email')?.toLowerCase();
  return kit.state.applications.filter(
    (a) =>
      (!shortcode || a.jobId === shortcode) &&
      (!stage || stageShown(a) === stage) &&
      (!email || kit.parties(a).candidate.email.toLowerCase() === email),
  );
}

/** Subscriptions are API-only; a target URL is unique per subscription (409), signed with the account's token. */
async function subscribe(kit: KitContext, { request }: RouteContext) {
  const { target, event } = await kit.json(request);
  if (typeof target !== 'string' || event !== 'candidate_moved') throw refusal(422, 'target and event are required');
  if (kit.state.webhooks.some((w) => w.url === target)) throw refusal(409, 'target already subscribed');
  const [id, secret] = [randomUUID(), WORKABLE_SANDBOX_DEFAULTS.token];
  kit.state.webhooks.push({ id, url: target, secret, events: ['candidate_moved'] });
  return { id };
}

const subscriptionJson = (w: WebhookTarget, i: number) => ({
  ...{ id: w.id ?? `control-${i}`, target: w.url, event: 'candidate_moved' },
  status: w.enabled === false ? 'disabled' : 'active',
});

/** The account's jobs, members, subscriptions and candidate list, and its job's stages, as a table of routes. */
const accountRoutes = (kit: KitContext): Route[] => [
  // Oldest first, every state unless `state` says (reference: jobs; ats-facts, Corrections 2026-11b).
  json('GET /spi/v3/jobs', ({ url }) => {
    const state = url.searchParams.get('state');
    const jobs = kit.state.jobs.filter((j) => !state || (j.state ?? 'published') === state);
    return page(url, 'jobs', jobs, (j) => ({ shortcode: j.id, title: j.name, state: j.state ?? 'published' }));
  }),
  json('GET /spi/v3/members', ({ url }) => page(url, 'members', membersOf(url.searchParams.get('status') ?? 'active'))),
  json('GET /spi/v3/subscriptions', () => ({ subscriptions: kit.state.webhooks.map(subscriptionJson) })),
  json('POST /spi/v3/subscriptions', 201, (context) => subscribe(kit, context)),
  json('GET /spi/v3/candidates', ({ url }) =>
    page(url, 'candidates', candidatesOf(kit, url), (a) => listedJson(kit, a)),
  ),
  json('GET /spi/v3/jobs/:shortcode/stages', ({ params }) => {
    const job = kit.job(params.shortcode as string);
    if (!job) throw refusal(404, 'Not found');
    const kind = (slug: string) => (slug === HIRED_STAGE ? 'hired' : 'interview');
    return { stages: job.stages.map((s, position) => ({ slug: s.id, name: s.name, kind: kind(s.id), position })) };
  }),
];

type CandidateHandler = (context: RouteContext, application: KitApplication, body: Body) => unknown;
/** A route about one candidate (`'POST /move'`): 404 without it; a POST is made as a member (`member_id`). */
function candidate(kit: KitContext, at: string, handle: CandidateHandler): Route {
  const [method, path = ''] = at.split(' ');
  return json(`${method} /spi/v3/candidates/:id${path}`, async (context) => {
    const application = kit.application(context.params.id as string);
    if (!application) throw refusal(404, 'Not found');
    const body = method === 'GET' ? {} : await kit.json(context.request);
    if (method === 'POST' && !body.member_id) throw refusal(422, 'member_id is required');
    return handle(context, application, body);
  });
}

const candidateRoutes = (kit: KitContext): Route[] => [
  candidate(kit, 'GET', (_context, application) => ({ candidate: candidateJson(kit, application) })),
  // Replaces the candidate's tags (reference: candidate-tags).
  candidate(kit, 'PUT /tags', ({ response }, application, { tags }) => {
    if (!Array.isArray(tags)) throw refusal(422, 'tags must be a list');
    setTags(kit.state, application.id, [...new Set(tags.map(String))]);
    response.writeHead(204).end();
  }),
  // 201 Created, with an empty body (the reference's example); one attachment, its bytes in base64.
  candidate(kit, 'POST /comments', ({ response }, application, body) => {
    const { body: text, attachment } = (body.comment ?? {}) as { body?: unknown; attachment?: Body };
    if (typeof text !== 'string' || !text) throw refusal(422, 'comment.body is required');
    const [name, bytes] = [attachment?.name, base64Bytes(attachment?.data)];
    if (attachment && (typeof name !== 'string' || !name || !bytes))
      throw refusal(422, 'comment.attachment must be one {name, data (base64)}');
    if (typeof name === 'string' && bytes)
      kit.files.add({ owner: application.id, name, contentType: contentTypeOf(name), bytes });
    kit.addNote(application, text, String(body.member_id));
    response.writeHead(201).end();
  }),
  // Newest first, paged by `limit` and `max_id`.
  candidate(kit, 'GET /activities', ({ url }, application) => {
    const list = { key: 'activities', all: activitiesOf(kit, application), after: 'max_id' as const, defaultLimit: 50 };
    return nextUrlPage(workableProfile.paging, url, list, (a) => a);
  }),
  // The move takes the stage's slug (reference: move-candidate); a name is not a slug.
  candidate(kit, 'POST /move', (_context, application, { target_stage }) => {
    if (!kit.stage(application.jobId, String(target_stage)))
      throw refusal(422, 'target_stage is not a stage of this job');
    kit.moveByApi(application, String(target_stage));
    return {};
  }),
];

/** A stand-in of Workable's SPI v3 (a bearer account token, its profile's window) and its signed webhooks. */
export function startWorkableSandbox(options: SandboxOptions = {}): Promise<AtsSandbox> {
  return startAtsSandbox(
    {
      ...{ profile: workableProfile, jobs: JOBS, apiKey: WORKABLE_SANDBOX_DEFAULTS.token, bearer: true },
      unauthorized: refusal(401, 'Not authorized'),
      uploadRefusal: refusal(422, 'comment.attachment could not be saved'),
      unknownParameter: (name) => refusal(422, `${name} is not a valid parameter`),
      routes: (kit) => [...accountRoutes(kit), ...candidateRoutes(kit)],
      // No lifecycle event of their own (reference: webhook-subscriptions-candidates-employees): a disqualification,
      // its revert and a hire arrive as candidate_moved ([impl]; unconfirmed for disqualifying).
      changed: (kit, application, target) => candidateMoved(kit, application, target),
    },
    options,
  );
}
