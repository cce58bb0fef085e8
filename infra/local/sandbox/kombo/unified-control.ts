import { errorMessage } from '../../../../shared/errors';
import { json, matchRoute, readJson, seededRandom, sendJson, type Route } from '../http-kit';
import { DEFAULT_UNIFIED_FAULTS, unifiedRoutes, type UnifiedFaults, type UnifiedState } from './unified-ats';
import { DEFAULT_INTEGRATIONS, komboId, remoteId, seedIntegration } from './unified-records';
import type { IntegrationSeed, UnifiedApplication, UnifiedIntegration, WriteActionState } from './unified-records';
import { SyncClock } from './unified-sync';

/**
 * Kombo's unified ATS in the Kombo sandbox: what a recruiter does in each integration's ATS (seen by Kombo's API only
 * after the sync lag, then hinted), the faults a test sets, and what the connector wrote, for the tests and the demo.
 */
export type UnifiedAtsOptions = {
  integrations?: IntegrationSeed[];
  /** How long Kombo's copy lags the ATS (0 allowed: the next tick). */
  syncLagMs?: number;
  seed?: number;
  /** The secret a webhook registered without one is signed with (the Kombo sandbox's own). */
  defaultSecret: string;
};
type Target = { integrationId: string; applicationId: string };

/** Each integration as the tests read it: what the connector wrote through the API, and its peak in flight. */
const integrationView = (integration: UnifiedIntegration) => ({
  id: integration.id,
  tool: integration.tool,
  jobs: integration.jobs.map(({ id, name, stages }) => ({
    id,
    name,
    stages: stages.map(({ id, name }) => ({ id, name })),
  })),
  notes: integration.notes,
  moves: integration.moves,
  tags: Object.fromEntries([...integration.ats.candidates.values()].map((c) => [c.id, c.tags.map((t) => t.name)])),
  attachments: integration.attachments.map(({ applicationId, name, type, contentType, bytes }) => ({
    ...{ applicationId, name, type, contentType, size: bytes.length },
  })),
  ...{ inFlight: integration.inFlight, peakInFlight: integration.peakInFlight },
});

export function createUnifiedAts(options: UnifiedAtsOptions) {
  const state: UnifiedState = {
    integrations: new Map((options.integrations ?? DEFAULT_INTEGRATIONS).map((s) => [s.id, seedIntegration(s)])),
    faults: { ...DEFAULT_UNIFIED_FAULTS },
    ...{ requests: {}, shapes: {}, lostAnswers: 0, origin: '' },
  };
  let syncLagMs = options.syncLagMs ?? 2000;
  const random = seededRandom(options.seed ?? 23);
  const clock = new SyncClock({ lagMs: () => syncLagMs, faults: state.faults, random });

  const integration = (id: string) => {
    const found = state.integrations.get(id);
    if (!found) throw new Error(`integrationId: no integration ${id}`);
    return found;
  };
  const application = ({ integrationId, applicationId }: Target) => {
    const found = integration(integrationId).ats.applications.get(applicationId);
    if (!found) throw new Error(`applicationId: no application ${applicationId} in ${integrationId}`);
    return found;
  };
  /** A recruiter's change to an application in the ATS: Kombo's copy and the hint follow after the lag. */
  const change = (target: Target, fields: Partial<UnifiedApplication>) => {
    Object.assign(application(target), fields, { remoteUpdatedAt: new Date().toISOString() });
    clock.changedInAts(integration(target.integrationId), { applications: [target.applicationId] });
    return { applicationId: target.applicationId };
  };

  const unified = {
    state,
    routes: unifiedRoutes(state, clock, random),
    /** A candidate applies to the integration's job (its first unless said), in the first stage. */
    addCandidate(input: { integrationId: string; firstName: string; lastName: string; email: string; jobId?: string }) {
      const into = integration(input.integrationId);
      const job = into.jobs.find((j) => j.id === (input.jobId ?? into.jobs[0]?.id));
      const stage = job?.stages[0];
      if (!job || !stage) throw new Error(`jobId: no job ${input.jobId}`);
      const at = new Date().toISOString();
      const stamps = { createdAt: at, changedAt: at, updatedAt: at, deletedAt: null };
      const candidate = {
        ...{ id: komboId(), remote_id: remoteId(), first_name: input.firstName, last_name: input.lastName },
        ...{ email: input.email, tags: [], ...stamps },
      };
      const created: UnifiedApplication = {
        ...{ id: komboId(), remote_id: remoteId(), candidate_id: candidate.id, job_id: job.id },
        ...{ current_stage_id: stage.id, outcome: 'PENDING', rejection_reason_name: null, rejected_at: null },
        ...{ remoteUpdatedAt: at, ...stamps },
      };
      into.ats.candidates.set(candidate.id, candidate);
      into.ats.applications.set(created.id, created);
      clock.changedInAts(into, { candidates: [candidate.id], applications: [created.id] });
      return { applicationId: created.id, candidateId: candidate.id };
    },
    moveCandidate(input: Target & { stageName: string }) {
      const found = application(input);
      const job = integration(input.integrationId).jobs.find((j) => j.id === found.job_id);
      const stage = job?.stages.find((s) => s.name === input.stageName);
      if (!stage) throw new Error(`stageName: no stage ${input.stageName}`);
      return change(input, { current_stage_id: stage.id });
    },
    /** Rejected or withdrawn: Kombo tells them apart by nothing but the reason's text. */
    decline: (input: Target & { reason?: string }) =>
      change(input, {
        ...{ outcome: 'DECLINED', rejection_reason_name: input.reason ?? 'Not a fit' },
        rejected_at: new Date().toISOString(),
      }),
    hire: (input: Target) => change(input, { outcome: 'HIRED' }),
    /** Deleted in the ATS: Kombo keeps it with `remote_deleted_at` (listed with `include_deleted=true`). */
    remove: (input: Target) => change(input, { deletedAt: new Date().toISOString() }),
    setFaults: (faults: Partial<UnifiedFaults>) => void Object.assign(state.faults, faults),
    syncLagMs: () => syncLagMs,
    setSyncLag(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new Error('ms: zero or more');
      syncLagMs = ms;
    },
    /** A webhook of the Kombo account (one account may have several), signed with `secret`. */
    registerWebhook(url: string, secret = options.defaultSecret) {
      clock.targets.push({ url, secret });
    },
    /** The customer or the tool changes what a write action may do in one integration. */
    setWriteAction(integrationId: string, actionId: string, action: WriteActionState) {
      integration(integrationId).writeActions[actionId] = { ...action };
    },
    /** Resolves once every sync and hint scheduled so far is done. */
    idle: () => clock.idle(),
    hints: () => clock.deliveries,
    integration: (id: string) => integrationView(integration(id)),
    /** Calls by route (`PUT /v1/ats/applications/:applicationId/stage`), and the distinct call shapes served. */
    requests: () => state.requests,
    calls: () => Object.values(state.shapes),
    close: () => clock.stop(),
  };
  return unified;
}
export type UnifiedAts = ReturnType<typeof createUnifiedAts>;

