import { createHmac, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import {
  answerFailure,
  callShape,
  listen,
  matchRoute,
  readBody,
  seededRandom,
  sendJson,
  type CallShape,
  type Route,
} from '../../http-kit';
import { addLatency, answeredByFault, noFaults, type AtsFaults } from '../faults';
import { deliverSigned, FixedWindowLimiter, type DeliveryRecord, type WebhookTarget } from '../signed-webhooks';
import { describeFirstIssue } from '../../../../../shared/validation';
import { errorMessage } from '../../../../../shared/errors';

export const GREENHOUSE_SANDBOX_DEFAULTS = {
  port: 4020,
  clientId: 'greenhouse-sandbox-client',
  clientSecret: 'greenhouse-sandbox-secret',
  /**
   * Harvest v3: fixed 30-second windows; the ceiling is not published, 75 is one observed `X-RateLimit-Limit`
   * (ats-facts, Corrections 2026-11).
   */
  rateLimit: 75,
  rateWindowMs: 30_000,
  tokenTtlSeconds: 3600,
  /** Users of the organisation a token may act as (`sub`). */
  userIds: ['4080'] as readonly string[],
  /** v3 lists: `per_page` 1–500, 100 by default; id filters take at most 50 ids (/docs/list-endpoints). */
  defaultPerPage: 100,
  maxPerPage: 500,
  maxFilterIds: 50,
} as const;

interface Stage {
  id: number;
  name: string;
}
interface Job {
  id: number;
  name: string;
  stages: Stage[];
  /** `open` unless said (`GET /v3/jobs?status=`: open, draft, closed). */
  status?: 'open' | 'draft' | 'closed';
}
interface Candidate {
  id: number;
  first_name: string;
  last_name: string;
  email_addresses: { value: string; type: string }[];
}
interface Application {
  id: number;
  candidate_id: number;
  job_id: number;
  status: 'active' | 'rejected' | 'hired';
  current_stage: Stage;
}
/** A row of `GET /v3/application_stages`: one stage one application entered, and left unless it is current. */
interface ApplicationStage {
  id: number;
  application_id: number;
  job_interview_stage_id: number;
  entered_at: string;
  exited_at: string | null;
}
/** A note as v3 reads it back: `type`, and the visibility spelt `…_visible` (Airbyte's v3 example). */
interface Note {
  id: number;
  candidate_id: number;
  application_id?: number;
  body: string;
  type: string;
  visibility: string;
  user_id: number | string;
  created_at: string;
}

export interface GreenhouseSandboxState {
  jobs: Job[];
  candidates: Candidate[];
  applications: Application[];
  notes: Note[];
  moves: { application_id: number; from_stage_id: number; to_stage_id: number; at: string }[];
  deliveries: DeliveryRecord[];
  webhooks: WebhookTarget[];
  requests: Record<string, number>;
  /** The distinct shapes of the API requests served (the token request included), by key. */
  calls: Record<string, CallShape>;
  /** The organisation's candidate tags (`/v3/candidate_tags`), and the tags applied to candidates, one row each. */
  candidateTags: { id: number; name: string }[];
  appliedTags: { id: number; candidate_id: number; candidate_tag_id: number }[];
  /** Each stage an application entered (`/v3/application_stages`); the current one has no `exited_at`. */
  applicationStages: ApplicationStage[];
  /** Answers 429 given because the window was spent (not injected faults). */
  throttled: number;
  faults: AtsFaults;
}

export interface GreenhouseSandbox {
  url: string;
  clientId: string;
  clientSecret: string;
  state: GreenhouseSandboxState;
  registerWebhook(target: WebhookTarget): Promise<DeliveryRecord>;
  addCandidate(input: { first_name: string; last_name: string; email: string; job_id: number }): Application;
  /** A further application of an existing candidate, to another job (a candidate applies more than once). */
  addApplication(input: { candidate_id: number; job_id: number }): Application;
  /** Moves the application and sends the signed `candidate_stage_change` webhook `repeat` times (same event id). */
  moveCandidate(input: {
    application_id: number;
    stage_id?: number;
    stage_name?: string;
    repeat?: number;
  }): Promise<DeliveryRecord[]>;
  /** Sends the application's current stage again as a new event (a new Greenhouse-Event-ID). */
  resendStageChange(applicationId: number): Promise<DeliveryRecord>;
  /** Deletes the application's candidate and sends the signed `delete_candidate` webhook, as Greenhouse does. */
  deleteCandidate(applicationId: number): Promise<DeliveryRecord[]>;
  /**
   * Merges the application's candidate into a new record: the applications move to it, and `merge_candidate`
   * is sent (instead of `delete_candidate`, as when both webhooks are configured).
   */
  mergeCandidate(applicationId: number): Promise<DeliveryRecord[]>;
  /** Anonymises the application's candidate (name and e-mail) and sends `candidate_anonymized`. */
  anonymizeCandidate(applicationId: number): Promise<DeliveryRecord[]>;
  close(): Promise<void>;
}

const SEEDED_JOBS: Job[] = [
  {
    id: 3301,
    name: 'Backend Engineer',
    stages: [
      { id: 9000, name: 'Application Review' },
      { id: 9001, name: 'AI Interview' },
      { id: 9002, name: 'Hiring Manager Review' },
      { id: 9003, name: 'Offer' },
    ],
  },
  {
    id: 3302,
    name: 'Data Engineer',
    stages: [
      { id: 9100, name: 'Application Review' },
      { id: 9101, name: 'AI Interview' },
      { id: 9102, name: 'Hiring Manager Review' },
    ],
  },
  // Closed, without the AI interview stage: "all jobs" means open ones (`GET /v3/jobs?status=open`).
  { id: 3399, name: 'Recruiting Coordinator', stages: [{ id: 9900, name: 'Hired' }], status: 'closed' },
];

/**
 * Greenhouse unicode-escapes its JSON before signing (webhooks/_introduction.md); re-serialising breaks the signature.
 */
function greenhouseJson(document: unknown): Buffer {
  return Buffer.from(
    JSON.stringify(document).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026'),
    'utf8',
  );
}

const noteBody = v.object({
  candidate_id: v.union([v.number(), v.string()]),
  application_id: v.optional(v.union([v.number(), v.string()])),
  body: v.pipe(v.string(), v.nonEmpty('body is required')),
  note_type: v.optional(v.string(), 'NOTE'),
  visibility: v.picklist(['admin_only', 'private', 'public'], 'visibility must be admin_only, private or public'),
  user_id: v.union([v.number(), v.string()]),
});
const candidateTagBody = v.object({ name: v.pipe(v.string(), v.minLength(1)) });
const appliedTagBody = v.object({
  candidate_id: v.union([v.number(), v.string()]),
  candidate_tag_id: v.union([v.number(), v.string()]),
});
const moveBody = v.object({
  from_stage_id: v.optional(v.union([v.number(), v.string()])),
  to_stage_id: v.optional(v.union([v.number(), v.string()])),
});

/** A stand-in of Greenhouse Harvest v3 and its webhooks, on 127.0.0.1. */
export async function startGreenhouseSandbox(
  options: { port?: number; seed?: number; rateLimit?: number | undefined; rateWindowMs?: number | undefined } = {},
): Promise<GreenhouseSandbox> {
  const state: GreenhouseSandboxState = {
    jobs: structuredClone(SEEDED_JOBS),
    candidates: [],
    applications: [],
    notes: [],
    moves: [],
    deliveries: [],
    webhooks: [],
    candidateTags: [],
    appliedTags: [],
    applicationStages: [],
    requests: {},
    calls: {},
    throttled: 0,
    faults: noFaults(),
  };
  const tokens = new Map<string, { expiresAt: number; clientId: string }>();
  const rateLimit = options.rateLimit ?? GREENHOUSE_SANDBOX_DEFAULTS.rateLimit;
  // Fixed windows counted per API credential (the client id), whatever token it was given. Whether they are fixed on
  // the clock or start at a window's first request is not documented: they start at the first request here.
  const limiter = new FixedWindowLimiter(rateLimit, options.rateWindowMs ?? GREENHOUSE_SANDBOX_DEFAULTS.rateWindowMs);
  const random = seededRandom(options.seed ?? 7);
  let nextId = 50_000;
  const lastEvent = new Map<number, { body: Buffer }>();

  const unprocessable = (response: ServerResponse, field: string, message: string) =>
    sendJson(response, 422, { message: 'Validation error', errors: [{ message, field }] });

  function stageChangeBody(application: Application): Buffer {
    const candidate = state.candidates.find((c) => c.id === application.candidate_id) as Candidate;
    const job = state.jobs.find((j) => j.id === application.job_id) as Job;
    return greenhouseJson({
      action: 'candidate_stage_change',
      payload: {
        application: {
          id: application.id,
          status: application.status,
          prospect: false,
          applied_at: new Date().toISOString(),
          url: `https://app.greenhouse.io/people/${candidate.id}?application_id=${application.id}`,
          current_stage: { ...application.current_stage, interviews: [] },
          candidate: { ...candidate, phone_numbers: [], attachments: [], custom_fields: {} },
          jobs: [{ id: job.id, name: job.name, requisition_id: `REQ-${job.id}` }],
          custom_fields: {},
        },
      },
    });
  }

  async function send(body: Buffer, action: string, eventId: string): Promise<DeliveryRecord[]> {
    const results: DeliveryRecord[] = [];
    for (const target of state.webhooks) {
      // A disabled webhook (its ping failed, or an admin switched it off) is sent nothing.
      if (target.enabled === false) continue;
      const signature = createHmac('sha256', target.secret).update(body).digest('hex');
      results.push(
        await deliverSigned(
          target,
          body,
          { signature: `sha256 ${signature}`, 'greenhouse-event-id': eventId, 'user-agent': 'Greenhouse-Sandbox' },
          state.deliveries,
          action,
          eventId,
        ),
      );
    }
    return results;
  }

  async function moveCandidate(input: {
    application_id: number;
    stage_id?: number;
    stage_name?: string;
    repeat?: number;
  }): Promise<DeliveryRecord[]> {
    const application = state.applications.find((a) => a.id === input.application_id);
    if (!application) throw new Error(`application_id: no application ${input.application_id}`);
    const job = state.jobs.find((j) => j.id === application.job_id) as Job;
    const stage = job.stages.find((s) => s.id === input.stage_id || s.name === input.stage_name);
    if (!stage) throw new Error(`stage: job ${job.id} has no stage ${input.stage_id ?? input.stage_name}`);
    state.moves.push({
      application_id: application.id,
      from_stage_id: application.current_stage.id,
      to_stage_id: stage.id,
      at: new Date().toISOString(),
    });
    application.current_stage = stage;
    enterStage(application);
    const body = stageChangeBody(application);
    lastEvent.set(application.id, { body });
    const eventId = randomUUID();
    const results: DeliveryRecord[] = [];
    if (state.faults.dropStageChangeRate > 0 && random() < state.faults.dropStageChangeRate) {
      const dropped = { eventId, url: '', action: 'candidate_stage_change', at: Date.now(), dropped: true };
      state.deliveries.push(dropped);
      return [dropped];
    }
    for (let i = 0; i < Math.max(1, input.repeat ?? 1); i++)
      results.push(...(await send(body, 'candidate_stage_change', eventId)));
    return results;
  }

  /** The v3 read of an application: flat, with the stage a move is made from (`job_interview_stage_id`). */
  const applicationV3 = (a: Application) => ({
    id: a.id,
    candidate_id: a.candidate_id,
    job_id: a.job_id,
    job_interview_stage_id: a.current_stage.id,
    stage_name: a.current_stage.name,
    status: a.status === 'active' ? 'in_process' : a.status,
    applied_at: '2026-11-01T09:00:00Z',
  });
  const idList = (value: string) => value.split(',').map((id) => Number(id.trim()));

  /**
   * A v3 list endpoint (/docs/pagination, /docs/list-endpoints): a bare JSON array; plural id filters of at most
   * 50 ids; `per_page` 1–500; the next page only in `Link: <…?cursor=…>; rel="next"`, and a cursor request
   * carries no other parameter. A parameter the endpoint does not have is refused (422), not ignored.
   */
  function listRoute<T>(
    pattern: string,
    filters: Record<string, (item: T, ids: number[]) => boolean>,
    items: () => T[],
    show: (item: T) => unknown,
    textFilters: Record<string, (item: T, value: string) => boolean> = {},
  ): Route {
    return {
      method: 'GET',
      pattern,
      handle: ({ response, url }) => {
        const params = [...url.searchParams.keys()];
        const cursor = url.searchParams.get('cursor');
        let offset = 0;
        let query: URLSearchParams = url.searchParams;
        if (cursor !== null) {
          if (params.length > 1) return unprocessable(response, 'cursor', 'a cursor request takes no other parameter');
          try {
            const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { q: string; o: number };
            query = new URLSearchParams(decoded.q);
            offset = decoded.o;
          } catch {
            return unprocessable(response, 'cursor', 'is not a cursor this API issued');
          }
        }
        for (const key of query.keys())
          if (key !== 'per_page' && !Object.hasOwn(filters, key) && !Object.hasOwn(textFilters, key))
            return unprocessable(response, key, 'is not a parameter of this endpoint');
        const perPage = Number(query.get('per_page') ?? GREENHOUSE_SANDBOX_DEFAULTS.defaultPerPage);
        if (!Number.isInteger(perPage) || perPage < 1 || perPage > GREENHOUSE_SANDBOX_DEFAULTS.maxPerPage)
          return unprocessable(response, 'per_page', 'must be between 1 and 500');
        let selected = items();
        for (const [key, keep] of Object.entries(filters)) {
          const value = query.get(key);
          if (value === null) continue;
          const ids = idList(value);
          if (ids.length > GREENHOUSE_SANDBOX_DEFAULTS.maxFilterIds || ids.some((id) => !Number.isInteger(id)))
            return unprocessable(response, key, 'must be a list of at most 50 ids');
          selected = selected.filter((item) => keep(item, ids));
        }
        for (const [key, keep] of Object.entries(textFilters)) {
          const value = query.get(key);
          if (value !== null) selected = selected.filter((item) => keep(item, value));
        }
        const page = selected.slice(offset, offset + perPage);
        const headers: Record<string, string> = {};
        if (offset + perPage < selected.length) {
          const next = Buffer.from(JSON.stringify({ q: query.toString(), o: offset + perPage })).toString('base64url');
          headers.link = `<${baseUrl}${pattern}?cursor=${next}>; rel="next"`;
        }
        sendJson(response, 200, page.map(show), headers);
      },
    };
  }

  const api: Route[] = [
    listRoute<Application>(
      '/v3/applications',
      {
        ids: (a, ids) => ids.includes(a.id),
        candidate_ids: (a, ids) => ids.includes(a.candidate_id),
        job_ids: (a, ids) => ids.includes(a.job_id),
        stage_ids: (a, ids) => ids.includes(a.current_stage.id),
      },
      () => state.applications,
      applicationV3,
    ),
    // The applications in an interview stage now: `current=true` keeps the rows without `exited_at`
    // (harvestdocs /reference/get_v3-application-stages).
    listRoute<ApplicationStage>(
      '/v3/application_stages',
      {
        ids: (r, ids) => ids.includes(r.id),
        application_ids: (r, ids) => ids.includes(r.application_id),
        job_interview_stage_ids: (r, ids) => ids.includes(r.job_interview_stage_id),
      },
      () => state.applicationStages,
      (r) => r,
      {
        current: (r, value) =>
          value === 'true' ? r.exited_at === null : value === 'false' ? r.exited_at !== null : true,
      },
    ),
    {
      method: 'POST',
      pattern: '/v3/applications/:id/move',
      handle: async ({ request, response, params }) => {
        const application = state.applications.find((a) => a.id === Number(params.id));
        if (!application) return sendJson(response, 404, { message: 'Resource not found' });
        const parsed = v.safeParse(moveBody, JSON.parse((await readBody(request)).toString() || '{}'));
        if (!parsed.success) return unprocessable(response, 'body', 'invalid body');
        if (application.status !== 'active')
          return unprocessable(response, 'application_id', 'application is not in process');
        const job = state.jobs.find((j) => j.id === application.job_id) as Job;
        // The guard against stale requests: the move is made from the stage the application is in now.
        if (parsed.output.from_stage_id === undefined)
          return unprocessable(response, 'from_stage_id', 'from_stage_id is required');
        if (Number(parsed.output.from_stage_id) !== application.current_stage.id)
          return unprocessable(response, 'from_stage_id', 'the application is not in this stage');
        const index = job.stages.findIndex((s) => s.id === application.current_stage.id);
        const target =
          parsed.output.to_stage_id === undefined
            ? job.stages[index + 1]
            : job.stages.find((s) => s.id === Number(parsed.output.to_stage_id));
        if (!target) return unprocessable(response, 'to_stage_id', 'stage is not part of this job');
        // 204 No Content (/reference/post_v3-applications-id-move).
        response.writeHead(204).end();
        // A move through the API changes the stage in Greenhouse, which fires the stage-change webhook too.
        void moveCandidate({ application_id: application.id, stage_id: target.id });
      },
    },
    {
      method: 'POST',
      pattern: '/v3/notes',
      handle: async ({ request, response }) => {
        let document: unknown;
        try {
          document = JSON.parse((await readBody(request)).toString());
        } catch {
          return sendJson(response, 400, { message: 'body is not JSON' });
        }
        const parsed = v.safeParse(noteBody, document);
        if (!parsed.success) {
          const { field } = describeFirstIssue(parsed.issues, { fallbackField: 'body' });
          return unprocessable(response, field, parsed.issues[0]?.message ?? 'invalid');
        }
        const candidate = state.candidates.find((c) => c.id === Number(parsed.output.candidate_id));
        if (!candidate)
          return sendJson(response, 404, { message: `candidate ${parsed.output.candidate_id} not found` });
        const note: Note = {
          id: nextId++,
          candidate_id: candidate.id,
          body: parsed.output.body,
          type: parsed.output.note_type,
          visibility: `${parsed.output.visibility}_visible`,
          user_id: parsed.output.user_id,
          created_at: new Date().toISOString(),
        };
        if (parsed.output.application_id !== undefined) note.application_id = Number(parsed.output.application_id);
        state.notes.push(note);
        sendJson(response, 201, note);
      },
    },
    listRoute<Note>(
      '/v3/notes',
      {
        candidate_ids: (n, ids) => ids.includes(n.candidate_id),
      },
      () => state.notes,
      (n) => n,
    ),
    // Tags in v3 are two resources: the organisation's tags, and a row per tag applied to a candidate, removed by
    // the row's own id (ats-facts, Corrections 2026-11b; harvestdocs /reference/get_v3-applied-candidate-tags).
    listRoute<{ id: number; name: string }>(
      '/v3/candidate_tags',
      { ids: (t, ids) => ids.includes(t.id) },
      () => state.candidateTags,
      (t) => t,
    ),
    {
      method: 'POST',
      pattern: '/v3/candidate_tags',
      handle: async ({ request, response }) => {
        const parsed = v.safeParse(candidateTagBody, JSON.parse((await readBody(request)).toString() || '{}'));
        if (!parsed.success) return unprocessable(response, 'name', 'is required');
        // Whether Greenhouse answers an existing name with that tag is undocumented: refused here, so a client
        // lists before it creates.
        if (state.candidateTags.some((t) => t.name === parsed.output.name))
          return unprocessable(response, 'name', 'has already been taken');
        const tag = { id: nextId++, name: parsed.output.name };
        state.candidateTags.push(tag);
        sendJson(response, 201, tag);
      },
    },
    listRoute<GreenhouseSandboxState['appliedTags'][number]>(
      '/v3/applied_candidate_tags',
      {
        ids: (r, ids) => ids.includes(r.id),
        candidate_ids: (r, ids) => ids.includes(r.candidate_id),
        candidate_tag_ids: (r, ids) => ids.includes(r.candidate_tag_id),
      },
      () => state.appliedTags,
      (r) => r,
    ),
    {
      method: 'POST',
      pattern: '/v3/applied_candidate_tags',
      handle: async ({ request, response }) => {
        const parsed = v.safeParse(appliedTagBody, JSON.parse((await readBody(request)).toString() || '{}'));
        if (!parsed.success) {
          const { field } = describeFirstIssue(parsed.issues, { fallbackField: 'body' });
          return unprocessable(response, field, 'is required');
        }
        const candidateId = Number(parsed.output.candidate_id);
        const tagId = Number(parsed.output.candidate_tag_id);
        if (!state.candidates.some((c) => c.id === candidateId))
          return sendJson(response, 404, { message: `candidate ${candidateId} not found` });
        if (!state.candidateTags.some((t) => t.id === tagId))
          return sendJson(response, 404, { message: `candidate tag ${tagId} not found` });
        if (state.appliedTags.some((r) => r.candidate_id === candidateId && r.candidate_tag_id === tagId))
          return unprocessable(response, 'candidate_tag_id', 'is already applied to this candidate');
        const row = { id: nextId++, candidate_id: candidateId, candidate_tag_id: tagId };
        state.appliedTags.push(row);
        sendJson(response, 201, row);
      },
    },
    {
      method: 'DELETE',
      pattern: '/v3/applied_candidate_tags/:id',
      handle: ({ response, params }) => {
        const index = state.appliedTags.findIndex((r) => r.id === Number(params.id));
        if (index < 0) return sendJson(response, 404, { message: 'Resource not found' });
        state.appliedTags.splice(index, 1);
        response.writeHead(204).end();
      },
    },
    listRoute<Job>(
      '/v3/jobs',
      { ids: (j, ids) => ids.includes(j.id) },
      () => state.jobs,
      (j) => ({ id: j.id, name: j.name, status: j.status ?? 'open' }),
      { status: (j, value) => (j.status ?? 'open') === value },
    ),
    listRoute<Candidate>(
      '/v3/candidates',
      { ids: (c, ids) => ids.includes(c.id) },
      () => state.candidates,
      (c) => c,
    ),
    listRoute<Stage & { job_id: number; sort_order: number }>(
      '/v3/job_interview_stages',
      { job_ids: (s, ids) => ids.includes(s.job_id) },
      () => state.jobs.flatMap((j) => j.stages.map((s, i) => ({ ...s, job_id: j.id, sort_order: i }))),
      (s) => ({ id: s.id, job_id: s.job_id, name: s.name, sort_order: s.sort_order, active: true }),
    ),
  ];

  const control: Route[] = [
    { method: 'GET', pattern: '/_sandbox/state', handle: ({ response }) => sendJson(response, 200, state) },
    {
      method: 'POST',
      pattern: '/_sandbox/candidates',
      handle: async ({ request, response }) => {
        const input = JSON.parse((await readBody(request)).toString()) as {
          first_name: string;
          last_name: string;
          email: string;
          job_id: number;
        };
        sendJson(response, 201, addCandidate(input));
      },
    },
    {
      method: 'POST',
      pattern: '/_sandbox/move',
      handle: async ({ request, response }) => {
        const input = JSON.parse((await readBody(request)).toString()) as Parameters<typeof moveCandidate>[0];
        try {
          sendJson(response, 200, { deliveries: await moveCandidate(input) });
        } catch (error) {
          sendJson(response, 404, { error: errorMessage(error) });
        }
      },
    },
    ...(['delete', 'merge', 'anonymize'] as const).map(
      (what): Route => ({
        method: 'POST',
        pattern: `/_sandbox/${what}-candidate`,
        handle: async ({ request, response }) => {
          const { application_id: id } = JSON.parse((await readBody(request)).toString() || '{}') as {
            application_id?: number;
          };
          const act = { delete: deleteCandidate, merge: mergeCandidate, anonymize: anonymizeCandidate }[what];
          try {
            sendJson(response, 200, { deliveries: await act(Number(id)) });
          } catch (error) {
            sendJson(response, 404, { error: errorMessage(error) });
          }
        },
      }),
    ),
    {
      method: 'POST',
      pattern: '/_sandbox/faults',
      handle: async ({ request, response }) => {
        Object.assign(state.faults, JSON.parse((await readBody(request)).toString()));
        sendJson(response, 200, state.faults);
      },
    },
  ];

  function addCandidate(input: { first_name: string; last_name: string; email: string; job_id: number }): Application {
    if (!state.jobs.some((j) => j.id === input.job_id)) throw new Error(`job_id: no job ${input.job_id}`);
    const candidate: Candidate = {
      id: nextId++,
      first_name: input.first_name,
      last_name: input.last_name,
      email_addresses: [{ value: input.email, type: 'personal' }],
    };
    state.candidates.push(candidate);
    return addApplication({ candidate_id: candidate.id, job_id: input.job_id });
  }

  function addApplication(input: { candidate_id: number; job_id: number }): Application {
    const job = state.jobs.find((j) => j.id === input.job_id);
    if (!job) throw new Error(`job_id: no job ${input.job_id}`);
    if (!state.candidates.some((c) => c.id === input.candidate_id))
      throw new Error(`candidate_id: no candidate ${input.candidate_id}`);
    const application: Application = {
      id: nextId++,
      candidate_id: input.candidate_id,
      job_id: job.id,
      status: 'active',
      current_stage: job.stages[0] as Stage,
    };
    state.applications.push(application);
    enterStage(application);
    return application;
  }

  /** The application's row for the stage it is in now; the row of the stage it left gets its `exited_at`. */
  function enterStage(application: Application): void {
    const at = new Date().toISOString();
    for (const row of state.applicationStages)
      if (row.application_id === application.id && row.exited_at === null) row.exited_at = at;
    state.applicationStages.push({
      id: nextId++,
      application_id: application.id,
      job_interview_stage_id: application.current_stage.id,
      entered_at: at,
      exited_at: null,
    });
  }

  async function handleApi(
    request: IncomingMessage,
    response: ServerResponse,
    route: Route,
    params: Record<string, string>,
    url: URL,
  ): Promise<void> {
    const name = `${request.method} ${route.pattern}`;
    state.requests[name] = (state.requests[name] ?? 0) + 1;
    await addLatency(state.faults);
    const auth = request.headers.authorization ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    const issued = tokens.get(token);
    if (!issued || issued.expiresAt < Date.now())
      return sendJson(response, 401, { message: 'Invalid or expired access token' });
    const limit = limiter.take(issued.clientId);
    const rateHeaders = {
      'x-ratelimit-limit': String(rateLimit),
      'x-ratelimit-remaining': String(limit.remaining),
      'x-ratelimit-reset': String(Math.ceil((Date.now() + limit.resetMs) / 1000)),
    };
    const roll = random();
    if (!limit.allowed || roll < state.faults.rate429) {
      // An injected 429 asks for a one-second wait; only a spent window announces its whole reset.
      const retryAfter = limit.allowed ? 1 : Math.max(1, Math.ceil(limit.resetMs / 1000));
      if (!limit.allowed) state.throttled++;
      return sendJson(
        response,
        429,
        { message: 'Too many requests' },
        { ...rateHeaders, 'retry-after': String(retryAfter) },
      );
    }
    if (await answeredByFault(response, state.faults, roll, random, name)) return;
    for (const [name, value] of Object.entries(rateHeaders)) response.setHeader(name, value);
    try {
      await route.handle({ request, response, params, url });
    } finally {
      const shape = callShape(request, route.pattern, url);
      state.calls[JSON.stringify(shape)] = shape;
    }
  }

  async function issueToken(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { clientId, clientSecret } = GREENHOUSE_SANDBOX_DEFAULTS;
    const expected = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    const form = new URLSearchParams((await readBody(request)).toString());
    if (request.headers.authorization !== expected) return sendJson(response, 401, { error: 'invalid_client' });
    if (form.get('grant_type') !== 'client_credentials')
      return sendJson(response, 400, { error: 'unsupported_grant_type' });
    // A token acts as `sub` when one is given: a user of the organisation.
    const sub = form.get('sub');
    if (sub !== null && !GREENHOUSE_SANDBOX_DEFAULTS.userIds.includes(sub))
      return sendJson(response, 400, { error: 'invalid_grant', error_description: 'sub is not a user' });
    const token = randomUUID();
    const expiresAt = Date.now() + GREENHOUSE_SANDBOX_DEFAULTS.tokenTtlSeconds * 1000;
    tokens.set(token, { expiresAt, clientId });
    // Greenhouse says when the token ends, not how long it lasts (ats-facts, Corrections 2026-11).
    sendJson(response, 200, {
      access_token: token,
      token_type: 'Bearer',
      expires_at: new Date(expiresAt).toISOString(),
    });
  }

  function existingApplication(applicationId: number): Application {
    const application = state.applications.find((a) => a.id === applicationId);
    if (!application) throw new Error(`application ${applicationId} does not exist`);
    return application;
  }

  async function deleteCandidate(applicationId: number): Promise<DeliveryRecord[]> {
    const application = existingApplication(applicationId);
    const candidate = state.candidates.find((c) => c.id === application.candidate_id) as Candidate;
    const deleted = state.applications.filter((a) => a.candidate_id === candidate.id).map((a) => a.id);
    state.applications = state.applications.filter((a) => a.candidate_id !== candidate.id);
    state.candidates = state.candidates.filter((c) => c.id !== candidate.id);
    // webhooks/_candidate_events.md, "Delete candidate": the person and the ids of the applications deleted.
    const body = greenhouseJson({
      action: 'delete_candidate',
      payload: {
        person: {
          id: candidate.id,
          first_name: candidate.first_name,
          last_name: candidate.last_name,
          deleted_application_ids: deleted,
        },
      },
    });
    return send(body, 'delete_candidate', randomUUID());
  }

  async function mergeCandidate(applicationId: number): Promise<DeliveryRecord[]> {
    const application = existingApplication(applicationId);
    const loser = state.candidates.find((c) => c.id === application.candidate_id) as Candidate;
    const winner: Candidate = { ...loser, id: nextId++ };
    state.candidates = [...state.candidates.filter((c) => c.id !== loser.id), winner];
    for (const a of state.applications) if (a.candidate_id === loser.id) a.candidate_id = winner.id;
    // webhooks/_candidate_events.md, "Candidate merged": the record merged away and the one that stays.
    const body = greenhouseJson({
      action: 'merge_candidate',
      payload: {
        person: {
          id: loser.id,
          first_name: loser.first_name,
          last_name: loser.last_name,
          new_candidate_id: winner.id,
        },
      },
    });
    return send(body, 'merge_candidate', randomUUID());
  }

  async function anonymizeCandidate(applicationId: number): Promise<DeliveryRecord[]> {
    const application = existingApplication(applicationId);
    const candidate = state.candidates.find((c) => c.id === application.candidate_id) as Candidate;
    Object.assign(candidate, { first_name: 'Anonymized', last_name: String(candidate.id), email_addresses: [] });
    const body = greenhouseJson({
      action: 'candidate_anonymized',
      payload: { candidate_id: candidate.id, anonymized_fields: ['full_name', 'email_addresses'] },
    });
    return send(body, 'candidate_anonymized', randomUUID());
  }

  let baseUrl = '';
  const running = await listen((request, response) => {
    const url = new URL(request.url ?? '/', baseUrl);
    const method = request.method ?? 'GET';
    const work = (async () => {
      if (method === 'POST' && url.pathname === '/token') {
        // A form body (RFC 6749 client credentials): its field names are recorded as a JSON body's would be.
        const form = new URLSearchParams((await readBody(request)).toString('utf8'));
        const shape = {
          method,
          route: '/token',
          query: [...url.searchParams.keys()],
          body: [...new Set(form.keys())].sort(),
        };
        state.calls[JSON.stringify(shape)] = shape;
        return issueToken(request, response);
      }
      // Harvest v1/v2 are out of service and took another credential: a v3 token is refused there.
      if (/^\/v[12]\//.test(url.pathname)) {
        const shape = callShape(request, url.pathname, url);
        state.calls[JSON.stringify(shape)] = shape;
        return sendJson(response, 401, { message: 'Harvest v1 and v2 do not accept this credential' });
      }
      const controlMatch = matchRoute(control, method, url.pathname);
      if (controlMatch) return controlMatch.route.handle({ request, response, params: controlMatch.params, url });
      const apiMatch = matchRoute(api, method, url.pathname);
      if (apiMatch) return handleApi(request, response, apiMatch.route, apiMatch.params, url);
      sendJson(response, 404, { message: `No route ${method} ${url.pathname}` });
    })();
    work.catch((error: unknown) => answerFailure(request, response, error));
  }, options.port ?? GREENHOUSE_SANDBOX_DEFAULTS.port);
  baseUrl = running.url;

  return {
    url: running.url,
    clientId: GREENHOUSE_SANDBOX_DEFAULTS.clientId,
    clientSecret: GREENHOUSE_SANDBOX_DEFAULTS.clientSecret,
    state,
    async registerWebhook(target) {
      state.webhooks.push(target);
      const [ping] = await send(
        greenhouseJson({
          action: 'ping',
          payload: { web_hook_id: state.webhooks.length, endpoint_url: target.url, event: 'candidate_stage_change' },
        }),
        'ping',
        randomUUID(),
      );
      return ping as DeliveryRecord;
    },
    addCandidate,
    addApplication,
    moveCandidate,
    async resendStageChange(applicationId) {
      const event = lastEvent.get(applicationId);
      if (!event) throw new Error(`application ${applicationId} has sent no stage change yet`);
      const [record] = await send(event.body, 'candidate_stage_change', randomUUID());
      return record as DeliveryRecord;
    },
    deleteCandidate,
    mergeCandidate,
    anonymizeCandidate,
    close: running.close,
  };
}
