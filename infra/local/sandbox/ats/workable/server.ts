import { workableProfile } from '../../../../../shared/ats/workable/profile';
import { signatureFor } from '../../../../../shared/ats/signatures';
import { randomUUID } from 'node:crypto';
import { sendJson, type RouteContext } from '../../http-kit';
import { startAtsSandbox } from '../ats-sandbox-kit';
import type { AtsSandbox, KitApplication, KitContext, KitStage, SignedDelivery } from '../ats-sandbox-kit';
import type { WebhookTarget } from '../signed-webhooks';

/**
 * One page of a Workable list: `limit` (50 by default, 100 at most) items after `since_id`, and `paging.next`, the
 * URL of the next page, while there is one.
 */
function page<T extends { id: string }>(
  url: URL,
  all: T[],
  key: string,
  show: (item: T) => unknown,
  after: 'since_id' | 'max_id' = 'since_id',
) {
  const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 50) || 50));
  const since = url.searchParams.get(after);
  const start = since === null ? 0 : all.findIndex((item) => item.id === since) + 1;
  const items = all.slice(start, start + limit);
  const next = new URL(url.toString());
  next.searchParams.set('limit', String(limit));
  const last = items[items.length - 1];
  if (last) next.searchParams.set(after, last.id);
  return { [key]: items.map(show), ...(start + limit < all.length ? { paging: { next: next.toString() } } : {}) };
}

