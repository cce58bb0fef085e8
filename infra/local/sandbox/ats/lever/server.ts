import { leverProfile } from '../../../../../shared/ats/lever/profile';
import { randomBytes, randomUUID } from 'node:crypto';
import { sendJson, type RouteContext } from '../../http-kit';
import { receives, secretFor, type WebhookTarget } from '../signed-webhooks';
import { startAtsSandbox } from '../ats-sandbox-kit';
import type { AtsSandbox, KitContext, KitStage, SignedDelivery } from '../ats-sandbox-kit';
import { LEVER_WEBHOOK_EVENTS, leverDelivery, lifecycleDeliveries, opportunityJson } from './payloads';

export { LEVER_ARCHIVE_REASON_IDS, LEVER_WEBHOOK_EVENTS } from './payloads';

export const LEVER_SANDBOX_DEFAULTS = { port: 4040, apiKey: 'lever-sandbox-key', userIds: ['lever-user-1'] } as const;

/** Lever's stages are global: every posting shares them. */
/** `GET /opportunities` filters and paging (Lever API reference, "List all opportunities"). */
const LEVER_OPPORTUNITY_FILTERS = [
  ...['limit', 'offset', 'include', 'expand', 'tag', 'email', 'origin', 'source', 'confidentiality', 'stage_id'],
  ...['posting_id', 'archived_posting_id', 'created_at_start', 'created_at_end', 'updated_at_start'],
  ...['updated_at_end', 'advanced_at_start', 'advanced_at_end', 'archived_at_start', 'archived_at_end'],
  ...['archived', 'archive_reason_id', 'snoozed', 'contact_id'],
];

const STAGES: KitStage[] = [
  { id: 'applicant-new', name: 'New applicant' },
  { id: 'c1b2-ai-interview', name: 'AI Interview' },
  { id: 'd3e4-hm-review', name: 'Hiring Manager Review' },
  { id: 'offer', name: 'Offer' },
];

/** A note as Lever reads it back: the text written as `value` is in `fields[].value` (NangoHQ's notes model). */
function noteJson(note: { id: string; body: string; author?: string | undefined; at: string }, secret: boolean) {
  return {
    id: note.id,
    text: 'Note',
    fields: [{ type: 'note', text: 'Note', value: note.body }],
    user: note.author ?? null,
    secret,
    completedAt: null,
    createdAt: Date.parse(note.at),
    deletedAt: null,
  };
}

export interface LeverSandbox extends AtsSandbox {
  /** A validly signed webhook whose body claims a stage change that never happened (the body is unsigned). */
  claimStageChange(applicationId: string, toStageId: string): Promise<void>;
  /** Lever's "Verify connection" button: a signed test delivery of each webhook, naming no opportunity. */
  verifyConnection(): Promise<{ event: string; status: number | undefined }[]>;
}

