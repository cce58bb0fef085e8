import type { AtsKind } from '../../../../shared/config';
import type { AtsSandboxView } from './ats-sandbox-kit';
import { switchWebhooks } from './signed-webhooks';
import { startAshbySandbox, type AshbySandbox } from './ashby/server';
import { startGreenhouseSandbox, type GreenhouseSandbox } from './greenhouse/server';
import { startLeverSandbox, type LeverSandbox } from './lever/server';
import { startWorkableSandbox } from './workable/server';

export type { AtsSandbox, AtsSandboxView } from './ats-sandbox-kit';

export const ATS_SANDBOX_PORTS: Record<AtsKind, number> = {
  greenhouse: 4020,
  ashby: 4030,
  lever: 4040,
  workable: 4050,
};

/** What Greenhouse's records say of an application, by its id as the common interface spells it. */
function greenhouseReadings(
  sandbox: GreenhouseSandbox,
): Pick<AtsSandboxView, 'notesOf' | 'stageNameOf' | 'tagsOf' | 'movesOf'> {
  const { state } = sandbox;
  const application = (id: string) => state.applications.find((a) => String(a.id) === id);
  const stageName = (id: number) => state.jobs.flatMap((j) => j.stages).find((s) => s.id === id)?.name ?? String(id);
  return {
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

/** Greenhouse's sandbox keeps Greenhouse's numeric ids; this view speaks the common sandbox interface. */
export function greenhouseView(sandbox: GreenhouseSandbox): AtsSandboxView {
  const { state } = sandbox;
  return {
    ...{ kind: 'greenhouse', url: sandbox.url, demoJobId: '3301', close: sandbox.close },
    credentials: { atsClientId: sandbox.clientId, atsClientSecret: sandbox.clientSecret },
    registerWebhook: async (target) => ({ issued: void (await sandbox.registerWebhook(target)) }),
    setWebhooksEnabled: (enabled) => switchWebhooks(state.webhooks, enabled),
    addCandidate: ({ firstName: first_name, lastName: last_name, email, jobId }) => {
      const created = sandbox.addCandidate({ first_name, last_name, email, job_id: Number(jobId ?? 3301) });
      const { id, candidate_id, job_id, current_stage } = created;
      const updatedAt = new Date().toISOString();
      const ids = { id: String(id), candidateId: String(candidate_id), jobId: String(job_id) };
      return { ...ids, stageId: String(current_stage.id), status: 'active', updatedAt };
    },
    moveCandidate: ({ applicationId, stageName: stage_name, stageId, repeat }) => {
      const stage_id = stageId === undefined ? undefined : Number(stageId);
      return sandbox.moveCandidate({ application_id: Number(applicationId), stage_name, stage_id, repeat });
    },
    resendStageChange: async (id) => [await sandbox.resendStageChange(Number(id))],
    deleteCandidate: async (id) => void (await sandbox.deleteCandidate(Number(id))),
    changeLifecycle: ({ applicationId, ...input }) =>
      sandbox.changeLifecycle({ application_id: Number(applicationId), ...input }),
    ...greenhouseReadings(sandbox),
    setFaults: (faults) => void Object.assign(state.faults, faults),
    requests: () => state.requests,
    calls: () => Object.values(state.calls),
    throttled: () => state.throttled,
  };
}

export interface AtsSandboxes {
  views: Record<AtsKind, AtsSandboxView>;
  greenhouse: GreenhouseSandbox;
  ashby: AshbySandbox;
  lever: LeverSandbox;
  close(): Promise<void>;
}

/** All four ATS sandboxes; fixed ports for `npm start`, free ones (0) for tests. */
export async function startAtsSandboxes(
  fixedPorts: boolean,
  options: {
    rateLimits?: Partial<Record<AtsKind, number>> | undefined;
    /** Each sandbox's window in ms (defaults: the ATS's documented window), for measuring at other windows. */
    rateWindowsMs?: Partial<Record<AtsKind, number>> | undefined;
  } = {},
): Promise<AtsSandboxes> {
  const port = (kind: AtsKind) => (fixedPorts ? ATS_SANDBOX_PORTS[kind] : 0);
  const started: { close(): Promise<void> }[] = [];
  try {
    const limits = options.rateLimits ?? {};
    const windows = options.rateWindowsMs ?? {};
    /** A sandbox on its port with its ATS's rate limit (the options', else the vendor's documented one). */
    const start = async <S extends { close(): Promise<void> }>(
      kind: AtsKind,
      startOne: (options: { port: number; rateLimit?: number; rateWindowMs?: number }) => Promise<S>,
    ): Promise<S> => {
      const sandbox = await startOne({ port: port(kind), rateLimit: limits[kind], rateWindowMs: windows[kind] });
      started.push(sandbox);
      return sandbox;
    };
    const greenhouse = await start('greenhouse', startGreenhouseSandbox);
    const ashby = await start('ashby', startAshbySandbox);
    const lever = await start('lever', startLeverSandbox);
    const workable = await start('workable', startWorkableSandbox);
    return {
      views: { greenhouse: greenhouseView(greenhouse), ashby, lever, workable },
      greenhouse,
      ashby,
      lever,
      close: async () => void (await Promise.all(started.map((s) => s.close()))),
    };
  } catch (error) {
    await Promise.all(started.map((s) => s.close()));
    throw error;
  }
}
