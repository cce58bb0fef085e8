import type { ApplicationRecord, JobRecord } from '../../shared/pipeline/records';
import type { InterviewReport } from '../../shared/interview-service';
import type { ReportCreatedMessage, StageEnteredMessage } from '../../shared/queue';

/** The records and messages the use-case tests start from: one application (4401) of job 3301, its report. */
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
