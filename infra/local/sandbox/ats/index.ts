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

/** Greenhouse's sandbox keeps Greenhouse's numeric ids; this view speaks the common sandbox interface. */
export function greenhouseView(sandbox: GreenhouseSandbox): AtsSandboxView {
  const application = (id: string) => sandbox.state.applications.find((a) => String(a.id) === id);
  return {
    kind: 'greenhouse',
    url: sandbox.url,
    credentials: { atsClientId: sandbox.clientId, atsClientSecret: sandbox.clientSecret },
    demoJobId: '3301',
    registerWebhook: async (target) => {
      await sandbox.registerWebhook(target);
      return {};
    },
    setWebhooksEnabled: (enabled) => switchWebhooks(sandbox.state.webhooks, enabled),
    addCandidate: (input) => {
      const created = sandbox.addCandidate({
        first_name: input.firstName,
        last_name: input.lastName,
        email: input.email,
        job_id: Number(input.jobId ?? 3301),
      });
      return {
        id: String(created.id),
        candidateId: String(created.candidate_id),
        jobId: String(created.job_id),
        stageId: String(created.current_stage.id),
        status: 'active',
        updatedAt: new Date().toISOString(),
      };
    },
    moveCandidate: (input) =>
      sandbox.moveCandidate({
        application_id: Number(input.applicationId),
        stage_name: input.stageName,
        stage_id: input.stageId === undefined ? undefined : Number(input.stageId),
        repeat: input.repeat,
      }),
    resendStageChange: async (id) => [await sandbox.resendStageChange(Number(id))],
    deleteCandidate: async (id) => void (await sandbox.deleteCandidate(Number(id))),
    changeLifecycle: (input) =>
      sandbox.changeLifecycle({
        application_id: Number(input.applicationId),
        action: input.action,
        reason: input.reason,
        deliver: input.deliver,
        repeat: input.repeat,
      }),
    notesOf: (id) => {
      const found = application(id);
      return sandbox.state.notes.filter((n) => found && n.candidate_id === found.candidate_id).map((n) => n.body);
    },
    stageNameOf: (id) => application(id)?.current_stage.name ?? '',
    tagsOf: (id) => {
      const candidate = application(id)?.candidate_id ?? -1;
      const held = sandbox.state.appliedTags.filter((r) => r.candidate_id === candidate).map((r) => r.candidate_tag_id);
      return sandbox.state.candidateTags.filter((t) => held.includes(t.id)).map((t) => t.name);
    },
    movesOf: (id) => {
      const found = application(id);
      const stages = sandbox.state.jobs.flatMap((j) => j.stages);
      return sandbox.state.moves
        .filter((m) => m.application_id === found?.id)
        .map((m) => stages.find((s) => s.id === m.to_stage_id)?.name ?? String(m.to_stage_id));
    },
    setFaults: (faults) => void Object.assign(sandbox.state.faults, faults),
    requests: () => sandbox.state.requests,
    calls: () => Object.values(sandbox.state.calls),
    throttled: () => sandbox.state.throttled,
    close: sandbox.close,
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
