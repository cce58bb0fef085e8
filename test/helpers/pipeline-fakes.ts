import { vi, type Mock } from 'vitest';
import { confirmAsParsed } from '../../shared/ats/port';
import { parseConnections } from '../../shared/config';
import type {
  ConnectionContext,
  InviteDependencies,
  Mailer,
  MappingStore,
  QueueLedger,
} from '../../shared/pipeline/ports';
import type { ApplicationRecord } from '../../shared/pipeline/records';
import { connectionDocument } from './connections';
import { applicationRecord, jobRecord, NOW, reportFactory } from './pipeline-records';

/** A spy that resolves `value`. */
const resolves = (value: unknown) => vi.fn().mockResolvedValue(value);

/** A store whose every method is a spy; tests set the answers the path under test needs. */
export function fakeStore(): { [K in keyof MappingStore]: ReturnType<typeof vi.fn> } {
  return {
    claimApplication: vi.fn(),
    getSweepProgress: resolves(undefined),
    recordStep: resolves(undefined),
    beginStep: resolves(true),
    forgetStep: resolves(false),
    expireApplication: resolves(undefined),
    recordExit: resolves(undefined),
    undoExit: resolves(undefined),
    applyOperatorRequest: resolves({ applied: false, record: undefined }),
    candidateStatuses: resolves([]),
    saveSweepProgress: resolves(undefined),
    knownApplications: resolves(new Set()),
    markApplicationFailed: resolves(undefined),
    releaseClaim: resolves(undefined),
    getJob: resolves(undefined),
    leaseJob: vi.fn(),
    completeJob: vi.fn(async (key, owner, interview) =>
      jobRecord({ ...key, ...interview, state: 'ready', leaseOwner: owner }),
    ),
    recordJobTemplate: resolves(undefined),
    listJobs: resolves([]),
    recordReportsReadFrom: resolves(undefined),
    getApplication: resolves(undefined),
    findApplicationsByAtsId: resolves([]),
    findApplicationByInterview: resolves(undefined),
    findApplicationByServiceCandidate: resolves(undefined),
    listApplicationsByInterview: resolves([]),
    listApplicationsInStates: resolves([]),
    claimWriteBack: vi.fn(),
    rememberReplayKey: resolves(true),
    forgetReplayKey: resolves(undefined),
    noteExitSeen: resolves(undefined),
    exitSeenAt: resolves(undefined),
    rememberStageNames: resolves(undefined),
    stageNames: resolves(undefined),
    isReportParked: resolves(false),
    purgeCandidate: resolves({ applications: 0 }),
    unparkReport: resolves(undefined),
    parkUnmatchedReport: resolves(undefined),
  };
}

export function fakeContext(document = connectionDocument()) {
  const connection = parseConnections(document)[0]!;
  const ats = {
    kind: 'greenhouse' as const,
    verifyWebhook: vi.fn(),
    parseWebhook: vi.fn(),
    confirmStageEntered: vi.fn(confirmAsParsed),
    postNote: vi.fn().mockResolvedValue({ noteId: 'note-new' }),
    findNote: vi.fn().mockResolvedValue(undefined),
    moveToStage: vi.fn().mockResolvedValue({ moved: true, stageId: '9002' }),
    readStanding: vi.fn().mockResolvedValue({ active: true, stageId: '9001' }),
  };
  const interviews = {
    createInterview: vi
      .fn()
      .mockResolvedValue({ interview_id: 'int-new', invite_url: 'https://i.example.com/int-new' }),
    updateInterview: vi.fn().mockResolvedValue(undefined),
    findInterviewsByName: vi.fn().mockResolvedValue([]),
    listReports: vi.fn().mockResolvedValue([reportFactory()]),
    listAllReports: vi.fn().mockResolvedValue([]),
  };
  const context = {
    connection,
    secrets: { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32) },
    ats,
    interviews,
  } as unknown as ConnectionContext;
  return { context, ats, interviews, connection };
}

export function dependencies(
  store: ReturnType<typeof fakeStore> | MappingStore,
  context: ConnectionContext,
): InviteDependencies & { mailer: { sendInvite: Mock<Mailer['sendInvite']> } } {
  let owner = 0;
  return {
    store: store as unknown as MappingStore,
    mailer: { sendInvite: vi.fn<Mailer['sendInvite']>().mockResolvedValue({ messageId: 'm' }) },
    contextFor: async (id) => (id === context.connection.id ? context : undefined),
    logger: { info: vi.fn(), warn: vi.fn(), error: vi.fn() },
    now: () => NOW,
    newOwner: () => `owner-${++owner}`,
  };
}

/**
 * A fresh claim of application 4401 whose job's interview is ready: the state an invite starts from. The deps'
 * interview client takes template updates silently.
 */
export function readyToInvite(
  store: ReturnType<typeof fakeStore>,
  context: ConnectionContext,
  claimed: ApplicationRecord = applicationRecord({ state: 'claimed' }),
) {
  store.claimApplication.mockResolvedValue({ kind: 'claimed', resumed: false, record: claimed });
  store.leaseJob.mockResolvedValue({
    kind: 'ready',
    record: jobRecord({ state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1' }),
  });
  const deps = dependencies(store, context);
  deps.contextFor = async () => ({
    ...context,
    interviews: { ...context.interviews, updateInterview: async () => undefined },
  });
  return deps;
}

/** The queue ledger in memory, with the DynamoDB ledger's rules (shared/mapping/queue-ledger.ts). */
export class MemoryQueueLedger implements QueueLedger {
  public readonly enqueuedAt = new Map<string, number>();
  public readonly backlog = new Map<string, number>();
  public async claimEnqueue(connectionId: string, subject: string, now: number, graceMs: number): Promise<boolean> {
    const key = `${connectionId}#${subject}`;
    const at = this.enqueuedAt.get(key);
    if (at !== undefined && at >= now - graceMs) return false;
    this.enqueuedAt.set(key, now);
    return true;
  }

  public async enqueuedSince(connectionId: string, subjects: readonly string[], since: number): Promise<Set<string>> {
    return new Set(subjects.filter((s) => (this.enqueuedAt.get(`${connectionId}#${s}`) ?? -1) >= since));
  }

  public async recordEnqueued(connectionId: string, subjects: readonly string[], now: number): Promise<void> {
    for (const subject of subjects) this.enqueuedAt.set(`${connectionId}#${subject}`, now);
  }

  public async forgetEnqueued(connectionId: string, subjects: readonly string[]): Promise<void> {
    for (const subject of subjects) this.enqueuedAt.delete(`${connectionId}#${subject}`);
  }

  public async recordBacklog(connectionId: string, until: number): Promise<void> {
    this.backlog.set(connectionId, Math.max(until, this.backlog.get(connectionId) ?? 0));
  }

  public async backlogUntil(connectionId: string): Promise<number | undefined> {
    return this.backlog.get(connectionId);
  }
}
