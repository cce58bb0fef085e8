import type { ServerResponse } from 'node:http';
import { KOMBO_WRITE_ACTIONS } from '../../../../shared/ats/kombo/kombo.actions';
import { documentedQuery } from '../documented-routes';
import { base64Bytes, download } from '../file-store';
import {
  callShape,
  readJson,
  sendJson,
  sleep,
  UPLOAD_BODY_BYTES,
  type CallShape,
  type Route,
  type RouteContext,
} from '../http-kit';
import { applicationFilter, invalid, KomboRefusal, komboError, list, page, text } from './unified-lists';
import { applicationJson, candidateJson, integrationJson, jobJson, komboId, remoteId } from './unified-records';
import { stageOf, writeRefusal, type UnifiedIntegration } from './unified-records';
import type { SyncClock } from './unified-sync';

/**
 * Kombo's unified ATS routes (documented-routes.json `kombo`, from kombohq/typescript-sdk @1dc00a9 src/funcs/ats*.ts)
 * with Kombo's envelope: `{status: 'success', data}` (writes add `warnings`), lists `data: {next, results}`, errors
 * `{status: 'error', error: {code, title, message, log_url}}` with the SDK's codes (KomboAtsErrorCode). The statuses of
 * the refusals other than 401, 404 and 429 are not in the SDK: 400 is the sandbox's choice (unconfirmed).
 */
export type UnifiedFaults = {
  /** Shares of hints never sent, and sent twice (the same event id). */
  dropHintRate: number;
  duplicateHintRate: number;
  /** Actions in flight per integration past which Kombo answers 429 (30, docs.kombo.dev concurrency-limiting). */
  concurrencyLimit: number;
  /** How long an action stays in flight, so a test can have 31 at once. */
  slowWriteMs: number;
  /** Share of calls answered 429 `PLATFORM.RATE_LIMIT_EXCEEDED` (the request-volume limit, its numbers unpublished). */
  rate429: number;
  /** Share of writes applied whose answer is lost: the connection is closed instead. */
  loseAnswerRate: number;
};
export const DEFAULT_UNIFIED_FAULTS: UnifiedFaults = {
  ...{ dropHintRate: 0, duplicateHintRate: 0, concurrencyLimit: 30 },
  ...{ slowWriteMs: 0, rate429: 0, loseAnswerRate: 0 },
};

export type UnifiedState = {
  integrations: Map<string, UnifiedIntegration>;
  faults: UnifiedFaults;
  /** Calls by route (`GET /v1/ats/applications`), refused ones included; the distinct shapes served. */
  requests: Record<string, number>;
  shapes: Record<string, CallShape>;
  lostAnswers: number;
  /** Where the sandbox serves the files uploaded (`data_url` of an attachment). */
  origin: string;
};

type Call = RouteContext & { integration: UnifiedIntegration; body: () => Promise<Record<string, unknown>> };
/** `action`: the write action the integration must support; `counted`: under the concurrency limit. */
type Spec = { action?: string; counted?: boolean; scoped?: boolean };

/** The routes that need no `X-Integration-Id` (the integration is in the path). */
export const UNSCOPED_PATTERNS = new Set(['/v1/integrations/:integrationId']);

const applicationIn = (integration: UnifiedIntegration, id: string | undefined) => {
  const application = integration.ats.applications.get(id ?? '');
  if (!application) throw new KomboRefusal(404, 'PLATFORM.INPUT_INVALID', `No application ${id}`);
  return application;
};
const tagName = (body: Record<string, unknown>) =>
  text((body.tag as Record<string, unknown> | undefined)?.name, 'tag.name', 200);

/** The attachment's bytes: base64 `data` with its `content_type`, or `data_url`, which Kombo fetches at once. */
async function attachmentBytes(attachment: Record<string, unknown>) {
  const { data, data_url: dataUrl, content_type: contentType } = attachment;
  if ((data === undefined) === (dataUrl === undefined)) throw invalid('attachment: one of data and data_url');
  if (data !== undefined) {
    if (typeof contentType !== 'string' || !contentType || contentType === 'application/octet-stream')
      throw invalid('attachment.content_type: required with data, and not application/octet-stream');
    const bytes = base64Bytes(data);
    if (!bytes) throw invalid('attachment.data: base64');
    return { bytes, contentType };
  }
  const bytes = await download(text(dataUrl, 'attachment.data_url'));
  if (!bytes) throw new KomboRefusal(400, 'REMOTE.INPUT_INVALID', 'attachment.data_url: could not be downloaded');
  return { bytes, contentType: typeof contentType === 'string' ? contentType : 'application/pdf' };
}

