import { randomBytes, randomUUID } from 'node:crypto';
import { leverProfile } from '../../../../../shared/ats/lever/profile';
import { sendJson, type Route, type RouteContext } from '../../http-kit';
import { startAtsSandbox, type SandboxOptions } from '../ats-sandbox-kit';
import type { AtsSandbox, KitApplication, KitContext, KitExit, KitStage, LifecycleAction } from '../ats-sandbox-kit';
import { bodyPage } from '../paging';
import { deliverSigned, receives, secretFor, signDelivery, type WebhookTarget } from '../signed-webhooks';

export const LEVER_SANDBOX_DEFAULTS = { port: 4040, apiKey: 'lever-sandbox-key', userIds: ['lever-user-1'] } as const;

/**
 * The webhooks the connector registers: one per event type, each with the signature token Lever issues for it
 * (help.lever.co 20087284427677 names the events; 4402565460237 the token per webhook).
 */
export const LEVER_WEBHOOK_EVENTS = [
  'candidateStageChange',
  'candidateArchiveChange',
  'candidateHired',
  'candidateDeleted',
] as const;

/** Archive reason ids of the account (`GET /v1/archive_reasons`: texts per account): one per way of leaving. */
export const LEVER_ARCHIVE_REASON_IDS: Readonly<Record<KitExit['kind'], string>> = {
  rejected: 'reason-rejected',
  withdrawn: 'reason-withdrew',
  hired: 'reason-hired',
};

/** `GET /opportunities` filters and paging (Lever API reference, "List all opportunities"). */
const OPPORTUNITY_FILTERS = [
  ...['limit', 'offset', 'include', 'expand', 'tag', 'email', 'origin', 'source', 'confidentiality', 'stage_id'],
  ...['posting_id', 'archived_posting_id', 'created_at_start', 'created_at_end', 'updated_at_start'],
  ...['updated_at_end', 'advanced_at_start', 'advanced_at_end', 'archived_at_start', 'archived_at_end'],
  ...['archived', 'archive_reason_id', 'snoozed', 'contact_id'],
];

/** Lever's stages are global: every posting shares them. */
const STAGES: KitStage[] = [
  { id: 'applicant-new', name: 'New applicant' },
  { id: 'c1b2-ai-interview', name: 'AI Interview' },
  { id: 'd3e4-hm-review', name: 'Hiring Manager Review' },
  { id: 'offer', name: 'Offer' },
];

/** A webhook of `event`, signed with that event's own token; ids only in `data`, as every Lever webhook. */
const delivery = (target: WebhookTarget, event: string, data: Record<string, unknown>) =>
  signDelivery(leverProfile.signature, secretFor(target, event), { event, data }, { event });

const idsOf = (application: KitApplication) => ({
  opportunityId: application.id,
  candidateId: application.candidateId,
  contactId: application.candidateId,
});

/** `archived` as the opportunity carries it: null in the pipeline, else `{archivedAt, reason}` (epoch ms, an id). */
function archivedJson(application: KitApplication) {
  if (application.status !== 'archived') return null;
  const exit = application.exit;
  return {
    archivedAt: Date.parse(exit?.at ?? application.updatedAt),
    reason: LEVER_ARCHIVE_REASON_IDS[exit?.kind ?? 'rejected'],
  };
}

function opportunityJson(kit: KitContext, application: KitApplication, expand = false) {
  const { candidate } = kit.parties(application);
  const ref = `app-${application.id}`;
  return {
    id: application.id,
    name: `${candidate.firstName} ${candidate.lastName}`,
    contact: candidate.id,
    emails: [candidate.email],
    stage: application.stageId,
    archived: archivedJson(application),
    applications: expand ? [{ id: ref, posting: application.jobId, type: 'posting' }] : [ref],
  };
}

/** A note as Lever reads it back: the text written as `value` is in `fields[].value` (NangoHQ's notes model). */
function noteJson(note: { id: string; body: string; author?: string | undefined; at: string }, secret: boolean) {
  const fields = [{ type: 'note', text: 'Note', value: note.body }];
  const at = Date.parse(note.at);
  return {
    id: note.id,
    text: 'Note',
    fields,
    user: note.author ?? null,
    secret,
    completedAt: null,
    createdAt: at,
    deletedAt: null,
  };
}

