import * as v from 'valibot';
import { greenhouseProfile } from '../../../../../shared/ats/greenhouse/profile';
import { describeFirstIssue } from '../../../../../shared/validation';
import { base64Bytes, contentTypeOf, download } from '../../file-store';
import { json, route, sendJson, type Route, type RouteContext } from '../../http-kit';
import { jsonBody, type KitApplication, type KitContext, type KitJob, type KitNote } from '../ats-sandbox-kit';
import { Refusal } from '../edge';
import { linkPage, readLinkCursor, type LinkCursor } from '../paging';
import { applicationStages, statusOf, type Attachment, type GreenhouseRecords } from './state';

/** v3 lists: `per_page` 100 by default; id filters take at most 50 ids (/docs/list-endpoints). */
const [DEFAULT_PER_PAGE, MAX_FILTER_IDS] = [100, 50];
export const unprocessable = (field: string, message: string) =>
  new Refusal(422, { message: 'Validation error', errors: [{ message, field }] });
const notFound = (message = 'Resource not found') => new Refusal(404, { message });
const id = v.union([v.number(), v.string()]);
const moveBody = v.object({ from_stage_id: v.optional(id), to_stage_id: v.optional(id) });
const noteBody = v.object({
  candidate_id: id,
  application_id: v.optional(id),
  body: v.pipe(v.string(), v.nonEmpty('body is required')),
  note_type: v.optional(v.string(), 'NOTE'),
  visibility: v.picklist(['admin_only', 'private', 'public'], 'visibility must be admin_only, private or public'),
  user_id: id,
});

const ATTACHMENT_TYPES = ['resume', 'cover_letter', 'take_home_test', 'offer_packet', 'offer_letter', 'other'];
const AGREEMENT_TYPES = ['signed_offer_letter', 'midfunnel_agreement', 'automated_agreement', 'form_attachment'];
const attachmentBody = v.object({
  application_id: id,
  filename: v.pipe(v.string(), v.regex(/\.\w+$/, 'filename needs an extension')),
  type: v.picklist([...ATTACHMENT_TYPES, ...AGREEMENT_TYPES], 'type is not an attachment type'),
  content: v.optional(v.string()),
  url: v.optional(v.pipe(v.string(), v.url('url must be a URL'))),
  visibility: v.optional(v.picklist(['public', 'admin_only', 'private'], 'visibility: public, admin_only or private')),
});
/** Extensions an organisation's blocklist refuses (post_v3-attachments names .html; executables are the usual rest). */
const BLOCKED_EXTENSIONS = /\.(exe|html?|js|bat|cmd|com|msi|scr|sh|vbs|jar|dll)$/i;
/** `gte|2024-01-01T00:00:00Z` (gte, lte, gt, lt), a v3 list's timestamp filter (/docs/list-endpoints). */
const stamped = (at: string, filter: string) => {
  const [op = '', when = ''] = filter.split('|');
  const after: number = Date.parse(at) - Date.parse(when);
  return ({ gte: after >= 0, lte: after <= 0, gt: after > 0, lt: after < 0 } as Record<string, boolean>)[op] ?? false;
};

/** The body, checked by `schema`; refused (422, its field named) when it does not fit. */
async function parsed<S extends v.GenericSchema>(context: RouteContext, schema: S, message?: string) {
  const result = v.safeParse(schema, await jsonBody(context.request));
  if (result.success) return result.output as v.InferOutput<S>;
  const { field } = describeFirstIssue(result.issues, { fallbackField: 'body' });
  throw unprocessable(field, message ?? result.issues[0]?.message ?? 'invalid');
}