export const WORKABLE_SANDBOX_DEFAULTS = {
  port: 4050,
  token: 'workable-sandbox-token',
  subdomain: 'acme',
  memberIds: ['workable-member-1'],
  /** A member who left: listed only with `status=inactive` or `all`. */
  inactiveMemberIds: ['workable-member-0'],
  /** An account token's window, as Workable's profile documents it. */
  rateLimit: workableProfile.rate.requests,
  rateWindowMs: workableProfile.rate.windowMs,
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

/** The `candidate_moved` delivery of the candidate as of now (reference: webhooks: state at delivery), signed. */
function candidateMoved(kit: KitContext, application: KitApplication, target: WebhookTarget): SignedDelivery[] {
  const body = Buffer.from(
    JSON.stringify({
      id: randomUUID(),
      event_type: 'candidate_moved',
      fired_at: new Date().toISOString(),
      resource_type: 'candidate',
      data: candidateJson(kit, application),
    }),
  );
  return [
    {
      body,
      headers: { [SIGNATURE.header.toLowerCase()]: signatureFor(SIGNATURE, target.secret, body) },
      eventId: randomUUID(),
      event: 'candidate_moved',
    },
  ];
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

const SIGNATURE = workableProfile.signature;

/** A stand-in of Workable's SPI v3 (bearer token, 10 requests per 10 s) and its signed webhooks. */
export function startWorkableSandbox(
  options: { port?: number; rateLimit?: number | undefined; rateWindowMs?: number | undefined } = {},
): Promise<AtsSandbox> {
  const limit = options.rateLimit ?? WORKABLE_SANDBOX_DEFAULTS.rateLimit;
  // Every answer carries the window (reference: rate-limits); the reset is "the timestamp of the next interval".
  const names = workableProfile.rateHeaders;
  const rateHeaders = (window: { remaining: number; resetMs: number }) => ({
    [names.limit]: String(limit),
    [names.remaining]: String(window.remaining),
    [names.reset]: String(Math.ceil((Date.now() + window.resetMs) / 1000)),
  });
  return startAtsSandbox({
    kind: 'workable',
    port: options.port ?? WORKABLE_SANDBOX_DEFAULTS.port,
    jobs: [
      { id: 'GROOV005', name: 'Backend Engineer', stages: STAGES },
      // Archived, without the AI interview stage: "all jobs" means published ones.
      { id: 'ARCH0001', name: 'Office Manager', stages: [{ id: 'hired', name: 'Hired' }], state: 'archived' },
    ],
    // Per account token; whether the intervals are fixed on the clock is not documented ("timestamp of the next
    // interval", reference: rate-limits): here each starts at its first request.
    rateLimit: { limit, windowMs: options.rateWindowMs ?? WORKABLE_SANDBOX_DEFAULTS.rateWindowMs },
    rateHeaders,
    // No Retry-After: the wait is in the reset header.
    rateLimited: (response, resetMs) =>
      sendJson(response, 429, { error: 'Too many requests' }, rateHeaders({ remaining: 0, resetMs })),
    credentials: { atsApiKey: WORKABLE_SANDBOX_DEFAULTS.token },
    authenticate: (request) =>
      request.headers.authorization === `Bearer ${WORKABLE_SANDBOX_DEFAULTS.token}` ? 'token' : undefined,
    unauthorized: (response) => sendJson(response, 401, { error: 'Not authorized' }),
    unknownParameter: (response, name) => sendJson(response, 422, { error: `${name} is not a valid parameter` }),
    routes: (kit) => {
      const notFound = (response: Parameters<typeof sendJson>[0]) => sendJson(response, 404, { error: 'Not found' });
      /** A route about one candidate (`:id`): 404 when there is none. */
      const forApplication =
        (handle: (context: RouteContext, application: KitApplication) => unknown) => (context: RouteContext) => {
          const application = kit.application(context.params.id as string);
          if (!application) return notFound(context.response);
          return handle(context, application);
        };
      /** A write about one candidate, made as a member of the account (`member_id`; 422 without one). */
      const asMember = (
        handle: (
          context: RouteContext,
          application: KitApplication,
          body: Record<string, unknown>,
          memberId: string,
        ) => unknown,
      ) =>
        forApplication(async (context, application) => {
          const body = await kit.json(context.request);
          if (!body.member_id) return sendJson(context.response, 422, { error: 'member_id is required' });
          return handle(context, application, body, String(body.member_id));
        });
      return [
        {
          method: 'GET',
          pattern: '/spi/v3/jobs',
          query: ['state', 'limit', 'since_id', 'max_id', 'created_after', 'updated_after', 'include_fields'],
          // Oldest first, every state unless `state` says; `limit` 50 by default, 100 at most; the next page is
          // `paging.next` (reference: jobs; ats-facts, Corrections 2026-11b).
          handle: ({ response, url }) => {
            const state = url.searchParams.get('state');
            const jobs = kit.state.jobs.filter((j) => !state || (j.state ?? 'published') === state);
            sendJson(
              response,
              200,
              page(url, jobs, 'jobs', (j) => ({ shortcode: j.id, title: j.name, state: j.state ?? 'published' })),
            );
          },
        },
        {
          method: 'GET',
          pattern: '/spi/v3/members',
          query: ['limit', 'since_id', 'max_id', 'role', 'shortcode', 'email', 'name', 'status'],
          // Active members only unless `status` (active, inactive, all) says; 50 a page by default, `paging.next`.
          handle: ({ response, url }) => {
            const status = url.searchParams.get('status') ?? 'active';
            const members = [
              ...WORKABLE_SANDBOX_DEFAULTS.memberIds.map((id) => ({ id, name: 'Recruiter', active: true })),
              ...WORKABLE_SANDBOX_DEFAULTS.inactiveMemberIds.map((id) => ({
                id,
                name: 'Former recruiter',
                active: false,
              })),
            ].filter((m) => status === 'all' || m.active === (status === 'active'));
            sendJson(
              response,
              200,
              page(url, members, 'members', (m) => m),
            );
          },
        },
        {
          // Subscriptions are API-only; a target URL is unique per subscription (409 otherwise).
          method: 'GET',
          pattern: '/spi/v3/subscriptions',
          query: [],
          handle: ({ response }) =>
            sendJson(response, 200, {
              subscriptions: kit.state.webhooks.map((w, i) => ({
                id: w.id ?? `control-${i}`,
                target: w.url,
                event: 'candidate_moved',
                status: w.enabled === false ? 'disabled' : 'active',
              })),
            }),
        },
        {
          method: 'POST',
          pattern: '/spi/v3/subscriptions',
          query: [],
          handle: async ({ request, response }) => {
            const body = await kit.json(request);
            if (typeof body.target !== 'string' || body.event !== 'candidate_moved')
              return sendJson(response, 422, { error: 'target and event are required' });
            if (kit.state.webhooks.some((w) => w.url === body.target))
              return sendJson(response, 409, { error: 'target already subscribed' });
            const id = randomUUID();
            // Deliveries are signed with the account's API token (reference: webhooks).
            kit.state.webhooks.push({
              id,
              url: body.target,
              secret: WORKABLE_SANDBOX_DEFAULTS.token,
              events: ['candidate_moved'],
            });
            sendJson(response, 201, { id });
          },
        },
        {
          method: 'GET',
          pattern: '/spi/v3/candidates/:id',
          query: [],
          handle: forApplication(({ response }, application) => {
            sendJson(response, 200, { candidate: candidateJson(kit, application) });
          }),
        },
        {
          // Replaces the candidate's tags (reference: candidate-tags).
          method: 'PUT',
          pattern: '/spi/v3/candidates/:id/tags',
          query: [],
          handle: forApplication(async ({ request, response }, application) => {
            const tags = (await kit.json(request)).tags;
            if (!Array.isArray(tags)) return sendJson(response, 422, { error: 'tags must be a list' });
            kit.state.tags[application.id] = [...new Set(tags.map(String))];
            response.writeHead(204).end();
          }),
        },
        {
          method: 'POST',
          pattern: '/spi/v3/candidates/:id/comments',
          query: [],
          handle: asMember(({ response }, application, body, memberId) => {
            const text = (body.comment as { body?: unknown } | undefined)?.body;
            if (typeof text !== 'string' || !text)
              return sendJson(response, 422, { error: 'comment.body is required' });
            kit.addNote(application, text, memberId);
            // 201 Created, with an empty body (the reference's example).
            response.writeHead(201).end();
          }),
        },
        {
          method: 'GET',
          pattern: '/spi/v3/candidates/:id/activities',
          query: ['limit', 'since_id', 'max_id', 'actions', 'updated_after'],
          handle: forApplication(({ response, url }, application) =>
            sendJson(
              response,
              200,
              page(url, activitiesOf(kit, application), 'activities', (a) => a, 'max_id'),
            ),
          ),
        },
        {
          method: 'POST',
          pattern: '/spi/v3/candidates/:id/move',
          query: [],
          handle: asMember(({ response }, application, body) => {
            // The move takes the stage's slug (reference: move-candidate); a name is not a slug.
            if (!kit.stage(application.jobId, String(body.target_stage)))
              return sendJson(response, 422, { error: 'target_stage is not a stage of this job' });
            kit.moveByApi(application, String(body.target_stage));
            sendJson(response, 200, {});
          }),
        },
        {
          // The job's candidates (reference: job-candidates-index): `stage` filters by slug, and the list gives the
          // slug; `limit` and `since_id` paging, `paging.next` a whole URL.
          method: 'GET',
          pattern: '/spi/v3/candidates',
          query: ['email', 'shortcode', 'stage', 'limit', 'since_id', 'max_id', 'created_after', 'updated_after'],
          // The documented candidate list (reference: job-candidates-index): `shortcode` (the job), `stage` (its
          // slug), `email`; `limit` 50 by default, 100 at most; the next page is `paging.next`.
          handle: ({ response, url }) => {
            const shortcode = url.searchParams.get('shortcode');
            const stage = url.searchParams.get('stage');
            const email = url.searchParams.get('email')?.toLowerCase();
            const all = kit.state.applications.filter(
              (a) =>
                (!shortcode || a.jobId === shortcode) &&
                (!stage || stageShown(a) === stage) &&
                (!email || kit.parties(a).candidate.email.toLowerCase() === email),
            );
            sendJson(
              response,
              200,
              page(url, all, 'candidates', (a) => {
                // The list gives the slug, `disqualified`, its reason and `hired_at`; `disqualified_at` is
                // documented on the details only.
                const { disqualified_at: _onDetailsOnly, ...listed } = candidateJson(kit, a);
                return { ...listed, stage: stageShown(a) };
              }),
            );
          },
        },
        {
          method: 'GET',
          pattern: '/spi/v3/jobs/:shortcode/stages',
          query: [],
          handle: ({ response, params }) => {
            const job = kit.job(params.shortcode as string);
            if (!job) return notFound(response);
            sendJson(response, 200, {
              stages: job.stages.map((s, position) => ({
                slug: s.id,
                name: s.name,
                kind: s.id === HIRED_STAGE ? 'hired' : 'interview',
                position,
              })),
            });
          },
        },
      ];
    },
    stageChange: (kit, application, target) => candidateMoved(kit, application, target),
    // No event of their own (reference: webhook-subscriptions-candidates-employees): a disqualification, its revert
    // and a hire arrive as candidate_moved, the candidate as of delivery ([impl]; unconfirmed for disqualifying).
    lifecycleChange: (kit, application, target) => candidateMoved(kit, application, target),
  });
}
