import type { AtsKind, DirectAtsKind } from '../../../../shared/config';
import { SANDBOX_PORTS, type AtsSandboxView, type SandboxOptions } from './ats-sandbox-kit';
import { edgeReadings } from './edge';
import { startAshbySandbox } from './ashby/server';
import { startGreenhouseSandbox, type GreenhouseSandbox } from './greenhouse/server';
import { startLeverSandbox } from './lever/server';
import { startWorkableSandbox } from './workable/server';

export type { AtsSandbox, AtsSandboxView } from './ats-sandbox-kit';

/** Greenhouse's sandbox keeps Greenhouse's numeric ids; this view speaks the common sandbox interface. */
function greenhouseView(sandbox: GreenhouseSandbox): AtsSandboxView {
  const { state } = sandbox;
  const application = (id: string) => state.applications.find((a) => String(a.id) === id);
  const stageName = (id: number) => state.jobs.flatMap((j) => j.stages).find((s) => s.id === id)?.name ?? String(id);
  return {
    ...{ kind: 'greenhouse', url: sandbox.url, demoJobId: '3301', close: sandbox.close, ...edgeReadings(state) },
    credentials: { atsClientId: sandbox.clientId, atsClientSecret: sandbox.clientSecret },
    registerWebhook: async (target) => ({ issued: void (await sandbox.registerWebhook(target)) }),
    setWebhooksEnabled: (enabled) => {
      for (const target of state.webhooks) target.enabled = enabled;
    },
    addCandidate: ({ firstName: first_name, lastName: last_name, email, jobId }) => {
      const created = sandbox.addCandidate({ first_name, last_name, email, job_id: Number(jobId ?? 3301) });
      const { id, candidate_id, job_id, current_stage } = created;
      const ids = { id: String(id), candidateId: String(candidate_id), jobId: String(job_id) };
      return { ...ids, stageId: String(current_stage.id), status: 'active', updatedAt: new Date().toISOString() };
    },
    moveCandidate: ({ applicationId, stageName: stage_name, stageId, repeat }) => {
      const stage_id = stageId === undefined ? undefined : Number(stageId);
      return sandbox.moveCandidate({ application_id: Number(applicationId), stage_name, stage_id, repeat });
    },
    resendStageChange: async (id) => [await sandbox.resendStageChange(Number(id))],
    deleteCandidate: async (id) => void (await sandbox.deleteCandidate(Number(id))),
    changeLifecycle: ({ applicationId, ...input }) =>
      sandbox.changeLifecycle({ application_id: Number(applicationId), ...input }),
    filesOf: (id) => sandbox.files.list([id]),
    notesOf: (id) => state.notes.filter((n) => n.candidate_id === application(id)?.candidate_id).map((n) => n.body),
    stageNameOf: (id) => application(id)?.current_stage.name ?? '',
    tagsOf: (id) => {
      const candidate = application(id)?.candidate_id ?? -1;
      const held = state.appliedTags.filter((r) => r.candidate_id === candidate).map((r) => r.candidate_tag_id);
      return state.candidateTags.filter((t) => held.includes(t.id)).map((t) => t.name);
    },
    movesOf: (id) =>
      state.moves.filter((m) => m.application_id === application(id)?.id).map((m) => stageName(m.to_stage_id)),
  };
}

type PerAts = Partial<Record<AtsKind, number>> | undefined;
type Started = { close(): Promise<void> };

/** All four ATS sandboxes: fixed ports for `npm start`, free ones for tests; limits and windows as the options say. */
export async function startAtsSandboxes(fixed: boolean, options: { rateLimits?: PerAts; rateWindowsMs?: PerAts } = {}) {
  const started: Started[] = [];
  const close = async () => void (await Promise.all(started.map((s) => s.close())));
  const start = async <S extends Started>(kind: DirectAtsKind, startOne: (o: SandboxOptions) => Promise<S>) => {
    const [rateLimit, rateWindowMs] = [options.rateLimits?.[kind], options.rateWindowsMs?.[kind]];
    const sandbox = await startOne({ port: fixed ? SANDBOX_PORTS[kind] : 0, rateLimit, rateWindowMs });
    started.push(sandbox);
    return sandbox;
  };
  try {
    const greenhouse = await start('greenhouse', startGreenhouseSandbox);
    const ashby = await start('ashby', startAshbySandbox);
    const lever = await start('lever', startLeverSandbox);
    const workable = await start('workable', startWorkableSandbox);
    const views = { greenhouse: greenhouseView(greenhouse), ashby, lever, workable };
    return { views, greenhouse, ashby, lever, close };
  } catch (error) {
    await close();
    throw error;
  }
}