/** The v3 application (harvestdocs get_v3-applications; ats-facts 2026-11, 2026-11b): flat, no rejection reason. */
const applicationV3 = (kit: KitContext, a: KitApplication) => ({
  ...{ id: Number(a.id), candidate_id: Number(a.candidateId), job_id: Number(a.jobId) },
  ...{ job_interview_stage_id: Number(a.stageId), stage_name: kit.stage(a.jobId, a.stageId)?.name ?? '' },
  ...{ status: statusOf(a) === 'active' ? 'in_process' : statusOf(a), prospect: false },
  applied_at: '2026-11-01T09:00:00Z',
  rejected_at: statusOf(a) === 'rejected' ? (a.exit?.at ?? null) : null,
});
/** A candidate as v3 shows one: an anonymised candidate has no e-mail left. */
export const candidateV3 = (c: { id: string; firstName: string; lastName: string; email: string }) => ({
  ...{ id: Number(c.id), first_name: c.firstName, last_name: c.lastName },
  email_addresses: c.email ? [{ value: c.email, type: 'personal' }] : [],
});

/** A v3 list: its items, how each shows, its plural id filters (the id each matches) and its other filters. */
interface List<T> {
  pattern: string;
  items(): readonly T[];
  show?(item: T): unknown;
  ids: Record<string, keyof T | ((item: T) => number)>;
  text?: Record<string, (item: T, value: string) => boolean>;
}

/** Where the page starts: a cursor request carries no other parameter; a parameter the list lacks is refused. */
function pageStart<T>(list: List<T>, url: URL): LinkCursor {
  const cursor = url.searchParams.get('cursor');
  if (cursor !== null && [...url.searchParams.keys()].length > 1)
    throw unprocessable('cursor', 'a cursor request takes no other parameter');
  const start = cursor === null ? { query: url.searchParams, offset: 0 } : readLinkCursor(cursor);
  if (!start) throw unprocessable('cursor', 'is not a cursor this API issued');
  const known = (key: string) =>
    key === 'per_page' || Object.hasOwn(list.ids, key) || Object.hasOwn(list.text ?? {}, key);
  const unknown = [...start.query.keys()].find((key) => !known(key));
  if (unknown !== undefined) throw unprocessable(unknown, 'is not a parameter of this endpoint');
  return start;
}

/** The items the query's filters keep: plural id filters of at most 50 ids. */
function filtered<T>(list: List<T>, query: URLSearchParams): readonly T[] {
  let selected = list.items();
  for (const [key, field] of Object.entries(list.ids)) {
    const ids = query
      .get(key)
      ?.split(',')
      .map((id) => Number(id.trim()));
    if (!ids) continue;
    if (ids.length > MAX_FILTER_IDS || ids.some((id) => !Number.isInteger(id)))
      throw unprocessable(key, 'must be a list of at most 50 ids');
    const idOf = (item: T) => Number(typeof field === 'function' ? field(item) : item[field]);
    selected = selected.filter((item) => ids.includes(idOf(item)));
  }
  for (const [key, keep] of Object.entries(list.text ?? {})) {
    const value = query.get(key);
    if (value !== null) selected = selected.filter((item) => keep(item, value));
  }
  return selected;
}

/** A v3 list (/docs/pagination, /docs/list-endpoints): a bare array, `per_page` 1–500, the next page only in Link. */
function listRoute<T>(list: List<T>): Route {
  return route(`GET ${list.pattern}`, ({ response, url }) => {
    const start = pageStart(list, url);
    const perPage = Number(start.query.get('per_page') ?? DEFAULT_PER_PAGE);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > greenhouseProfile.paging.maxPageSize)
      throw unprocessable('per_page', 'must be between 1 and 500');
    const page = linkPage(filtered(list, start.query), { ...start, perPage, route: `${url.origin}${list.pattern}` });
    sendJson(response, 200, page.items.map(list.show ?? ((item) => item)), page.headers);
  });
}

