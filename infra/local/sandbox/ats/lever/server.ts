import { randomBytes, randomUUID } from 'node:crypto';
import { leverProfile } from '../../../../../shared/ats/lever/profile';
import { LEVER_WEBHOOK_EVENTS } from '../../../../../shared/ats/lever/lever.webhooks';
import { contentTypeOf, formParts, type ListedFile } from '../../file-store';
import { json, sendJson, type Route, type RouteContext } from '../../http-kit';
import { retag, startAtsSandbox, type SandboxOptions } from '../ats-sandbox-kit';
import type { Body, KitApplication, KitChange, KitContext, KitNote } from '../ats-sandbox-kit';
import { Refusal } from '../edge';
import { bodyPage } from '../paging';
import { sendChange, signDelivery, type WebhookTarget } from '../signed-webhooks';

const USER_IDS = ['lever-user-1'];
/** Archive reason ids of the account (`GET /v1/archive_reasons`: texts per account): one per way of leaving. */
const REASON_IDS = { rejected: 'reason-rejected', withdrawn: 'reason-withdrew', hired: 'reason-hired' };
/** Lever's stages are global: every posting shares them. */
const STAGES = [
  { id: 'applicant-new', name: 'New applicant' },
  { id: 'c1b2-ai-interview', name: 'AI Interview' },
  { id: 'd3e4-hm-review', name: 'Hiring Manager Review' },
  { id: 'offer', name: 'Offer' },
];

const refusal = (status: number, code: string, message: string) => new Refusal(status, { code, message });
const badRequest = (message: string) => refusal(400, 'BadRequestError', message);
/** Files over 30 MB are refused (its profile's `files`). */
const TOO_LARGE = refusal(413, 'RequestEntityTooLarge', 'File exceeds 30 MB');
const fileJson = ({ id, url: downloadUrl, name, uploadedAt, size }: ListedFile) => ({
  ...{ id, downloadUrl, ext: /\.(\w+)$/.exec(name)?.[1] ?? '', name, uploadedAt: Date.parse(uploadedAt), size },
  status: 'processed',
});
/** A webhook of `event`, signed with that event's own token; ids only in `data`, as every Lever webhook. */
const delivery = (target: WebhookTarget, event: string, data: Body) =>
  signDelivery(leverProfile.signature, target, { event, data }, { event });

const idsOf = (a: KitApplication) => ({ opportunityId: a.id, candidateId: a.candidateId, contactId: a.candidateId });
/** `archived` as the opportunity carries it: null in the pipeline, else `{archivedAt, reason}` (epoch ms, an id). */
function archivedJson({ status, exit, updatedAt }: KitApplication) {
  if (status !== 'archived') return null;
  return { archivedAt: Date.parse(exit?.at ?? updatedAt), reason: REASON_IDS[exit?.kind ?? 'rejected'] };
}

function opportunityJson(kit: KitContext, application: KitApplication, expand = false) {
  const { candidate } = kit.parties(application);
  const ref = `app-${application.id}`;
  return {
    ...{ id: application.id, name: `${candidate.firstName} ${candidate.lastName}`, contact: candidate.id },
    ...{ emails: [candidate.email], stage: application.stageId, archived: archivedJson(application) },
    applications: expand ? [{ id: ref, posting: application.jobId, type: 'posting' }] : [ref],
  };
}

/** A note as Lever reads it back: the text written as `value` is in `fields[].value` (NangoHQ's notes model). */
const noteJson = (note: KitNote, secret: boolean) => ({
  ...{ id: note.id, text: 'Note', fields: [{ type: 'note', text: 'Note', value: note.body }] },
  ...{ user: note.author ?? null, secret, completedAt: null, createdAt: Date.parse(note.at), deletedAt: null },
});

/**
 * What Lever sends (ats-routes.json): `candidateStageChange`; `candidateArchiveChange` for an archive or unarchive
 * (`toArchived` null); for a hire `candidateHired`, and the archive change as Lever archives hired opportunities.
 */
