import { randomUUID } from 'node:crypto';
import { workableProfile } from '../../../../../shared/ats/workable/profile';
import { sendJson, type Route, type RouteContext } from '../../http-kit';
import { startAtsSandbox, type SandboxOptions } from '../ats-sandbox-kit';
import type { AtsSandbox, KitApplication, KitContext, KitStage } from '../ats-sandbox-kit';
import { nextUrlPage } from '../paging';
import { signDelivery, type WebhookTarget } from '../signed-webhooks';

export const WORKABLE_SANDBOX_DEFAULTS = {
  port: 4050,
  token: 'workable-sandbox-token',
  subdomain: 'acme',
  memberIds: ['workable-member-1'],
  /** A member who left: listed only with `status=inactive` or `all`. */
  inactiveMemberIds: ['workable-member-0'],
} as const;

/** The slug of a job's hired stage, the one of kind "hired" in the job's stage list. */
const HIRED_STAGE = 'hired';

/** A stage's slug (`id` here) is what moves and the job's stage list use; its name is what candidates show. */
const STAGES: KitStage[] = [
  { id: 'applied', name: 'Applied' },
  { id: 'ai-interview', name: 'AI Interview' },
  { id: 'hiring-manager-review', name: 'Hiring Manager Review' },
  { id: 'offer', name: 'Offer' },
  // Last, so the stages before it keep their places: a hire is a move here (ats-routes.md, lifecycle).
  { id: HIRED_STAGE, name: 'Hired' },
];

const JOBS = [
  { id: 'GROOV005', name: 'Backend Engineer', stages: STAGES },
  // Archived, without the AI interview stage: "all jobs" means published ones.
  { id: 'ARCH0001', name: 'Office Manager', stages: [{ id: 'hired', name: 'Hired' }], state: 'archived' },
];

/** A Workable list page: `limit` 50 by default (100 at most) after `since_id`, the next page a whole URL. */
const page = <T extends { id: string }>(url: URL, key: string, all: readonly T[], show: (item: T) => unknown) =>
  nextUrlPage(workableProfile.paging, url, { key, all, defaultLimit: 50 }, show);

/** A hired candidate is in the job's hired stage; the others where they were put. */
const stageShown = (application: KitApplication): string =>
  application.exit?.kind === 'hired' ? HIRED_STAGE : application.stageId;

/**
 * How Workable shows a candidate out of the process (reference: candidate-events, job-candidates-show): a rejection
 * and a withdrawal are both a disqualification with its free-text reason (there is no withdrawn flag), a hire is
 * `hired_at` (with the move into the hired stage). `disqualified_at` is documented on the details and the webhook.
 */
function exitFields(application: KitApplication) {
  const exit = application.exit;
  const disqualified = exit !== undefined && exit.kind !== 'hired';
  return {
    disqualified,
    disqualification_reason: disqualified ? exit.reason : null,
    disqualified_at: disqualified ? exit.at : null,
    hired_at: exit?.kind === 'hired' ? exit.at : null,
  };
}

/**
 * A candidate as `GET /candidates/{id}` and the `candidate_moved` webhook show it (reference: candidate-events,
 * job-candidates-show): `stage` is "the name of the current stage".
 */
function candidateJson(kit: KitContext, application: KitApplication) {
  const { candidate, job } = kit.parties(application);
  const stageId = stageShown(application);
  return {
    id: application.id,
    name: `${candidate.firstName} ${candidate.lastName}`,
    firstname: candidate.firstName,
    lastname: candidate.lastName,
    email: candidate.email,
    job: { shortcode: job.id, title: job.name },
    stage: kit.stage(job.id, stageId)?.name ?? stageId,
    tags: kit.state.tags[application.id] ?? [],
    ...exitFields(application),
    account: { subdomain: WORKABLE_SANDBOX_DEFAULTS.subdomain, name: 'Acme' },
    updated_at: application.updatedAt,
  };
}

/** The `candidate_moved` delivery of the candidate as of now (reference: webhooks: state at delivery), signed. */
function candidateMoved(kit: KitContext, application: KitApplication, target: WebhookTarget) {
  const document = {
    id: randomUUID(),
    event_type: 'candidate_moved',
    fired_at: new Date().toISOString(),
    resource_type: 'candidate',
    data: candidateJson(kit, application),
  };
  return [signDelivery(workableProfile.signature, target.secret, document, { event: 'candidate_moved' })];
}

