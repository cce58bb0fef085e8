import type { ServerResponse } from 'node:http';
import * as v from 'valibot';
import { greenhouseProfile } from '../../../../../shared/ats/greenhouse/profile';
import { describeFirstIssue } from '../../../../../shared/validation';
import { sendJson, type Route, type RouteContext } from '../../http-kit';
import { jsonBody } from '../ats-sandbox-kit';
import { linkPage, readLinkCursor, type LinkCursor } from '../paging';
import { GREENHOUSE_SANDBOX_DEFAULTS, type Application, type GreenhouseRecords, type Job } from './state';

const unprocessable = (response: ServerResponse, field: string, message: string) =>
  sendJson(response, 422, { message: 'Validation error', errors: [{ message, field }] });
const notFound = (response: ServerResponse, message = 'Resource not found') => sendJson(response, 404, { message });

const id = v.union([v.number(), v.string()]);
const noteBody = v.object({
  candidate_id: id,
  application_id: v.optional(id),
  body: v.pipe(v.string(), v.nonEmpty('body is required')),
  note_type: v.optional(v.string(), 'NOTE'),
  visibility: v.picklist(['admin_only', 'private', 'public'], 'visibility must be admin_only, private or public'),
  user_id: id,
});
const appliedTagBody = v.object({ candidate_id: id, candidate_tag_id: id });
const moveBody = v.object({ from_stage_id: v.optional(id), to_stage_id: v.optional(id) });

/** The body, checked by `schema`; a refusal (422, its field named) answered, and undefined, when it does not fit. */
async function parsed<S extends v.GenericSchema>(context: RouteContext, schema: S, message?: string) {
  const result = v.safeParse(schema, await jsonBody(context.request));
  if (result.success) return result.output as v.InferOutput<S>;
  const { field } = describeFirstIssue(result.issues, { fallbackField: 'body' });
  unprocessable(context.response, field, message ?? result.issues[0]?.message ?? 'invalid');
  return undefined;
}

/**
 * The v3 read of an application (harvestdocs /reference/get_v3-applications; ats-facts Corrections 2026-11 and
 * 2026-11b): flat, with `job_interview_stage_id`, `status` `in_process` while open, and `rejected_at`. No rejection
 * reason: the v3 record is not documented to carry one.
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

/** A v3 list: its items, how each shows, its plural id filters and its other filters. */
interface List<T> {
  pattern: string;
  items(): readonly T[];
  show?(item: T): unknown;
  ids: Record<string, (item: T, ids: number[]) => boolean>;
  text?: Record<string, (item: T, value: string) => boolean>;
}

/** Where the page starts: a cursor request carries no other parameter; a parameter the list lacks is refused. */
function pageStart<T>(list: List<T>, { response, url }: RouteContext): LinkCursor | undefined {
  const cursor = url.searchParams.get('cursor');
  if (cursor !== null && [...url.searchParams.keys()].length > 1)
    return void unprocessable(response, 'cursor', 'a cursor request takes no other parameter');
  const start = cursor === null ? { query: url.searchParams, offset: 0 } : readLinkCursor(cursor);
  if (!start) return void unprocessable(response, 'cursor', 'is not a cursor this API issued');
  const known = (key: string) =>
    key === 'per_page' || Object.hasOwn(list.ids, key) || Object.hasOwn(list.text ?? {}, key);
  const unknown = [...start.query.keys()].find((key) => !known(key));
  return unknown === undefined ? start : void unprocessable(response, unknown, 'is not a parameter of this endpoint');
}

/** The items the query's filters keep: plural id filters of at most 50 ids; undefined once a filter is refused. */
function filtered<T>(list: List<T>, query: URLSearchParams, response: ServerResponse): readonly T[] | undefined {
  let selected = list.items();
  for (const [key, keep] of Object.entries(list.ids)) {
    const ids = query
      .get(key)
      ?.split(',')
      .map((id) => Number(id.trim()));
    if (!ids) continue;
    if (ids.length > GREENHOUSE_SANDBOX_DEFAULTS.maxFilterIds || ids.some((id) => !Number.isInteger(id)))
      return void unprocessable(response, key, 'must be a list of at most 50 ids');
    selected = selected.filter((item) => keep(item, ids));
  }
  for (const [key, keep] of Object.entries(list.text ?? {})) {
    const value = query.get(key);
    if (value !== null) selected = selected.filter((item) => keep(item, value));
  }
  return selected;
}