function changeDeliveries(application: KitApplication, target: WebhookTarget, { from, action }: KitChange) {
  const ids = idsOf(application);
  const moved = { ...ids, fromStageId: from ?? null, toStageId: application.stageId };
  if (!action) return [delivery(target, 'candidateStageChange', moved)];
  const toArchived = action === 'unreject' ? null : archivedJson(application);
  const archiveChange = delivery(target, 'candidateArchiveChange', { ...ids, toArchived });
  return action === 'hire' ? [delivery(target, 'candidateHired', ids), archiveChange] : [archiveChange];
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

/** A page of `limit` (1–100) from the opaque `offset` of the previous page's `next`, while `hasNext`. */
function page<T>({ searchParams }: URL, all: readonly T[], show: (item: T) => unknown) {
  const asked = { limit: searchParams.get('limit') ?? undefined, token: searchParams.get('offset') };
  return bodyPage(leverProfile.paging, all, asked, show);
}

/** Webhooks made through the API (help.lever.co 4402565460237): one per event, with its own signature token. */
async function createWebhook(kit: KitContext, { request }: RouteContext) {
  const { event, url } = await kit.json(request);
  if (!(LEVER_WEBHOOK_EVENTS as readonly unknown[]).includes(event) || typeof url !== 'string')
    throw badRequest('event and url are required');
  const [id, signatureToken, type] = [randomUUID(), randomBytes(24).toString('hex'), String(event)];
  kit.state.webhooks.push({ id, url, secret: signatureToken, issued: { [type]: signatureToken }, events: [type] });
  return { data: { id, event, url, configuration: { signatureToken } } };
}

/** UI-made webhooks are listed too, one row per event. */
const webhookRows = ({ id, events, url }: WebhookTarget, i: number) =>
  (events ?? LEVER_WEBHOOK_EVENTS).map((event) => ({ id: id ?? `ui-${i}-${event}`, event, url, createdAt: 0 }));

/** Lever's users, webhooks, stages and the opportunities' list, as a table of routes. */
const accountRoutes = (kit: KitContext): Route[] => [
  json('GET /v1/users/:id', ({ params }) => {
    if (!USER_IDS.includes(params.id as string)) throw refusal(404, 'ResourceNotFound', 'User not found');
    return { data: { id: params.id, accessRole: 'admin', deactivatedAt: null } };
  }),
  json('GET /v1/webhooks', () => ({ data: kit.state.webhooks.flatMap(webhookRows), hasNext: false })),
  json('POST /v1/webhooks', 201, (context) => createWebhook(kit, context)),
  json('GET /v1/stages', () => ({ data: STAGES.map((s) => ({ id: s.id, text: s.name })), hasNext: false })),
  json('GET /v1/opportunities', ({ url }) => page(url, opportunitiesOf(kit, url), (a) => opportunityJson(kit, a))),
];

type OpportunityHandler = (context: RouteContext, application: KitApplication, body: Body) => unknown;

/** A route about one opportunity (`'PUT /stage'`): 404 without it; a write but `addLinks` 400 without `perform_as`. */
function opportunity(kit: KitContext, at: string, handle: OpportunityHandler): Route {
  const asUser = !at.startsWith('GET') && at !== 'POST /addLinks';
  const [method, path = ''] = at.split(' ');
  return json(`${method} /v1/opportunities/:id${path}`, async (context) => {
    const application = kit.application(context.params.id as string);
    if (!application) throw refusal(404, 'ResourceNotFound', 'Opportunity not found');
    if (asUser && !context.url.searchParams.get('perform_as')) throw badRequest('perform_as is required');
    const multipart = context.request.headers['content-type']?.startsWith('multipart/');
    return handle(context, application, method === 'GET' || multipart ? {} : await kit.json(context.request));
  });
}

/** One opportunity's routes; `perform_as` is the user a change is made as. */
function opportunityRoutes(kit: KitContext): Route[] {
  const secretNotes = new Map<string, boolean>();
  const shown = (a: KitApplication, extra = {}) => ({ data: { ...opportunityJson(kit, a), ...extra } });
  const tagging = (action: 'addTags' | 'removeTags') =>
    opportunity(kit, `POST /${action}`, (_context, application, { tags }) => {
      if (!Array.isArray(tags)) throw badRequest('tags');
      return shown(application, { tags: retag(kit.state, application.id, tags, action === 'addTags') });
    });
  return [
    opportunity(kit, 'GET', ({ url }, application) => ({
      data: opportunityJson(kit, application, url.searchParams.get('expand') === 'applications'),
    })),
    opportunity(kit, 'POST /notes', ({ response, url }, application, body) => {
      if (typeof body.value !== 'string' || !body.value) throw badRequest('value is required');
      const note = kit.addNote(application, body.value, url.searchParams.get('perform_as') ?? undefined);
      secretNotes.set(note.id, body.secret === true);
      sendJson(response, 201, { data: { noteId: note.id } });
    }),
    opportunity(kit, 'GET /notes', ({ url }, application) => {
      const notes = kit.state.notes.filter((n) => n.applicationId === application.id);
      return page(url, notes, (n) => noteJson(n, secretNotes.get(n.id) ?? false));
    }),
    opportunity(kit, 'PUT /stage', (_context, application, body) => {
      if (!STAGES.some((s) => s.id === body.stage)) throw badRequest('stage does not exist');
      kit.moveByApi(application, String(body.stage));
      return shown(application);
    }),
    tagging('addTags'),
    tagging('removeTags'),
    // A File (not a Resume): one binary part named `file`, multipart only [3p].
    opportunity(kit, 'POST /files', async ({ request, response }, application) => {
      const file = (await formParts(request)).find(([name]) => name === 'file')?.[1];
      if (typeof file !== 'object') throw badRequest('file is required (multipart/form-data)');
      if (file.size > leverProfile.files.maxBytes) throw TOO_LARGE;
      const [{ name, type }, bytes] = [file, Buffer.from(await file.arrayBuffer())];
      const stored = kit.files.add({ owner: application.id, name, contentType: type || contentTypeOf(name), bytes });
      sendJson(response, 201, { data: fileJson(stored) });
    }),
    opportunity(kit, 'GET /files', (_c, { id }) => ({ data: kit.files.list([id]).map(fileJson), hasNext: false })),
    opportunity(kit, 'POST /addLinks', (_context, application, body) => {
      for (const url of (body.links as string[] | undefined) ?? [])
        if (!kit.state.links.some((l) => l.applicationId === application.id && l.url === url))
          kit.state.links.push({ applicationId: application.id, url });
      return shown(application);
    }),
  ];
}

export type LeverSandbox = Awaited<ReturnType<typeof startLeverSandbox>>;
/** A stand-in of Lever's v1 API (Basic auth, the token bucket of its profile) and its webhooks. */
export async function startLeverSandbox(options: SandboxOptions = {}) {
  const sandbox = await startAtsSandbox(
    {
      ...{ profile: leverProfile, apiKey: 'lever-sandbox-key' },
      jobs: [
        { id: 'posting-backend-01', name: 'Backend Engineer', stages: STAGES },
        { id: 'posting-data-02', name: 'Data Engineer', stages: STAGES },
      ],
      issueSecrets: () => Object.fromEntries(LEVER_WEBHOOK_EVENTS.map((e) => [e, randomBytes(24).toString('hex')])),
      unauthorized: refusal(401, 'Unauthorized', 'Invalid API key'),
      uploadRefusal: TOO_LARGE,
      unknownParameter: (name) => badRequest(`Unknown query parameter: ${name}`),
      routes: (kit) => [...accountRoutes(kit), ...opportunityRoutes(kit)],
      candidateDeleted: ({ id }, [first], target) =>
        delivery(target, 'candidateDeleted', { candidateId: id, contactId: id, opportunityId: first?.id ?? null }),
      changed: (_kit, application, target, change) => changeDeliveries(application, target, change),
    },
    options,
  );
  /** Posts `event` to every webhook of it, unrecorded; answers each one's status. */
  const post = async (event: string, data: Body) => {
    const hub = { state: { ...sandbox.state, deliveries: [] }, random: Math.random };
    const records = await sendChange(hub, { action: event, deliveries: (target) => [delivery(target, event, data)] });
    return records.map((record) => ({ event, status: record.status }));
  };
  /** Lever's "Verify connection" button: a signed test delivery of each webhook, naming no opportunity. */
  const verifyConnection = async () => (await Promise.all(LEVER_WEBHOOK_EVENTS.map((e) => post(e, {})))).flat();
  /** A validly signed webhook whose body claims a stage change that never happened (the body is unsigned). */
  const claimStageChange = async (applicationId: string, toStageId: string) => {
    const application = sandbox.state.applications.find((a) => a.id === applicationId);
    if (!application) throw new Error(`no application ${applicationId}`);
    await post('candidateStageChange', { ...idsOf(application), fromStageId: application.stageId, toStageId });
  };
  return Object.assign(sandbox, { verifyConnection, claimStageChange });
}