/**
 * What Lever sends for a lifecycle action (ats-routes.json, Lever webhooks): a rejection, a withdrawal and an
 * unarchive are `candidateArchiveChange` (`toArchived` null when unarchived); a hire is `candidateHired` and, since
 * Lever archives hired opportunities, a `candidateArchiveChange` with the hired reason too.
 */
function lifecycleDeliveries(application: KitApplication, target: WebhookTarget, action: LifecycleAction) {
  const toArchived = action === 'unreject' ? null : archivedJson(application);
  const archiveChange = delivery(target, 'candidateArchiveChange', { ...idsOf(application), toArchived });
  return action === 'hire' ? [delivery(target, 'candidateHired', idsOf(application)), archiveChange] : [archiveChange];
}

/** The opportunities of `GET /opportunities`: `contact_id`, `stage_id`, `posting_id` (repeatable), `archived`. */
function opportunitiesOf(kit: KitContext, url: URL) {
  const [contact, archived] = [url.searchParams.get('contact_id'), url.searchParams.get('archived')];
  const [stages, postings] = [url.searchParams.getAll('stage_id'), url.searchParams.getAll('posting_id')];
  return kit.state.applications.filter(
    (a) =>
      (!contact || a.candidateId === contact) &&
      (!stages.length || stages.includes(a.stageId)) &&
      (!postings.length || postings.includes(a.jobId)) &&
      // "if unspecified, results include both archived and unarchived"
      (archived === null || (archived === 'true') === (a.status === 'archived')),
  );
}

const badRequest = (response: RouteContext['response'], message: string) =>
  sendJson(response, 400, { code: 'BadRequestError', message });

/** Webhooks made through the API (help.lever.co 4402565460237): one per event, with its own signature token. */
async function createWebhook(kit: KitContext, { request, response }: RouteContext) {
  const body = await kit.json(request);
  if (!(LEVER_WEBHOOK_EVENTS as readonly unknown[]).includes(body.event) || typeof body.url !== 'string')
    return badRequest(response, 'event and url are required');
  const [id, event, signatureToken] = [randomUUID(), String(body.event), randomBytes(24).toString('hex')];
  kit.state.webhooks.push({
    id,
    url: body.url,
    secret: signatureToken,
    issued: { [event]: signatureToken },
    events: [event],
  });
  sendJson(response, 201, { data: { id, event, url: body.url, configuration: { signatureToken } } });
}

/** UI-made webhooks are listed too, one row per event. */
const webhookRows = (w: WebhookTarget, i: number) =>
  (w.events ?? [...LEVER_WEBHOOK_EVENTS]).map((event) => ({
    id: w.id ?? `ui-${i}-${event}`,
    event,
    url: w.url,
    createdAt: 0,
  }));

type OpportunityHandler = (context: RouteContext, application: KitApplication, body: Record<string, unknown>) => void;

/** A route about one opportunity: 404 without it, a write 400 without `perform_as` where it takes one. */
const opportunity = (
  kit: KitContext,
  at: { query: string[]; method?: string; asUser?: boolean },
  handle: OpportunityHandler,
) => ({
  method: at.method ?? 'POST',
  query: at.query,
  handle: async (context: RouteContext) => {
    const application = kit.application(context.params.id as string);
    if (!application)
      return sendJson(context.response, 404, { code: 'ResourceNotFound', message: 'Opportunity not found' });
    if (at.asUser !== false && at.query.includes('perform_as') && !context.url.searchParams.get('perform_as'))
      return badRequest(context.response, 'perform_as is required');
    return handle(context, application, at.method === 'GET' ? {} : await kit.json(context.request));
  },
});