/** A stand-in of Lever's v1 API (Basic auth, 10 requests per second with bursts to 20) and its webhooks. */
export async function startLeverSandbox(
  options: { port?: number; rateLimit?: number | undefined; rateWindowMs?: number | undefined } = {},
): Promise<LeverSandbox> {
  let kitRef: KitContext | undefined;
  const rate = options.rateLimit ?? leverProfile.rate.requests;
  const secretNotes = new Map<string, boolean>();
  // The last lifecycle deliveries per opportunity and webhook: a repeat of one change resends the same deliveries
  // (the same `token`, which the connector keys a delivery on), as a retry by Lever would.
  const lastLifecycle = new WeakMap<WebhookTarget, Map<string, { change: string; deliveries: SignedDelivery[] }>>();
  const sandbox = await startAtsSandbox({
    kind: 'lever',
    port: options.port ?? LEVER_SANDBOX_DEFAULTS.port,
    jobs: [
      { id: 'posting-backend-01', name: 'Backend Engineer', stages: STAGES },
      { id: 'posting-data-02', name: 'Data Engineer', stages: STAGES },
    ],
    // A token bucket per key, as Lever's profile documents it; a limit given here keeps the same proportion of burst.
    rateLimit: {
      limit: rate,
      windowMs: options.rateWindowMs ?? leverProfile.rate.windowMs,
      burst: (rate * leverProfile.rate.burst) / leverProfile.rate.requests,
    },
    // Lever's 429 carries no Retry-After and no rate headers (ats-facts, Corrections 2026-11).
    rateLimited: (response) => sendJson(response, 429, { code: 'TooManyRequests', message: 'Rate limit exceeded' }),
    issueSecrets: () => Object.fromEntries(LEVER_WEBHOOK_EVENTS.map((e) => [e, randomBytes(24).toString('hex')])),
    credentials: { atsApiKey: LEVER_SANDBOX_DEFAULTS.apiKey },
    authenticate: (request) =>
      request.headers.authorization === `Basic ${Buffer.from(`${LEVER_SANDBOX_DEFAULTS.apiKey}:`).toString('base64')}`
        ? 'key'
        : undefined,
    unauthorized: (response) => sendJson(response, 401, { code: 'Unauthorized', message: 'Invalid API key' }),
    unknownParameter: (response, name) =>
      sendJson(response, 400, { code: 'BadRequestError', message: `Unknown query parameter: ${name}` }),
    routes: (kit) => {
      kitRef = kit;
      const opportunity = (id: string) => kit.application(id);
      const notFound = (response: Parameters<typeof sendJson>[0]) =>
        sendJson(response, 404, { code: 'ResourceNotFound', message: 'Opportunity not found' });
      const needsPerformAs = (url: URL, response: Parameters<typeof sendJson>[0]) => {
        if (url.searchParams.get('perform_as')) return false;
        sendJson(response, 400, { code: 'BadRequestError', message: 'perform_as is required' });
        return true;
      };
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
          // Webhooks made through the API (help.lever.co 4402565460237); UI-made ones are listed too.
          method: 'GET',
          pattern: '/v1/webhooks',
          query: ['limit', 'offset'],
          handle: ({ response }) =>
            sendJson(response, 200, {
              data: kit.state.webhooks.flatMap((w, i) =>
                (w.events ?? [...LEVER_WEBHOOK_EVENTS]).map((event) => ({
                  id: w.id ?? `ui-${i}-${event}`,
                  event,
                  url: w.url,
                  createdAt: 0,
                })),
              ),
              hasNext: false,
            }),
        },
        {
          // One webhook per event, with its own signature token.
          method: 'POST',
          pattern: '/v1/webhooks',
          query: [],
          handle: async ({ request, response }) => {
            const body = await kit.json(request);
            if (!(LEVER_WEBHOOK_EVENTS as readonly unknown[]).includes(body.event) || typeof body.url !== 'string')
              return sendJson(response, 400, { code: 'BadRequestError', message: 'event and url are required' });
            const token = randomBytes(24).toString('hex');
            const event = String(body.event);
            const id = randomUUID();
            kit.state.webhooks.push({ id, url: body.url, secret: token, issued: { [event]: token }, events: [event] });
            sendJson(response, 201, { data: { id, event, url: body.url, configuration: { signatureToken: token } } });
          },
        },
        {
          method: 'GET',
          pattern: '/v1/stages',
          query: [],
          handle: ({ response }) =>
            sendJson(response, 200, { data: STAGES.map((s) => ({ id: s.id, text: s.name })), hasNext: false }),
        },
        {
          // Opportunities of a contact (`contact_id`); a deleted contact has none.
          method: 'GET',
          pattern: '/v1/opportunities',
          query: LEVER_OPPORTUNITY_FILTERS,
          // Filters `contact_id`, `stage_id` and `posting_id` (both repeatable) and `archived` ("if unspecified,
          // results include both archived and unarchived"); `limit` 1–100 and an opaque `offset` from `next`.
          handle: ({ response, url }) => {
            const contact = url.searchParams.get('contact_id');
            const stages = url.searchParams.getAll('stage_id');
            const postings = url.searchParams.getAll('posting_id');
            const archived = url.searchParams.get('archived');
            const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 100) || 100));
            const offset = Number(Buffer.from(url.searchParams.get('offset') ?? '', 'base64url').toString() || 0);
            const all = kit.state.applications.filter(
              (a) =>
                (!contact || a.candidateId === contact) &&
                (!stages.length || stages.includes(a.stageId)) &&
                (!postings.length || postings.includes(a.jobId)) &&
                (archived === null || (archived === 'true') === (a.status === 'archived')),
            );
            const hasNext = offset + limit < all.length;
            sendJson(response, 200, {
              data: all.slice(offset, offset + limit).map((a) => opportunityJson(kit, a, false)),
              hasNext,
              ...(hasNext ? { next: Buffer.from(String(offset + limit)).toString('base64url') } : {}),
            });
          },
        },
        {
          method: 'GET',
          pattern: '/v1/opportunities/:id',
          query: ['expand'],
          handle: ({ response, params, url }) => {
            const application = opportunity(params.id as string);
            if (!application) return notFound(response);
            sendJson(response, 200, {
              data: opportunityJson(kit, application, url.searchParams.get('expand') === 'applications'),
            });
          },
        },
        {
          method: 'POST',
          pattern: '/v1/opportunities/:id/notes',
          query: ['perform_as', 'note_id'],
          handle: async ({ request, response, params, url }) => {
            const application = opportunity(params.id as string);
            if (!application) return notFound(response);
            if (needsPerformAs(url, response)) return;
            const body = await kit.json(request);
            if (typeof body.value !== 'string' || !body.value)
              return sendJson(response, 400, { code: 'BadRequestError', message: 'value is required' });
            const note = kit.addNote(application, body.value, url.searchParams.get('perform_as') ?? undefined);
            secretNotes.set(note.id, body.secret === true);
            sendJson(response, 201, { data: { noteId: note.id } });
          },
        },
        {
          // `limit` 1–100 and an opaque `offset` from the previous page's `next`, while `hasNext`.
          method: 'GET',
          pattern: '/v1/opportunities/:id/notes',
          query: ['limit', 'offset'],
          handle: ({ response, params, url }) => {
            if (!opportunity(params.id as string)) return notFound(response);
            const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 100) || 100));
            const offset = Number(Buffer.from(url.searchParams.get('offset') ?? '', 'base64url').toString() || 0);
            const notes = kit.state.notes.filter((n) => n.applicationId === params.id);
            const page = notes.slice(offset, offset + limit);
            const hasNext = offset + limit < notes.length;
            sendJson(response, 200, {
              data: page.map((n) => noteJson(n, secretNotes.get(n.id) ?? false)),
              hasNext,
              ...(hasNext ? { next: Buffer.from(String(offset + limit)).toString('base64url') } : {}),
            });
          },
        },
        {
          method: 'PUT',
          pattern: '/v1/opportunities/:id/stage',
          query: ['perform_as'],
          handle: async ({ request, response, params, url }) => {
            const application = opportunity(params.id as string);
            if (!application) return notFound(response);
            if (needsPerformAs(url, response)) return;
            const requested = (await kit.json(request)).stage;
            const stage = STAGES.find((s) => s.id === requested);
            if (!stage) return sendJson(response, 400, { code: 'BadRequestError', message: 'stage does not exist' });
            kit.moveByApi(application, stage.id);
            sendJson(response, 200, { data: opportunityJson(kit, application, false) });
          },
        },
        ...(['addTags', 'removeTags'] as const).map((action) => ({
          method: 'POST',
          pattern: `/v1/opportunities/:id/${action}`,
          query: ['perform_as'],
          handle: async ({ request, response, params, url }: RouteContext) => {
            const application = opportunity(params.id as string);
            if (!application) return notFound(response);
            if (needsPerformAs(url, response)) return;
            const tags = (await kit.json(request)).tags;
            if (!Array.isArray(tags)) return sendJson(response, 400, { code: 'BadRequestError', message: 'tags' });
            const held = new Set(kit.state.tags[application.id] ?? []);
            for (const tag of tags) action === 'addTags' ? held.add(String(tag)) : held.delete(String(tag));
            kit.state.tags[application.id] = [...held];
            sendJson(response, 200, { data: { ...opportunityJson(kit, application, false), tags: [...held] } });
          },
        })),
        {
          method: 'POST',
          pattern: '/v1/opportunities/:id/addLinks',
          query: ['perform_as'],
          handle: async ({ request, response, params }) => {
            const application = opportunity(params.id as string);
            if (!application) return notFound(response);
            const links = (await kit.json(request)).links as string[];
            for (const url of links ?? [])
              if (!kit.state.links.some((l) => l.applicationId === application.id && l.url === url))
                kit.state.links.push({ applicationId: application.id, url });
            sendJson(response, 200, { data: opportunityJson(kit, application, false) });
          },
        },
      ];
    },
    // Signed with the deletion webhook's own token; ids only, as every Lever webhook.
    candidateDeleted: (candidate, applications, target) =>
      leverDelivery(secretFor(target, 'candidateDeleted'), 'candidateDeleted', {
        candidateId: candidate.id,
        contactId: candidate.id,
        opportunityId: applications[0]?.id ?? null,
      }),
    lifecycleChange: (_kit, application, target, action) => {
      const change = `${action} ${application.updatedAt}`;
      const ofTarget = lastLifecycle.get(target) ?? new Map();
      lastLifecycle.set(target, ofTarget);
      const last = ofTarget.get(application.id);
      if (last?.change === change) return last.deliveries;
      const deliveries = lifecycleDeliveries(application, target, action);
      ofTarget.set(application.id, { change, deliveries });
      return deliveries;
    },
    stageChange: (_kit, application, target, previousStageId) => [
      leverDelivery(secretFor(target, 'candidateStageChange'), 'candidateStageChange', {
        opportunityId: application.id,
        candidateId: application.candidateId,
        contactId: application.candidateId,
        fromStageId: previousStageId ?? null,
        toStageId: application.stageId,
      }),
    ],
  });
  return Object.assign(sandbox, {
    async verifyConnection() {
      const answers: { event: string; status: number | undefined }[] = [];
      for (const target of sandbox.state.webhooks) {
        for (const event of LEVER_WEBHOOK_EVENTS) {
          if (!receives(target, event)) continue;
          const delivery = leverDelivery(secretFor(target, event), event, {});
          const response = await fetch(target.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: delivery.body,
            signal: AbortSignal.timeout(10_000),
          }).catch(() => undefined);
          await response?.arrayBuffer();
          answers.push({ event, status: response?.status });
        }
      }
      return answers;
    },
    async claimStageChange(applicationId: string, toStageId: string) {
      const application = kitRef?.application(applicationId);
      if (!application) throw new Error(`no application ${applicationId}`);
      for (const target of sandbox.state.webhooks) {
        if (!receives(target, 'candidateStageChange')) continue;
        const delivery = leverDelivery(secretFor(target, 'candidateStageChange'), 'candidateStageChange', {
          opportunityId: application.id,
          candidateId: application.candidateId,
          contactId: application.candidateId,
          fromStageId: application.stageId,
          toStageId,
        });
        await fetch(target.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: delivery.body,
        });
      }
    },
  });
}
