import type { ServerResponse } from 'node:http';
import * as v from 'valibot';
import { readBody, sendJson, type Route } from '../../http-kit';
import type { DeliveryRecord } from '../signed-webhooks';
import type { GreenhouseAssessments } from './assessments';
import { describeFirstIssue } from '../../../../../shared/validation';
import { errorMessage } from '../../../../../shared/errors';
import {
  GREENHOUSE_SANDBOX_DEFAULTS,
  type Application,
  type ApplicationStage,
  type Candidate,
  type GreenhouseRecords,
  type GreenhouseSandboxState,
  type Job,
  type Note,
  type Stage,
  type LifecycleInput,
  type StageMove,
} from './state';

const unprocessable = (response: ServerResponse, field: string, message: string) =>
  sendJson(response, 422, { message: 'Validation error', errors: [{ message, field }] });

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

/**
 * The v3 read of an application: flat, with the stage a move is made from (`job_interview_stage_id`), `status`
 * `in_process` while open and `rejected` / `hired` once out, and `rejected_at` (harvestdocs
 * /reference/get_v3-applications; ats-facts Corrections 2026-11 and 2026-11b). No rejection reason: the v3 record is
 * not documented to carry one (`GET /v3/rejection_details?application_ids=` has it).
 */
const applicationV3 = (a: Application) => ({
  id: a.id,
  candidate_id: a.candidate_id,
  job_id: a.job_id,
  job_interview_stage_id: a.current_stage.id,
  stage_name: a.current_stage.name,
  status: a.status === 'active' ? 'in_process' : a.status,
  prospect: false,
  applied_at: '2026-11-01T09:00:00Z',
  rejected_at: a.status === 'rejected' ? (a.rejected_at ?? null) : null,
});
const idList = (value: string) => value.split(',').map((id) => Number(id.trim()));

/**
 * A v3 list endpoint (/docs/pagination, /docs/list-endpoints): a bare JSON array; plural id filters of at most
 * 50 ids; `per_page` 1–500; the next page only in `Link: <…?cursor=…>; rel="next"`, and a cursor request
 * carries no other parameter. A parameter the endpoint does not have is refused (422), not ignored.
 */
function listRoute<T>(
  baseUrl: () => string,
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
        headers.link = `<${baseUrl()}${pattern}?cursor=${next}>; rel="next"`;
      }
      sendJson(response, 200, page.map(show), headers);
    },
  };
}

/**
 * Harvest v3 as a table of routes over the organisation's records (`moved`: a move through the API, which changes
 * the stage in Greenhouse and so fires the stage-change webhook too).
 */
export function harvestRoutes(
  records: GreenhouseRecords,
  baseUrl: () => string,
  moved: (applicationId: number, stageId: number) => void,
): Route[] {
  const { state } = records;
  return [
    listRoute<Application>(
      baseUrl,
      '/v3/applications',
      {
        ids: (a, ids) => ids.includes(a.id),
        candidate_ids: (a, ids) => ids.includes(a.candidate_id),
        job_ids: (a, ids) => ids.includes(a.job_id),
        stage_ids: (a, ids) => ids.includes(a.current_stage.id),
      },
      () => state.applications,
      applicationV3,
      // The filter's own word for an open application is `active` (its enum has no `in_process`).
      { status: (a, value) => a.status === value },
    ),
    // The applications in an interview stage now: `current=true` keeps the rows without `exited_at`
    // (harvestdocs /reference/get_v3-application-stages).
    listRoute<ApplicationStage>(
      baseUrl,
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
        moved(application.id, target.id);
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
          id: records.newId(),
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
      baseUrl,
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
      baseUrl,
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
        const tag = { id: records.newId(), name: parsed.output.name };
        state.candidateTags.push(tag);
        sendJson(response, 201, tag);
      },
    },
    listRoute<GreenhouseSandboxState['appliedTags'][number]>(
      baseUrl,
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
        const row = { id: records.newId(), candidate_id: candidateId, candidate_tag_id: tagId };
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
      baseUrl,
      '/v3/jobs',
      { ids: (j, ids) => ids.includes(j.id) },
      () => state.jobs,
      (j) => ({ id: j.id, name: j.name, status: j.status ?? 'open' }),
      { status: (j, value) => (j.status ?? 'open') === value },
    ),
    listRoute<Candidate>(
      baseUrl,
      '/v3/candidates',
      { ids: (c, ids) => ids.includes(c.id) },
      () => state.candidates,
      (c) => c,
    ),
    listRoute<Stage & { job_id: number; sort_order: number }>(
      baseUrl,
      '/v3/job_interview_stages',
      { job_ids: (s, ids) => ids.includes(s.job_id) },
      () => state.jobs.flatMap((j) => j.stages.map((s, i) => ({ ...s, job_id: j.id, sort_order: i }))),
      (s) => ({ id: s.id, job_id: s.job_id, name: s.name, sort_order: s.sort_order, active: true }),
    ),
  ];
}