/** `addTags`, `removeTags`: the opportunity's tags, by text. */
const tagging = (kit: KitContext, action: 'addTags' | 'removeTags'): Route => ({
  pattern: `/v1/opportunities/:id/${action}`,
  ...opportunity(kit, { query: ['perform_as'] }, ({ response }, application, { tags }) => {
    if (!Array.isArray(tags)) return badRequest(response, 'tags');
    const held = new Set(kit.state.tags[application.id] ?? []);
    for (const tag of tags) action === 'addTags' ? held.add(String(tag)) : held.delete(String(tag));
    kit.state.tags[application.id] = [...held];
    sendJson(response, 200, { data: { ...opportunityJson(kit, application), tags: [...held] } });
  }),
});

/** Lever's users, webhooks, stages and the opportunities' list, as a table of routes. */
function accountRoutes(kit: KitContext): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/v1/users/:id',
      query: [],
      handle: ({ response, params }) => {
        if (!(LEVER_SANDBOX_DEFAULTS.userIds as readonly string[]).includes(params.id as string))
          return sendJson(response, 404, { code: 'ResourceNotFound', message: 'User not found' });
        sendJson(response, 200, { data: { id: params.id, accessRole: 'admin', deactivatedAt: null } });
      },
    },
    {
      method: 'GET',
      pattern: '/v1/webhooks',
      query: ['limit', 'offset'],
      handle: ({ response }) =>
        sendJson(response, 200, { data: kit.state.webhooks.flatMap(webhookRows), hasNext: false }),
    },
    { method: 'POST', pattern: '/v1/webhooks', query: [], handle: (context) => createWebhook(kit, context) },
    {
      method: 'GET',
      pattern: '/v1/stages',
      query: [],
      handle: ({ response }) =>
        sendJson(response, 200, { data: STAGES.map((s) => ({ id: s.id, text: s.name })), hasNext: false }),
    },
    {
      // `limit` 1–100 and an opaque `offset` from the previous page's `next`, while `hasNext`.
      method: 'GET',
      pattern: '/v1/opportunities',
      query: OPPORTUNITY_FILTERS,
      handle: ({ response, url }) => {
        const asked = { limit: url.searchParams.get('limit') ?? undefined, token: url.searchParams.get('offset') };
        sendJson(
          response,
          200,
          bodyPage(leverProfile.paging, opportunitiesOf(kit, url), asked, (a) => opportunityJson(kit, a)),
        );
      },
    },
  ];
}

/** One opportunity's routes: 404 without it, writes 400 without `perform_as` (the user the change is made as). */
function opportunityRoutes(kit: KitContext, secretNotes: Map<string, boolean>): Route[] {
  return [
    {
      pattern: '/v1/opportunities/:id',
      ...opportunity(kit, { query: ['expand'], method: 'GET' }, ({ response, url }, application) => {
        const expand = url.searchParams.get('expand') === 'applications';
        sendJson(response, 200, { data: opportunityJson(kit, application, expand) });
      }),
    },
    {
      pattern: '/v1/opportunities/:id/notes',
      ...opportunity(kit, { query: ['perform_as', 'note_id'] }, ({ response, url }, application, body) => {
        if (typeof body.value !== 'string' || !body.value) return badRequest(response, 'value is required');
        const note = kit.addNote(application, body.value, url.searchParams.get('perform_as') ?? undefined);
        secretNotes.set(note.id, body.secret === true);
        sendJson(response, 201, { data: { noteId: note.id } });
      }),
    },
    {
      pattern: '/v1/opportunities/:id/notes',
      ...opportunity(kit, { query: ['limit', 'offset'], method: 'GET' }, ({ response, url }, application) => {
        const notes = kit.state.notes.filter((n) => n.applicationId === application.id);
        const asked = { limit: url.searchParams.get('limit') ?? undefined, token: url.searchParams.get('offset') };
        sendJson(
          response,
          200,
          bodyPage(leverProfile.paging, notes, asked, (n) => noteJson(n, secretNotes.get(n.id) ?? false)),
        );
      }),
    },
    {
      pattern: '/v1/opportunities/:id/stage',
      ...opportunity(kit, { query: ['perform_as'], method: 'PUT' }, ({ response }, application, body) => {
        const stage = STAGES.find((s) => s.id === body.stage);
        if (!stage) return badRequest(response, 'stage does not exist');
        kit.moveByApi(application, stage.id);
        sendJson(response, 200, { data: opportunityJson(kit, application) });
      }),
    },
    tagging(kit, 'addTags'),
    tagging(kit, 'removeTags'),
    {
      pattern: '/v1/opportunities/:id/addLinks',
      ...opportunity(kit, { query: ['perform_as'], asUser: false }, ({ response }, application, body) => {
        for (const url of (body.links as string[] | undefined) ?? [])
          if (!kit.state.links.some((l) => l.applicationId === application.id && l.url === url))
            kit.state.links.push({ applicationId: application.id, url });
        sendJson(response, 200, { data: opportunityJson(kit, application) });
      }),
    },
  ];
}