/** The control as HTTP routes (`/_sandbox/unified/…`), for the demo and a person trying the sandbox. */
export function unifiedControlRoutes(unified: UnifiedAts): Route[] {
  type Body = Record<string, unknown>;
  const posted = (path: string, act: (body: Body) => unknown, status = 200) =>
    json(`POST /_sandbox/unified/${path}`, status, async ({ request, response }) => {
      try {
        return (await act(await readJson(request))) ?? {};
      } catch (error) {
        sendJson(response, 404, { error: errorMessage(error) });
      }
    });
  const as = <T>(body: Body) => body as unknown as T;
  return [
    json('GET /_sandbox/unified/state', () => ({
      syncLagMs: unified.syncLagMs(),
      faults: unified.state.faults,
      integrations: [...unified.state.integrations.keys()].map(unified.integration),
      requests: unified.requests(),
      hints: unified.hints(),
      lostAnswers: unified.state.lostAnswers,
    })),
    json('GET /_sandbox/unified/files/:fileId', ({ params, response }) => {
      const files = [...unified.state.integrations.values()].flatMap((i) => i.attachments);
      const file = files.find((f) => f.id === params.fileId);
      if (!file) return sendJson(response, 404, { error: 'no such file' });
      response.writeHead(200, { 'content-type': file.contentType, 'content-length': String(file.bytes.length) });
      response.end(file.bytes);
    }),
    posted('candidates', (body) => unified.addCandidate(as(body)), 201),
    posted('move', (body) => unified.moveCandidate(as(body))),
    posted('decline', (body) => unified.decline(as(body))),
    posted('hire', (body) => unified.hire(as(body))),
    posted('remove', (body) => unified.remove(as(body))),
    posted('faults', (body) => unified.setFaults(as(body))),
    posted('sync-lag', (body) => unified.setSyncLag(Number(body.ms))),
    posted('webhooks', (body) => unified.registerWebhook(String(body.url), body.secret as string | undefined)),
  ];
}

/** Serves a `/_sandbox/unified/…` request; false when no control route has the path. */
export async function serveUnifiedControl(routes: Route[], context: Parameters<Route['handle']>[0]) {
  const matched = matchRoute(routes, context.request.method ?? 'GET', context.url.pathname);
  if (!matched) return false;
  await matched.route.handle({ ...context, params: matched.params });
  return true;
}
