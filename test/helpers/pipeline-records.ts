import type { ApplicationRecord, JobRecord } from '../../shared/pipeline/records';
import type { InterviewReport } from '../../shared/interview-service';
import type { FollowUpMessage, ReportCreatedMessage, StageEnteredMessage } from '../../shared/queue';

/** The records and messages the use-case tests start from: one application (4401) of job 3301, its report. */
export const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

/** Where the records are: the connection and its trigger. */
const TRIGGER = { connectionId: 'acme-greenhouse', triggerId: 'ai-screen' };
/** The application they name in the ATS. */
const ATS_IDS = { atsApplicationId: '4401', atsCandidateId: '7702', atsJobId: '3301' };
/** Its report, and the interview and candidate the service reports on. */
const REPORT_IDS = { reportId: 'rep-1', interviewId: 'int-1', candidateId: 'cand-1' };

/** A message's envelope, as the connection's functions enqueue it. */
const envelope = <Kind extends string>(kind: Kind, enqueueId: string) => ({
  v: 1 as const,
  kind,
  enqueueId,
  connectionId: TRIGGER.connectionId,
  receivedAt: NOW,
});

export function applicationRecord(overrides: Partial<ApplicationRecord> = {}): ApplicationRecord {
  return {
    ...TRIGGER,
    ...ATS_IDS,
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
    ...TRIGGER,
    atsJobId: ATS_IDS.atsJobId,
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

/** A stage-entered message as the ATS webhook enqueues it; `event` fields override the defaults. */
export function stageEnteredMessage(overrides: Partial<StageEnteredMessage['event']> = {}): StageEnteredMessage {
  return {
    ...envelope('stage-entered', 'enq-1'),
    event: {
      deliveryId: 'evt-1',
      ...ATS_IDS,
      jobName: 'Backend Engineer',
      stage: { id: '9001', name: 'AI Interview' },
      candidate: { name: 'Ana Ruiz', email: 'Ana@Example.com' },
      ...overrides,
    },
  };
}

/** A report-created message as the interview webhook enqueues it. */
export function reportCreatedMessage(overrides: Partial<ReportCreatedMessage> = {}): ReportCreatedMessage {
  return {
    ...envelope('report-created', 'enq-r'),
    source: 'webhook',
    ...REPORT_IDS,
    ...overrides,
  };
}

/** A reminder, an expiry or an operator's request for application 4401's invitation, as the reconciler enqueues it. */
export function followUpMessage(
  action: FollowUpMessage['action'],
  extra: Partial<FollowUpMessage> = {},
): FollowUpMessage {
  return {
    ...envelope('follow-up', `enq-${action}`),
    atsApplicationId: ATS_IDS.atsApplicationId,
    triggerId: TRIGGER.triggerId,
    action,
    ...extra,
  };
}