export interface LeverSandbox extends AtsSandbox {
  /** A validly signed webhook whose body claims a stage change that never happened (the body is unsigned). */
  claimStageChange(applicationId: string, toStageId: string): Promise<void>;
  /** Lever's "Verify connection" button: a signed test delivery of each webhook, naming no opportunity. */
  verifyConnection(): Promise<{ event: string; status: number | undefined }[]>;
}

/** Posts `event` to every webhook of it, unrecorded; answers each one's status. */
async function post(sandbox: AtsSandbox, event: string, data: Record<string, unknown>) {
  const answers: { event: string; status: number | undefined }[] = [];
  for (const target of sandbox.state.webhooks)
    if (receives(target, event))
      answers.push({ event, status: (await deliverSigned(target, delivery(target, event, data), [], event)).status });
  return answers;
}

/** A stand-in of Lever's v1 API (Basic auth, the token bucket of its profile) and its webhooks. */
export async function startLeverSandbox(options: SandboxOptions = {}): Promise<LeverSandbox> {
  const secretNotes = new Map<string, boolean>();
  const basic = `Basic ${Buffer.from(`${LEVER_SANDBOX_DEFAULTS.apiKey}:`).toString('base64')}`;
  const sandbox = await startAtsSandbox(
    {
      profile: leverProfile,
      port: LEVER_SANDBOX_DEFAULTS.port,
      jobs: [
        { id: 'posting-backend-01', name: 'Backend Engineer', stages: STAGES },
        { id: 'posting-data-02', name: 'Data Engineer', stages: STAGES },
      ],
      issueSecrets: () => Object.fromEntries(LEVER_WEBHOOK_EVENTS.map((e) => [e, randomBytes(24).toString('hex')])),
      credentials: { atsApiKey: LEVER_SANDBOX_DEFAULTS.apiKey },
      authenticate: (request) => (request.headers.authorization === basic ? 'key' : undefined),
      unauthorized: (response) => sendJson(response, 401, { code: 'Unauthorized', message: 'Invalid API key' }),
      unknownParameter: (response, name) => badRequest(response, `Unknown query parameter: ${name}`),
      routes: (kit) => [...accountRoutes(kit), ...opportunityRoutes(kit, secretNotes)],
      candidateDeleted: (candidate, applications, target) =>
        delivery(target, 'candidateDeleted', {
          ...{ candidateId: candidate.id, contactId: candidate.id, opportunityId: applications[0]?.id ?? null },
        }),
      lifecycleChange: (_kit, application, target, action) => lifecycleDeliveries(application, target, action),
      stageChange: (_kit, application, target, from) => [
        delivery(target, 'candidateStageChange', {
          ...idsOf(application),
          fromStageId: from ?? null,
          toStageId: application.stageId,
        }),
      ],
    },
    options,
  );
  const verifyConnection = async () =>
    (await Promise.all(LEVER_WEBHOOK_EVENTS.map((e) => post(sandbox, e, {})))).flat();
  const claimStageChange = async (applicationId: string, toStageId: string) => {
    const application = sandbox.state.applications.find((a) => a.id === applicationId);
    if (!application) throw new Error(`no application ${applicationId}`);
    const data = { ...idsOf(application), fromStageId: application.stageId, toStageId };
    await post(sandbox, 'candidateStageChange', data);
  };
  return Object.assign(sandbox, { verifyConnection, claimStageChange });
}
