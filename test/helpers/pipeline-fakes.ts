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
import type { ApplicationRecord, JobRecord } from '../../shared/pipeline/records';
import type { InterviewReport } from '../../shared/interview-service';
import type { ReportCreatedMessage, StageEnteredMessage } from '../../shared/queue';
import { connectionDocument } from './connections';

export const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

export function applicationRecord(overrides: Partial<ApplicationRecord> = {}): ApplicationRecord {
  return {
    connectionId: 'acme-greenhouse',
    atsApplicationId: '4401',
    triggerId: 'ai-screen',
    atsCandidateId: '7702',
    atsJobId: '3301',
    stageId: '9001',
    state: 'invited',
    candidateEmail: 'ana@example.com',
    interviewId: 'int-1',
    steps: {},
    createdAt: NOW,
    updatedAt: NOW,
    ...overrides,
  };
}

export function jobRecord(overrides: Partial<JobRecord> = {}): JobRecord {
  return {
    connectionId: 'acme-greenhouse',
    atsJobId: '3301',
    triggerId: 'ai-screen',
    state: 'creating',
    interviewName: 'n',
    templateHash: 'h',
    createAttempts: 1,
    updatedAt: NOW,
    leaseOwner: 'owner-1',
    ...overrides,
  };
}

export function reportFactory(overrides: Partial<InterviewReport> = {}): InterviewReport {
  return {
    report_id: 'rep-1',
    interview_id: 'int-1',
    candidate_id: 'cand-1',
    candidate_email_id: 'Ana@Example.com',
    ai_match_score: 82,
    proctoring_score: 100,
    proctoring_violations: [],
    interview_transcript: [],
    technical_skills_evaluation: [],
    soft_skills_evaluation: [],
    custom_question_evaluation: [],
    report_url: 'https://files.example.com/r.pdf',
    interview_recording_player_url: 'https://app.example.com/player/r',
    ...overrides,
  } as InterviewReport;
}

/** A store whose every method is a spy; tests set the answers the path under test needs. */
export function fakeStore(): { [K in keyof MappingStore]: ReturnType<typeof vi.fn> } {
  return {
    claimApplication: vi.fn(),
    getSweepProgress: vi.fn().mockResolvedValue(undefined),
    recordStep: vi.fn().mockResolvedValue(undefined),
    beginStep: vi.fn().mockResolvedValue(true),
    expireApplication: vi.fn().mockResolvedValue(undefined),
    candidateStatuses: vi.fn().mockResolvedValue([]),
    saveSweepProgress: vi.fn().mockResolvedValue(undefined),
    knownApplications: vi.fn().mockResolvedValue(new Set()),
    markApplicationFailed: vi.fn().mockResolvedValue(undefined),
    releaseClaim: vi.fn().mockResolvedValue(undefined),
    getJob: vi.fn().mockResolvedValue(undefined),
    leaseJob: vi.fn(),
    completeJob: vi.fn(async (key, owner, interview) =>
      jobRecord({ ...key, ...interview, state: 'ready', leaseOwner: owner }),
    ),
    recordJobTemplate: vi.fn().mockResolvedValue(undefined),
    listJobs: vi.fn().mockResolvedValue([]),
    getApplication: vi.fn().mockResolvedValue(undefined),
    findApplicationsByAtsId: vi.fn().mockResolvedValue([]),
    findApplicationByInterview: vi.fn().mockResolvedValue(undefined),
    findApplicationByServiceCandidate: vi.fn().mockResolvedValue(undefined),
    listApplicationsByInterview: vi.fn().mockResolvedValue([]),
    claimWriteBack: vi.fn(),
    rememberReplayKey: vi.fn().mockResolvedValue(true),
    forgetReplayKey: vi.fn().mockResolvedValue(undefined),
    isReportParked: vi.fn().mockResolvedValue(false),
    purgeCandidate: vi.fn().mockResolvedValue({ applications: 0 }),
    unparkReport: vi.fn().mockResolvedValue(undefined),
    parkUnmatchedReport: vi.fn().mockResolvedValue(undefined),
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

/** A stage-entered message as the ATS webhook enqueues it; `event` fields override the defaults. */
export function stageEnteredMessage(overrides: Partial<StageEnteredMessage['event']> = {}): StageEnteredMessage {
  return {
    v: 1,
    kind: 'stage-entered',
    enqueueId: 'enq-1',
    connectionId: 'acme-greenhouse',
    receivedAt: NOW,
    event: {
      deliveryId: 'evt-1',
      atsJobId: '3301',
      jobName: 'Backend Engineer',
      atsApplicationId: '4401',
      atsCandidateId: '7702',
      stage: { id: '9001', name: 'AI Interview' },
      candidate: { name: 'Ana Ruiz', email: 'Ana@Example.com' },
      ...overrides,
    },
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

/** A report-created message as the interview webhook enqueues it. */
export function reportCreatedMessage(overrides: Partial<ReportCreatedMessage> = {}): ReportCreatedMessage {
  return {
    v: 1,
    kind: 'report-created',
    enqueueId: 'enq-r',
    connectionId: 'acme-greenhouse',
    receivedAt: NOW,
    source: 'webhook',
    reportId: 'rep-1',
    interviewId: 'int-1',
    candidateId: 'cand-1',
    ...overrides,
  };
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