/**
 * A v3 list endpoint (/docs/pagination, /docs/list-endpoints): a bare JSON array, `per_page` 1–500 (the profile's
 * largest page), the next page only in the Link header. A parameter the endpoint lacks is refused (422).
 */
function listRoute<T>(list: List<T>): Route {
  const handle = (context: RouteContext) => {
    const start = pageStart(list, context);
    if (!start) return;
    const perPage = Number(start.query.get('per_page') ?? GREENHOUSE_SANDBOX_DEFAULTS.defaultPerPage);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > greenhouseProfile.paging.maxPageSize)
      return unprocessable(context.response, 'per_page', 'must be between 1 and 500');
    const selected = filtered(list, start.query, context.response);
    if (!selected) return;
    const page = linkPage(selected, { ...start, perPage, route: `${context.url.origin}${list.pattern}` });
    sendJson(context.response, 200, page.items.map(list.show ?? ((item) => item)), page.headers);
  };
  return { method: 'GET', pattern: list.pattern, handle };
}

/** `POST /v3/applications/:id/move` (204): only from the stage the application is in now (stale requests fail). */
async function move(records: GreenhouseRecords, context: RouteContext, moved: (id: number, stageId: number) => void) {
  const application = records.state.applications.find((a) => a.id === Number(context.params.id));
  if (!application) return notFound(context.response);
  const body = await parsed(context, moveBody, 'invalid body');
  if (!body) return;
  const refuse = (field: string, message: string) => unprocessable(context.response, field, message);
  if (application.status !== 'active') return refuse('application_id', 'application is not in process');
  if (body.from_stage_id === undefined) return refuse('from_stage_id', 'from_stage_id is required');
  if (Number(body.from_stage_id) !== application.current_stage.id)
    return refuse('from_stage_id', 'the application is not in this stage');
  const stages = records.jobOf(application).stages;
  const index = stages.findIndex((s) => s.id === application.current_stage.id);
  const to = body.to_stage_id;
  const target = to === undefined ? stages[index + 1] : stages.find((s) => s.id === Number(to));
  if (!target) return refuse('to_stage_id', 'stage is not part of this job');
  context.response.writeHead(204).end();
  // A move through the API changes the stage in Greenhouse, which fires the stage-change webhook too.
  moved(application.id, target.id);
}

async function addNote(records: GreenhouseRecords, context: RouteContext) {
  const body = await parsed(context, noteBody);
  if (!body) return;
  const candidate = records.state.candidates.find((c) => c.id === Number(body.candidate_id));
  if (!candidate) return notFound(context.response, `candidate ${body.candidate_id} not found`);
  const note = {
    ...{ id: records.newId(), candidate_id: candidate.id, body: body.body, type: body.note_type },
    ...{ visibility: `${body.visibility}_visible`, user_id: body.user_id, created_at: new Date().toISOString() },
    ...(body.application_id === undefined ? {} : { application_id: Number(body.application_id) }),
  };
  records.state.notes.push(note);
  sendJson(context.response, 201, note);
}

/** A new organisation tag; an existing name is refused (undocumented), so a client lists before it creates. */
async function createTag(records: GreenhouseRecords, context: RouteContext) {
  const body = await parsed(context, v.object({ name: v.pipe(v.string(), v.minLength(1)) }), 'is required');
  if (!body) return;
  if (records.state.candidateTags.some((t) => t.name === body.name))
    return unprocessable(context.response, 'name', 'has already been taken');
  const tag = { id: records.newId(), name: body.name };
  records.state.candidateTags.push(tag);
  sendJson(context.response, 201, tag);
}

async function applyTag(records: GreenhouseRecords, context: RouteContext) {
  const body = await parsed(context, appliedTagBody, 'is required');
  if (!body) return;
  const [candidateId, tagId] = [Number(body.candidate_id), Number(body.candidate_tag_id)];
  const { state } = records;
  if (!state.candidates.some((c) => c.id === candidateId))
    return notFound(context.response, `candidate ${candidateId} not found`);
  if (!state.candidateTags.some((t) => t.id === tagId))
    return notFound(context.response, `candidate tag ${tagId} not found`);
  if (state.appliedTags.some((r) => r.candidate_id === candidateId && r.candidate_tag_id === tagId))
    return unprocessable(context.response, 'candidate_tag_id', 'is already applied to this candidate');
  const row = { id: records.newId(), candidate_id: candidateId, candidate_tag_id: tagId };
  state.appliedTags.push(row);
  sendJson(context.response, 201, row);
}