/**
 * The candidate's activity log (reference: candidate-activities): comments (`action: "comment"`, `body`) among
 * the stage moves, newest first, paged by `limit` and `max_id` with `paging.next` a whole URL.
 */
function activitiesOf(kit: KitContext, application: KitApplication) {
  const comments = kit.state.notes
    .filter((n) => n.applicationId === application.id)
    .map((n) => ({ id: n.id, action: 'comment', body: n.body, created_at: n.at, member: { id: n.author } }));
  const moves = kit.state.moves
    .filter((m) => m.applicationId === application.id)
    .map((m, i) => ({
      id: `move-${application.id}-${i}`,
      action: 'moved',
      body: null,
      stage_name: kit.stage(application.jobId, m.toStageId)?.name,
      created_at: m.at,
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

/** A listed candidate: the slug, and no `disqualified_at` (documented on the details only). */
function listedJson(kit: KitContext, application: KitApplication) {
  const { disqualified_at: _onDetailsOnly, ...listed } = candidateJson(kit, application);
  return { ...listed, stage: stageShown(application) };
}

/** Subscriptions are API-only; a target URL is unique per subscription (409), signed with the account's token. */
async function subscribe(kit: KitContext, { request, response }: RouteContext) {
  const body = await kit.json(request);
  if (typeof body.target !== 'string' || body.event !== 'candidate_moved')
    return sendJson(response, 422, { error: 'target and event are required' });
  if (kit.state.webhooks.some((w) => w.url === body.target))
    return sendJson(response, 409, { error: 'target already subscribed' });
  const id = randomUUID();
  const secret = WORKABLE_SANDBOX_DEFAULTS.token;
  kit.state.webhooks.push({ id, url: body.target, secret, events: ['candidate_moved'] });
  sendJson(response, 201, { id });
}

const subscriptionJson = (w: WebhookTarget, i: number) => ({
  id: w.id ?? `control-${i}`,
  target: w.url,
  event: 'candidate_moved',
  status: w.enabled === false ? 'disabled' : 'active',
});

const LIST = ['limit', 'since_id', 'max_id'];

type CandidateHandler = (context: RouteContext, application: KitApplication, body: Record<string, unknown>) => void;

/** A route about one candidate (`:id`): 404 without it; a POST is made as a member (422 without `member_id`). */
const candidate = (kit: KitContext, write: boolean, handle: CandidateHandler) => async (context: RouteContext) => {
  const application = kit.application(context.params.id as string);
  if (!application) return sendJson(context.response, 404, { error: 'Not found' });
  const body = write ? await kit.json(context.request) : {};
  if (write && context.request.method === 'POST' && !body.member_id)
    return sendJson(context.response, 422, { error: 'member_id is required' });
  return handle(context, application, body);
};

/** The account's jobs, members, subscriptions and candidate list, as a table of routes. */
function accountRoutes(kit: KitContext): Route[] {
  return [
    {
      // Oldest first, every state unless `state` says (reference: jobs; ats-facts, Corrections 2026-11b).
      method: 'GET',
      pattern: '/spi/v3/jobs',
      query: ['state', ...LIST, 'created_after', 'updated_after', 'include_fields'],
      handle: ({ response, url }) => {
        const state = url.searchParams.get('state');
        const jobs = kit.state.jobs.filter((j) => !state || (j.state ?? 'published') === state);
        const show = (j: (typeof jobs)[number]) => ({ shortcode: j.id, title: j.name, state: j.state ?? 'published' });
        sendJson(response, 200, page(url, 'jobs', jobs, show));
      },
    },
    {
      method: 'GET',
      pattern: '/spi/v3/members',
      query: [...LIST, 'role', 'shortcode', 'email', 'name', 'status'],
      handle: ({ response, url }) =>
        sendJson(
          response,
          200,
          page(url, 'members', membersOf(url.searchParams.get('status') ?? 'active'), (m) => m),
        ),
    },
    {
      method: 'GET',
      pattern: '/spi/v3/subscriptions',
      query: [],
      handle: ({ response }) => sendJson(response, 200, { subscriptions: kit.state.webhooks.map(subscriptionJson) }),
    },
    { method: 'POST', pattern: '/spi/v3/subscriptions', query: [], handle: (context) => subscribe(kit, context) },
    {
      method: 'GET',
      pattern: '/spi/v3/candidates',
      query: ['email', 'shortcode', 'stage', ...LIST, 'created_after', 'updated_after'],
      handle: ({ response, url }) =>
        sendJson(
          response,
          200,
          page(url, 'candidates', candidatesOf(kit, url), (a) => listedJson(kit, a)),
        ),
    },
    {
      method: 'GET',
      pattern: '/spi/v3/jobs/:shortcode/stages',
      query: [],
      handle: ({ response, params }) => {
        const job = kit.job(params.shortcode as string);
        if (!job) return sendJson(response, 404, { error: 'Not found' });
        const kind = (slug: string) => (slug === HIRED_STAGE ? 'hired' : 'interview');
        const stages = job.stages.map((s, position) => ({ slug: s.id, name: s.name, kind: kind(s.id), position }));
        sendJson(response, 200, { stages });
      },
    },
  ];
}

/** One candidate's routes: 404 without the candidate, a POST 422 without the member it is made as. */
function candidateRoutes(kit: KitContext): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/spi/v3/candidates/:id',
      query: [],
      handle: candidate(kit, false, ({ response }, a) => sendJson(response, 200, { candidate: candidateJson(kit, a) })),
    },
    {
      // Replaces the candidate's tags (reference: candidate-tags).
      method: 'PUT',
      pattern: '/spi/v3/candidates/:id/tags',
      query: [],
      handle: candidate(kit, true, ({ response }, application, { tags }) => {
        if (!Array.isArray(tags)) return sendJson(response, 422, { error: 'tags must be a list' });
        kit.state.tags[application.id] = [...new Set(tags.map(String))];
        response.writeHead(204).end();
      }),
    },
    {
      // 201 Created, with an empty body (the reference's example).
      method: 'POST',
      pattern: '/spi/v3/candidates/:id/comments',
      query: [],
      handle: candidate(kit, true, ({ response }, application, body) => {
        const text = (body.comment as { body?: unknown } | undefined)?.body;
        if (typeof text !== 'string' || !text) return sendJson(response, 422, { error: 'comment.body is required' });
        kit.addNote(application, text, String(body.member_id));
        response.writeHead(201).end();
      }),
    },
    {
      method: 'GET',
      pattern: '/spi/v3/candidates/:id/activities',
      query: [...LIST, 'actions', 'updated_after'],
      handle: candidate(kit, false, ({ response, url }, application) => {
        const all = activitiesOf(kit, application);
        const list = { key: 'activities', all, after: 'max_id' as const, defaultLimit: 50 };
        sendJson(
          response,
          200,
          nextUrlPage(workableProfile.paging, url, list, (a) => a),
        );
      }),
    },
    {
      // The move takes the stage's slug (reference: move-candidate); a name is not a slug.
      method: 'POST',
      pattern: '/spi/v3/candidates/:id/move',
      query: [],
      handle: candidate(kit, true, ({ response }, application, body) => {
        if (!kit.stage(application.jobId, String(body.target_stage)))
          return sendJson(response, 422, { error: 'target_stage is not a stage of this job' });
        kit.moveByApi(application, String(body.target_stage));
        sendJson(response, 200, {});
      }),
    },
  ];
}

/** A stand-in of Workable's SPI v3 (a bearer account token, its profile's window) and its signed webhooks. */
export function startWorkableSandbox(options: SandboxOptions = {}): Promise<AtsSandbox> {
  return startAtsSandbox(
    {
      profile: workableProfile,
      port: WORKABLE_SANDBOX_DEFAULTS.port,
      jobs: JOBS,
      credentials: { atsApiKey: WORKABLE_SANDBOX_DEFAULTS.token },
      authenticate: (request) =>
        request.headers.authorization === `Bearer ${WORKABLE_SANDBOX_DEFAULTS.token}` ? 'token' : undefined,
      unauthorized: (response) => sendJson(response, 401, { error: 'Not authorized' }),
      unknownParameter: (response, name) => sendJson(response, 422, { error: `${name} is not a valid parameter` }),
      routes: (kit) => [...accountRoutes(kit), ...candidateRoutes(kit)],
      stageChange: candidateMoved,
      // No event of their own (reference: webhook-subscriptions-candidates-employees): a disqualification, its revert
      // and a hire arrive as candidate_moved, the candidate as of delivery ([impl]; unconfirmed for disqualifying).
      lifecycleChange: candidateMoved,
    },
    options,
  );
}