/** Harvest v3's lists: the hiring process (applications, the stages they entered, jobs), candidates, notes, tags. */
function lists(kit: KitContext, records: GreenhouseRecords): Route[] {
  const { state } = kit;
  const stages = () =>
    state.jobs.flatMap((j) =>
      j.stages.map((s, sort_order) => ({ id: Number(s.id), name: s.name, job_id: j.id, sort_order })),
    );
  return [
    listRoute<KitApplication>({
      pattern: '/v3/applications',
      items: () => state.applications,
      show: (a) => applicationV3(kit, a),
      ids: { ids: 'id', candidate_ids: 'candidateId', job_ids: 'jobId', stage_ids: 'stageId' },
      // The filter's own word for an open application is `active` (its enum has no `in_process`).
      text: { status: (a, value) => statusOf(a) === value },
    }),
    // `current=true` keeps the rows without `exited_at` (harvestdocs /reference/get_v3-application-stages).
    listRoute({
      pattern: '/v3/application_stages',
      items: () => applicationStages(kit),
      ids: { ids: 'id', application_ids: 'application_id', job_interview_stage_ids: 'job_interview_stage_id' },
      text: {
        current: (r, value) => (value === 'true' ? r.exited_at === null : value !== 'false' || r.exited_at !== null),
      },
    }),
    listRoute<KitJob>({
      pattern: '/v3/jobs',
      items: () => state.jobs,
      show: (j) => ({ id: Number(j.id), name: j.name, status: j.state ?? 'open' }),
      ids: { ids: 'id' },
      text: { status: (j, value) => (j.state ?? 'open') === value },
    }),
    listRoute({ pattern: '/v3/candidates', items: () => state.candidates, show: candidateV3, ids: { ids: 'id' } }),
    listRoute<Attachment>({
      pattern: '/v3/attachments',
      items: () => records.attachments,
      ids: { ids: 'id', application_ids: 'application_id', candidate_ids: 'candidate_id' },
      text: {
        type: (a, value) => a.type === value,
        created_at: (a, value) => stamped(a.created_at, value),
        updated_at: (a, value) => stamped(a.updated_at, value),
      },
    }),
    listRoute({
      pattern: '/v3/job_interview_stages',
      items: stages,
      show: (s) => ({ id: s.id, job_id: Number(s.job_id), name: s.name, sort_order: s.sort_order, active: true }),
      ids: { job_ids: 'job_id' },
    }),
    listRoute<KitNote>({
      pattern: '/v3/notes',
      items: () => state.notes,
      show: noteV3,
      ids: { candidate_ids: 'candidateId' },
    }),
    listRoute({ pattern: '/v3/candidate_tags', items: () => records.candidateTags, ids: { ids: 'id' } }),
    listRoute({
      pattern: '/v3/applied_candidate_tags',
      items: () => records.appliedTags,
      ids: { ids: 'id', candidate_ids: 'candidate_id', candidate_tag_ids: 'candidate_tag_id' },
    }),
  ];
}

/** A note as v3 reads it back: `type`, and the visibility spelt `…_visible` (Airbyte's v3 example). */
const noteV3 = (n: KitNote) => ({
  ...{ id: Number(n.id), candidate_id: Number(n.candidateId), body: n.body, ...n.fields },
  ...{ created_at: n.at, ...(n.applicationId ? { application_id: Number(n.applicationId) } : {}) },
});

/** `POST /v3/applications/:id/move` (204): only from the stage the application is in now (stale requests fail). */
async function move(kit: KitContext, context: RouteContext) {
  const application = kit.application(String(context.params.id));
  if (!application) throw notFound();
  const body = await parsed(context, moveBody, 'invalid body');
  if (statusOf(application) !== 'active') throw unprocessable('application_id', 'application is not in process');
  if (body.from_stage_id === undefined) throw unprocessable('from_stage_id', 'from_stage_id is required');
  if (String(body.from_stage_id) !== application.stageId)
    throw unprocessable('from_stage_id', 'the application is not in this stage');
  const stages = kit.parties(application).job.stages;
  const index = stages.findIndex((s) => s.id === application.stageId);
  const to = body.to_stage_id;
  const target = to === undefined ? stages[index + 1] : stages.find((s) => s.id === String(to));
  if (!target) throw unprocessable('to_stage_id', 'stage is not part of this job');
  context.response.writeHead(204).end();
  // A move through the API changes the stage in Greenhouse, which fires the stage-change webhook too.
  kit.moveByApi(application, target.id);
}