/** A recruiter's "Send Test" on an application, and the tests Greenhouse keeps. */
function assessmentRoutes(assessments: GreenhouseAssessments): Route[] {
  return [
    {
      method: 'POST',
      pattern: '/_sandbox/send-test',
      handle: async ({ request, response }) => {
        const input = JSON.parse((await readBody(request)).toString() || '{}') as {
          application_id: number;
          partner_test_id: string;
        };
        try {
          sendJson(response, 200, await assessments.sendTest(input));
        } catch (error) {
          sendJson(response, 502, { error: errorMessage(error) });
        }
      },
    },
    {
      method: 'GET',
      pattern: '/_sandbox/take-home-tests',
      handle: ({ response }) => sendJson(response, 200, assessments.tests),
    },
  ];
}

/** What a test or the demo does as a recruiter would (`/_sandbox/…`): the same actions as the sandbox's methods. */
export interface RecruiterActions {
  state: GreenhouseSandboxState;
  addCandidate: GreenhouseRecords['addCandidate'];
  moveCandidate(input: StageMove): Promise<DeliveryRecord[]>;
  deleteCandidate(applicationId: number): Promise<DeliveryRecord[]>;
  mergeCandidate(applicationId: number): Promise<DeliveryRecord[]>;
  anonymizeCandidate(applicationId: number): Promise<DeliveryRecord[]>;
  changeLifecycle(input: LifecycleInput): Promise<DeliveryRecord[]>;
  assessments: GreenhouseAssessments;
}

/** The sandbox's own routes, outside Greenhouse's API. */
export function controlRoutes(actions: RecruiterActions): Route[] {
  const { state, addCandidate, moveCandidate, deleteCandidate, mergeCandidate, anonymizeCandidate } = actions;
  return [
    ...assessmentRoutes(actions.assessments),
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
        const input = JSON.parse((await readBody(request)).toString()) as Parameters<
          RecruiterActions['moveCandidate']
        >[0];
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
      pattern: '/_sandbox/lifecycle',
      handle: async ({ request, response }) => {
        const body = JSON.parse((await readBody(request)).toString() || '{}') as Record<string, unknown>;
        try {
          const deliveries = await actions.changeLifecycle({
            application_id: Number(body.application_id ?? body.applicationId),
            action: body.action as LifecycleInput['action'],
            reason: typeof body.reason === 'string' ? body.reason : undefined,
            deliver: body.deliver !== false,
          });
          sendJson(response, 200, { deliveries });
        } catch (error) {
          sendJson(response, 404, { error: errorMessage(error) });
        }
      },
    },
    {
      method: 'POST',
      pattern: '/_sandbox/faults',
      handle: async ({ request, response }) => {
        Object.assign(state.faults, JSON.parse((await readBody(request)).toString()));
        sendJson(response, 200, state.faults);
      },
    },
  ];
}