/** The unified ATS's API routes over the state; each answers its data, or throws a refusal. */
function handlers(state: UnifiedState, clock: SyncClock) {
  const applications = (integration: UnifiedIntegration) => [...integration.synced.applications.values()];
  const { moveStage, addNote, addTag, removeTag, addAttachment } = KOMBO_WRITE_ACTIONS;
  type Handler = [string, Spec, (call: Call) => Promise<unknown> | unknown];
  const table: Handler[] = [
    [
      'GET /v1/ats/applications',
      {},
      ({ integration, url }) => {
        const keep = applicationFilter(url, integration);
        const all = applications(integration).filter(keep);
        return page(url, all, (a) => applicationJson(integration, a));
      },
    ],
    [
      'GET /v1/ats/candidates',
      {},
      ({ integration, url }) => {
        const [email, jobs] = [url.searchParams.get('email')?.toLowerCase(), list(url, 'job_ids')];
        const [first, last] = ['first_name', 'last_name'].map((n) => url.searchParams.get(n)?.toLowerCase());
        const applied = (id: string) => applications(integration).filter((a) => a.candidate_id === id);
        const all = [...integration.synced.candidates.values()].filter(
          (c) =>
            (!email || c.email.toLowerCase() === email) &&
            (!first || c.first_name.toLowerCase() === first) &&
            (!last || c.last_name.toLowerCase() === last) &&
            (!jobs || applied(c.id).some((a) => jobs.includes(a.job_id))),
        );
        return page(url, all, (c) => candidateJson(integration, c));
      },
    ],
    [
      'GET /v1/ats/jobs',
      {},
      ({ integration, url }) => {
        const [statuses, name] = [list(url, 'statuses'), url.searchParams.get('name_contains')?.toLowerCase()];
        const jobs = integration.jobs
          .filter((j) => (!statuses || statuses.includes('OPEN')) && (!name || j.name.toLowerCase().includes(name)))
          .map((j) => ({ ...j, updatedAt: j.createdAt, deletedAt: null }));
        return page(url, jobs, (j) => jobJson(integration, j));
      },
    ],
    [
      'PUT /v1/ats/applications/:applicationId/stage',
      { action: moveStage },
      async (call) => {
        const { integration, params } = call;
        const application = applicationIn(integration, params.applicationId);
        const body = await call.body();
        const stage = stageOf(integration, application.job_id, text(body.stage_id, 'stage_id', 200));
        if (!stage) throw invalid(`stage_id: not a stage of the application's job`);
        const at = new Date().toISOString();
        Object.assign(application, { current_stage_id: stage.id, remoteUpdatedAt: at });
        integration.moves.push({ applicationId: application.id, stageId: stage.id, stageName: stage.name, at });
        clock.writtenThrough(integration, { applications: [application.id] });
        return {};
      },
    ],
    [
      'POST /v1/ats/applications/:applicationId/notes',
      { action: addNote },
      async (call) => {
        const application = applicationIn(call.integration, call.params.applicationId);
        const body = await call.body();
        const content = text(body.content, 'content');
        if (body.content_type !== 'PLAIN_TEXT') throw invalid('content_type: PLAIN_TEXT');
        call.integration.notes.push({ applicationId: application.id, content, at: new Date().toISOString() });
        return {};
      },
    ],
    [
      'POST /v1/ats/applications/:applicationId/attachments',
      { action: addAttachment },
      async (call) => {
        const application = applicationIn(call.integration, call.params.applicationId);
        const attachment = (await call.body()).attachment as Record<string, unknown> | undefined;
        if (typeof attachment !== 'object' || attachment === null) throw invalid('attachment: required');
        const name = text(attachment.name, 'attachment.name', 500);
        if (!['CV', 'COVER_LETTER', 'OTHER'].includes(attachment.type as string))
          throw invalid('attachment.type: CV, COVER_LETTER or OTHER');
        const { bytes, contentType } = await attachmentBytes(attachment);
        const file = { id: komboId(), applicationId: application.id, type: attachment.type as string, name };
        call.integration.attachments.push({ ...file, contentType, bytes, at: new Date().toISOString() });
        return {};
      },
    ],
    // Runs live against the ATS: an action, counted under the concurrency limit.
    [
      'GET /v1/ats/applications/:applicationId/attachments',
      { counted: true },
      ({ integration, params }) => {
        const application = applicationIn(integration, params.applicationId);
        const files = integration.attachments.filter((f) => f.applicationId === application.id);
        return {
          results: files.map((f) => ({
            ...{ type: f.type, id: f.id, remote_id: f.id, data_url: `${state.origin}/_sandbox/unified/files/${f.id}` },
            ...{ file_name: f.name, content_type: f.contentType, remote_created_at: f.at, remote_updated_at: f.at },
          })),
        };
      },
    ],
    ...(['POST', 'DELETE'] as const).map(
      (method): Handler => [
        `${method} /v1/ats/candidates/:candidateId/tags`,
        { action: method === 'POST' ? addTag : removeTag },
        async (call) => {
          const { integration, params } = call;
          const candidate = integration.ats.candidates.get(params.candidateId ?? '');
          if (!candidate) throw new KomboRefusal(404, 'PLATFORM.INPUT_INVALID', `No candidate ${params.candidateId}`);
          const name = tagName(await call.body());
          const known = integration.tagNames.get(name) ?? { id: komboId(), remote_id: remoteId(), name };
          integration.tagNames.set(name, known);
          // Kombo finds or creates the tag; removing one the candidate lacks succeeds.
          const others = candidate.tags.filter((t) => t.name !== name);
          candidate.tags = method === 'POST' ? [...others, known] : others;
          clock.writtenThrough(integration, { candidates: [candidate.id] });
          return {};
        },
      ],
    ),
    ['GET /v1/integrations/:integrationId', { scoped: false }, ({ integration }) => integrationJson(integration)],
  ];
  return table;
}