/** `POST /v3/attachments` (201): a JSON body, the bytes in base64 `content` or at a `url` fetched at once. */
async function attach(kit: KitContext, records: GreenhouseRecords, context: RouteContext) {
  const body = await parsed(context, attachmentBody);
  const application = kit.application(String(body.application_id));
  if (!application) throw unprocessable('application_id', 'application not found');
  if ((body.content === undefined) === (body.url === undefined))
    throw unprocessable('content', 'exactly one of content or url is required');
  if (BLOCKED_EXTENSIONS.test(body.filename)) throw unprocessable('filename', 'this file type is not allowed');
  const bytes = body.url === undefined ? base64Bytes(body.content) : await download(body.url);
  if (!bytes) throw unprocessable(body.url === undefined ? 'content' : 'url', 'no file could be read from it');
  const [{ filename, type, visibility = 'admin_only' }, id] = [body, Number(records.newId())];
  const file = { id: String(id), owner: application.id, name: filename, contentType: contentTypeOf(filename) };
  const { url, contentType: content_type, uploadedAt: at } = kit.files.add({ ...file, bytes });
  const [application_id, candidate_id] = [Number(application.id), Number(application.candidateId)];
  const attachment: Attachment = {
    ...{ id, application_id, candidate_id, filename, type, visibility, url, content_type },
    ...{ created_at: at, updated_at: at },
  };
  records.attachments.push(attachment);
  return attachment;
}

/** Harvest v3 as a table of routes over the organisation's records. */
export function harvestRoutes(kit: KitContext, records: GreenhouseRecords): Route[] {
  const candidate = (id: unknown) => kit.candidate(String(id));
  const created = <T>(list: T[], item: T) => list.push(item) && item;
  return [
    ...lists(kit, records),
    route('POST /v3/applications/:id/move', (context) => move(kit, context)),
    json('POST /v3/attachments', 201, (context) => attach(kit, records, context)),
    json('POST /v3/notes', 201, async (context) => {
      const body = await parsed(context, noteBody);
      if (!candidate(body.candidate_id)) throw notFound(`candidate ${body.candidate_id} not found`);
      const on = { id: String(body.application_id ?? ''), candidateId: String(body.candidate_id) };
      const fields = { type: body.note_type, visibility: `${body.visibility}_visible`, user_id: body.user_id };
      return noteV3(Object.assign(kit.addNote(on, body.body, String(body.user_id)), { fields }));
    }),
    // An existing name is refused (undocumented), so a client lists before it creates.
    json('POST /v3/candidate_tags', 201, async (context) => {
      const { name } = await parsed(context, v.object({ name: v.pipe(v.string(), v.minLength(1)) }), 'is required');
      if (records.candidateTags.some((t) => t.name === name)) throw unprocessable('name', 'has already been taken');
      return created(records.candidateTags, { id: Number(records.newId()), name });
    }),
    json('POST /v3/applied_candidate_tags', 201, async (context) => {
      const body = await parsed(context, v.object({ candidate_id: id, candidate_tag_id: id }), 'is required');
      const [candidate_id, candidate_tag_id] = [Number(body.candidate_id), Number(body.candidate_tag_id)];
      if (!candidate(candidate_id)) throw notFound(`candidate ${candidate_id} not found`);
      if (!records.candidateTags.some((t) => t.id === candidate_tag_id))
        throw notFound(`candidate tag ${candidate_tag_id} not found`);
      if (records.appliedTags.some((r) => r.candidate_id === candidate_id && r.candidate_tag_id === candidate_tag_id))
        throw unprocessable('candidate_tag_id', 'is already applied to this candidate');
      const row = created(records.appliedTags, { id: Number(records.newId()), candidate_id, candidate_tag_id });
      records.retagged(candidate_id);
      return row;
    }),
    route('DELETE /v3/applied_candidate_tags/:id', ({ response, params }) => {
      const index = records.appliedTags.findIndex((r) => r.id === Number(params.id));
      if (index < 0) throw notFound();
      const [row] = records.appliedTags.splice(index, 1);
      records.retagged(row?.candidate_id ?? -1);
      response.writeHead(204).end();
    }),
  ];
}