const byId = <T extends { id: number }>(item: T, ids: number[]) => ids.includes(item.id);

/** Harvest v3's lists of the hiring process: applications, the stages they entered, jobs and their stages. */
function processLists(records: GreenhouseRecords): Route[] {
  const { state } = records;
  const stages = () => state.jobs.flatMap((j) => j.stages.map((s, sort_order) => ({ ...s, job_id: j.id, sort_order })));
  return [
    listRoute({
      pattern: '/v3/applications',
      items: () => state.applications,
      show: applicationV3,
      ids: {
        ids: byId,
        candidate_ids: (a, ids) => ids.includes(a.candidate_id),
        job_ids: (a, ids) => ids.includes(a.job_id),
        stage_ids: (a, ids) => ids.includes(a.current_stage.id),
      },
      // The filter's own word for an open application is `active` (its enum has no `in_process`).
      text: { status: (a, value) => a.status === value },
    }),
    // `current=true` keeps the rows without `exited_at` (harvestdocs /reference/get_v3-application-stages).
    listRoute({
      pattern: '/v3/application_stages',
      items: () => state.applicationStages,
      ids: {
        ids: byId,
        application_ids: (r, ids) => ids.includes(r.application_id),
        job_interview_stage_ids: (r, ids) => ids.includes(r.job_interview_stage_id),
      },
      text: {
        current: (r, value) => (value === 'true' ? r.exited_at === null : value !== 'false' || r.exited_at !== null),
      },
    }),
    listRoute<Job>({
      pattern: '/v3/jobs',
      items: () => state.jobs,
      show: (j) => ({ id: j.id, name: j.name, status: j.status ?? 'open' }),
      ids: { ids: byId },
      text: { status: (j, value) => (j.status ?? 'open') === value },
    }),
    listRoute({ pattern: '/v3/candidates', items: () => state.candidates, ids: { ids: byId } }),
    listRoute({
      pattern: '/v3/job_interview_stages',
      items: stages,
      show: (s) => ({ id: s.id, job_id: s.job_id, name: s.name, sort_order: s.sort_order, active: true }),
      ids: { job_ids: (s, ids) => ids.includes(s.job_id) },
    }),
  ];
}

/** Candidates, notes and tags; tags are two resources: the organisation's, and a row per tag applied to a candidate. */
function candidateLists(records: GreenhouseRecords): Route[] {
  const { state } = records;
  return [
    listRoute({
      pattern: '/v3/notes',
      items: () => state.notes,
      ids: { candidate_ids: (n, ids) => ids.includes(n.candidate_id) },
    }),
    listRoute({ pattern: '/v3/candidate_tags', items: () => state.candidateTags, ids: { ids: byId } }),
    listRoute({
      pattern: '/v3/applied_candidate_tags',
      items: () => state.appliedTags,
      ids: {
        ids: byId,
        candidate_ids: (r, ids) => ids.includes(r.candidate_id),
        candidate_tag_ids: (r, ids) => ids.includes(r.candidate_tag_id),
      },
    }),
  ];
}

/** Harvest v3 as a table of routes over the organisation's records (`moved`: a move made through the API). */
export function harvestRoutes(records: GreenhouseRecords, moved: (id: number, stageId: number) => void): Route[] {
  const removeTag = ({ response, params }: RouteContext) => {
    const index = records.state.appliedTags.findIndex((r) => r.id === Number(params.id));
    if (index < 0) return notFound(response);
    records.state.appliedTags.splice(index, 1);
    response.writeHead(204).end();
  };
  return [
    ...processLists(records),
    ...candidateLists(records),
    { method: 'POST', pattern: '/v3/applications/:id/move', handle: (context) => move(records, context, moved) },
    { method: 'POST', pattern: '/v3/notes', handle: (context) => addNote(records, context) },
    { method: 'POST', pattern: '/v3/candidate_tags', handle: (context) => createTag(records, context) },
    { method: 'POST', pattern: '/v3/applied_candidate_tags', handle: (context) => applyTag(records, context) },
    { method: 'DELETE', pattern: '/v3/applied_candidate_tags/:id', handle: removeTag },
  ];
}