export function unifiedRoutes(state: UnifiedState, clock: SyncClock, random: () => number): Route[] {
  return handlers(state, clock).map(([at, spec, handle]) => {
    const [method = 'GET', pattern = '/'] = at.split(' ');
    const query = documentedQuery('kombo', method, pattern) ?? [];
    return { method, pattern, query, handle: (context) => gate(state, { at, spec, handle, random }, context) };
  });
}

type Gated = { at: string; spec: Spec; handle: (call: Call) => unknown; random: () => number };
/** Lets a call in as Kombo does: its integration, the random 429, the write's coverage, the concurrency limit. */
async function gate(state: UnifiedState, gated: Gated, context: RouteContext): Promise<void> {
  const { request, response, url, params } = context;
  const { at, spec, random } = gated;
  state.requests[at] = (state.requests[at] ?? 0) + 1;
  const write = spec.action !== undefined;
  let counted: UnifiedIntegration | undefined;
  try {
    const id = spec.scoped === false ? params.integrationId : request.headers['x-integration-id'];
    const integration = state.integrations.get(typeof id === 'string' ? id : '');
    if (!integration) throw new KomboRefusal(404, 'PLATFORM.INTEGRATION_NOT_FOUND', `No integration ${id}`);
    if (random() < state.faults.rate429) throw new KomboRefusal(429, 'PLATFORM.RATE_LIMIT_EXCEEDED', 'Rate limit');
    const refusal = spec.action && writeRefusal(integration.writeActions[spec.action]);
    if (refusal) throw new KomboRefusal(400, refusal, `${spec.action} is not available for ${integration.tool}`);
    if (write || spec.counted) counted = enter(state.faults, integration, response);
    if (counted) await sleep(state.faults.slowWriteMs);
    const body = () => readJson(request, UPLOAD_BODY_BYTES).catch(() => Promise.reject(invalid('body: JSON')));
    const data = await gated.handle({ ...context, integration, body });
    if (write && random() < state.faults.loseAnswerRate) {
      state.lostAnswers++;
      request.socket.destroy();
      return;
    }
    sendJson(response, 200, { status: 'success', data, ...(write || spec.counted ? { warnings: [] } : {}) });
  } catch (error) {
    answerRefusal(response, error);
  } finally {
    if (counted) counted.inFlight--;
    const shape = callShape(request, at.split(' ')[1] ?? '', url);
    state.shapes[JSON.stringify(shape)] = shape;
  }
}

/** Counts an action in flight; past the limit, Kombo's 429 with its concurrency headers. */
function enter(faults: UnifiedFaults, integration: UnifiedIntegration, response: ServerResponse) {
  const remaining = faults.concurrencyLimit - integration.inFlight;
  response.setHeader('concurrency-limit', String(faults.concurrencyLimit));
  response.setHeader('concurrency-remaining', String(Math.max(0, remaining - 1)));
  if (remaining <= 0) throw new KomboRefusal(429, 'PLATFORM.CONCURRENCY_LIMIT_EXCEEDED', 'Too many concurrent actions');
  integration.inFlight++;
  integration.peakInFlight = Math.max(integration.peakInFlight, integration.inFlight);
  return integration;
}

function answerRefusal(response: ServerResponse, error: unknown): void {
  if (response.headersSent || response.destroyed) return;
  if (error instanceof KomboRefusal) sendJson(response, error.status, komboError(error.code, error.message));
  else sendJson(response, 500, komboError('PLATFORM.UNKNOWN_ERROR', 'Internal error'));
}
