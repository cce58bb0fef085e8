import type { Connection, ConnectionSecrets } from '../config';
import type { AtsAdapter, StepKind } from '../ats/port';
import type { InterviewService } from '../interview-service/port';

/** A report as the service lists it. */
type InterviewReport = Awaited<ReturnType<InterviewService['listReports']>>[number];
import type {
  ApplicationExit,
  ApplicationKey,
  ApplicationRecord,
  ApplicationState,
  JobKey,
  JobRecord,
  StepName,
  StepRecord,
} from './records';
import type { ApplicationClaimInput, ClaimApplicationResult, ClaimWriteBackResult, Lease } from './claims';

export {
  type ApplicationClaimInput,
  type ClaimApplicationResult,
  type ClaimWriteBackResult,
  type Lease,
  newClaim,
} from './claims';

export type LeaseJobResult =
  | { kind: 'leased'; record: JobRecord }
  | { kind: 'ready'; record: JobRecord }
  | { kind: 'busy'; record: JobRecord };

/** An operator's request on an invitation (`npm run ops -- resend|extend`), carried out once by its id. */
export interface OperatorRequest {
  id: string;
  kind: 'resend' | 'extend';
  /** `extend`: when the invitation now expires (N days after the later of now and its expiry as it stood). */
  extendedUntil?: number | undefined;
  now: number;
}

/** What the application's own data gains with a step: the interview, the invitation's candidate id and link. */
export interface StepData {
  interviewId?: string;
  candidateEmail?: string | undefined;
  serviceCandidateId?: string;
  candidateInviteUrl?: string;
  flaggedForReview?: boolean;
}

/** One step written on the application: the one way every step is recorded (architecture: "Side effects as steps"). */
/** A step done, as a write records it. */
export interface StepDone {
  name: StepName;
  record: StepRecord;
}

/** The steps a write records before its own (`StepWrite.before`), as a list. */
export const stepsBefore = (before: StepWrite['before']): readonly StepDone[] =>
  before === undefined ? [] : 'name' in before ? [before] : before;

export interface StepWrite {
  /** The step under its name; `record: undefined` takes a start back (a refusal meant the effect did not happen). */
  step?: { name: StepName; record: StepRecord | undefined };
  /**
   * A step done in the same run before this write, recorded by it (the report link with its note; an invitation's
   * sent e-mail with the next write, which may carry no `step` of its own).
   */
  before?: StepDone | readonly StepDone[];
  /**
   * The claim's holder: the write is made only while it holds the lease (else a LeaseLostError). Without one, only
   * while the application exists (a purge re-creates nothing) and, with a `round`, in that invitation.
   */
  owner?: string;
  round?: number;
  /** The claim's work ends with this step: the application moves to `invited` or `written_back`, its lease let go. */
  finish?: 'invited' | 'written_back';
  data?: StepData;
}

/** How a step only one caller may begin is begun (`beginStep`). */
export type StepBegin =
  /**
   * Once, while the application is in `state` and has none of the steps `unless` (a reminder: begun and never sent is
   * not sent again; none begins once the interview was taken).
   */
  | { kind: 'once'; state: ApplicationState; now: number; unless?: readonly StepName[] }
  /** By one worker until `until`, in `state`, not done, in its `round` (expiry note), or over its own `holds`. */
  | { kind: 'lease'; state: ApplicationState; now: number; until: number; round?: number | undefined; holds?: number }
  /**
   * With a value ranked no lower than the one begun before (the status; the same may be begun again), and, with a
   * `round` (the invitation's `reinvitations`), only in that invitation: a late status of an earlier one never lands on
   * the next; with `whileState`, only while the application is in it (a late "cancelled" never lands on an invitation
   * whose candidate came back).
   */
  | {
      kind: 'rank';
      value: string;
      rank: number;
      now: number;
      round?: number | undefined;
      whileState?: ApplicationState | undefined;
    };

/** The step as a begin records it: when it began, the holder's lease, or the value and its rank. */
export function begunStep(begin: StepBegin): StepRecord {
  if (begin.kind === 'once') return { startedAt: begin.now };
  if (begin.kind === 'lease') return { leaseUntil: begin.until };
  return { value: begin.value, rank: begin.rank, startedAt: begin.now };
}

/**
 * What each connection has put on its queues, and when: the webhooks, the reconciler and the sweep all record what
 * they enqueue, so background work enqueues only what was missed, and yields while a connection's queue holds
 * messages waiting for its ATS's rate limit.
 */
export interface QueueLedger {
  /**
   * Records `subject` (`reportSubject`, `stageSubject`) as enqueued at `now` unless it was within `graceMs`: true when
   * the caller is to enqueue it (one conditional write), false when a message for it is still pending.
   */
  claimEnqueue(connectionId: string, subject: string, now: number, graceMs: number): Promise<boolean>;
  /** Of `subjects`, those enqueued at `since` or later. */
  enqueuedSince(connectionId: string, subjects: readonly string[], since: number): Promise<Set<string>>;
  /** Records `subjects` as enqueued at `now`, unconditionally (a webhook always enqueues). */
  recordEnqueued(connectionId: string, subjects: readonly string[], now: number): Promise<void>;
  /** Takes back the records of subjects whose messages could not be sent, so the next run enqueues them. */
  forgetEnqueued(connectionId: string, subjects: readonly string[]): Promise<void>;
  /** The connection's queue holds messages deferred for its ATS's rate limit until `until` (only ever extended). */
  recordBacklog(connectionId: string, until: number): Promise<void>;
  /** Until when the connection's queue holds messages waiting for its ATS, if it does. */
  backlogUntil(connectionId: string): Promise<number | undefined>;
}

/** A signed delivery's replay key (refused when seen again within `ttlSeconds`). */
export interface DeliveryReplay {
  key: string;
  ttlSeconds: number;
}

/** The ledger's subject for a report (the write-back queue) and for an application's stage change (the stage queue). */
export const reportSubject = (reportId: string): string => `report#${reportId}`;
export const stageSubject = (atsApplicationId: string): string => `stage#${atsApplicationId}`;
/** The ledger's subject for the reconciler's look at a quiet interview's reports (reconcile-cadence.ts). */
export const pagedSubject = (interviewId: string): string => `paged#${interviewId}`;
/** The ledger's record of the ATS refusing a connection's key lately: the reconciler holds follow-ups back. */
export const KEY_REFUSED_SUBJECT = 'key-refused';

/** The mapping tables (DynamoDB in every environment; the only code that speaks it lives in shared/mapping). */
/** Where the sweep of one trigger's stage stands between runs. */
export interface SweepProgress {
  /** The next page's cursor; absent once the list was read to its end. */
  cursor?: string | undefined;
  startedAt: number;
  completedAt?: number | undefined;
  /** Applications the connector did not know, enqueued so far in this pass. */
  found: number;
}

export interface MappingStore {
  /** Records a step (its start, its end, a start taken back), and where its claim's work ends, the new state. */
  recordStep(key: ApplicationKey, write: StepWrite): Promise<void>;
  /**
   * Begins a step only one caller may begin (`StepBegin`): true for that caller, false when another began it (a
   * reminder begun before, an expiry note held, a status ranked higher) or the application moved on or is gone.
   */
  beginStep(key: ApplicationKey, name: StepName, begin: StepBegin): Promise<boolean>;
  /**
   * The candidate left the process: an invitation (`invited`, `expired`) moves to `left` (`leftFrom` keeps where it
   * was); an application in any other state keeps its state and records the exit, so a write-back moves no stage.
   * Answers the record as it now stands (undefined when there is none).
   */
  recordExit(key: ApplicationKey, exit: ApplicationExit): Promise<ApplicationRecord | undefined>;
  /** The exit undone: `left` returns to `leftFrom` with its status claim taken off; any other loses its exit record. */
  undoExit(key: ApplicationKey, now: number): Promise<ApplicationRecord | undefined>;
  /** An operator's request, carried out once by its id: `applied` for the one caller that did (see OperatorRequest). */
  applyOperatorRequest(
    key: ApplicationKey,
    request: OperatorRequest,
  ): Promise<{ applied: boolean; record: ApplicationRecord | undefined }>;
  /** Takes step `name` off while it still shows `value` (a mark made for one report): true when it did. */
  forgetStep(key: ApplicationKey, name: StepName, value: string): Promise<boolean>;
  /** `invited` → `expired`; the record when it is expired (now or before), undefined when it moved on. */
  expireApplication(
    key: ApplicationKey,
    now: number,
    unless?: readonly StepName[],
  ): Promise<ApplicationRecord | undefined>;
  /** The statuses the candidate's applications in the connection claimed (for ATSs that tag candidates). */
  candidateStatuses(connectionId: string, atsCandidateId: string): Promise<string[]>;
  getSweepProgress(connectionId: string, triggerId: string): Promise<SweepProgress | undefined>;
  saveSweepProgress(connectionId: string, triggerId: string, progress: SweepProgress): Promise<void>;
  /** The ids of those applications the connector holds a record of (any state), for their trigger. */
  knownApplications(keys: readonly ApplicationKey[]): Promise<Set<string>>;
  /** Records the delivery and claims application × trigger in one write; duplicates and held claims are values. */
  claimApplication(
    delivery: { source: string; deliveryId: string; enqueueId: string },
    input: ApplicationClaimInput,
    lease: Lease,
  ): Promise<ClaimApplicationResult>;
  /** A permanent failure (the ATS or the service refused): visible to ops, not retried. */
  markApplicationFailed(key: ApplicationKey, owner: string, reason: string): Promise<void>;
  /**
   * Hands a claim back before its lease ends, after a call refused unsent: the message's next delivery claims it at
   * once instead of waiting the lease out. `cleanStop` names the claim when nothing it or an earlier claim did can
   * still land unseen (undefined: the next claim looks its steps up). Conditional on the lease.
   */
  releaseClaim(key: ApplicationKey, owner: string, cleanStop: string | undefined): Promise<void>;

  getJob(key: JobKey): Promise<JobRecord | undefined>;
  leaseJob(
    key: JobKey,
    details: { interviewName: string; templateHash: string; jobName?: string | undefined },
    lease: Lease,
  ): Promise<LeaseJobResult>;
  completeJob(
    key: JobKey,
    owner: string,
    interview: { interviewId: string; inviteUrl: string; templateHash: string },
  ): Promise<JobRecord>;
  recordJobTemplate(key: JobKey, templateHash: string): Promise<void>;
  listJobs(connectionId: string): Promise<JobRecord[]>;
  /** Where the reconciler's reading of the job's interview's reports goes on (`reportsReadFrom`); undefined: done. */
  recordReportsReadFrom(key: JobKey, page: number | undefined): Promise<void>;

  getApplication(key: ApplicationKey): Promise<ApplicationRecord | undefined>;
  findApplicationsByAtsId(connectionId: string, atsApplicationId: string): Promise<ApplicationRecord[]>;
  findApplicationByInterview(interviewId: string, candidateEmail: string): Promise<ApplicationRecord | undefined>;
  /** Per-candidate invitations: the application the service's candidate id was invited for. */
  findApplicationByServiceCandidate(interviewId: string, candidateId: string): Promise<ApplicationRecord | undefined>;
  listApplicationsByInterview(interviewId: string): Promise<ApplicationRecord[]>;
  /** A connection's applications in `states` (its open invitations), by the state index, whatever their job. */
  listApplicationsInStates(connectionId: string, states: readonly ApplicationState[]): Promise<ApplicationRecord[]>;
  claimWriteBack(
    key: ApplicationKey,
    reportId: string,
    lease: Lease,
    reportCandidateId?: string,
  ): Promise<ClaimWriteBackResult>;
  /** Records a webhook replay key (Lever's token); false when it was seen before and has not expired. */
  rememberReplayKey(connectionId: string, key: string, now: number, ttlSeconds: number): Promise<boolean>;
  /** Lets the same delivery in again after the connector failed to accept it (so the ATS's retry is not refused). */
  forgetReplayKey(connectionId: string, key: string): Promise<void>;
  /** Marks an application the ATS said left, for a few days: a first claim of it then reads the ATS first. */
  noteExitSeen(connectionId: string, atsApplicationId: string, now: number): Promise<void>;
  /** When the ATS last said the application left, within the mark's days; undefined when it did not. */
  exitSeenAt(connectionId: string, atsApplicationId: string, now: number): Promise<number | undefined>;
  /**
   * The names of the ATS's stages by id, as a worker read them (Lever's webhooks carry a stage's id only), kept for a
   * day for the webhook function; `stageNames` answers undefined once they are older.
   */
  rememberStageNames(connectionId: string, names: Record<string, string>, now: number): Promise<void>;
  stageNames(connectionId: string, now: number): Promise<Record<string, string> | undefined>;
  isReportParked(connectionId: string, reportId: string): Promise<boolean>;
  unparkReport(connectionId: string, reportId: string): Promise<void>;
  purgeCandidate(
    connectionId: string,
    atsCandidateId: string,
    atsApplicationIds?: readonly string[],
    /** How many application records and assessment orders were deleted. */
  ): Promise<{ applications: number; orders?: number }>;
  parkUnmatchedReport(
    connectionId: string,
    report: { reportId: string; interviewId: string; candidateId: string },
    reason: string,
    now: number,
  ): Promise<void>;
}

export interface InviteEmail {
  to: string;
  candidateName: string;
  jobName: string;
  inviteUrl: string;
  language: string;
  from?: string | undefined;
  /** A reminder of an invitation already sent: the same link, the reminder's text. */
  reminder?: boolean | undefined;
}

export interface Mailer {
  /** Throws a `MailerError`; `definitelyNotSent` when the mail service answered with a refusal. */
  sendInvite(email: InviteEmail): Promise<{ messageId: string }>;
}

export interface StageEnteredMessageOut {
  connectionId: string;
}

export interface ReportToWriteBack {
  connectionId: string;
  reportId: string;
  interviewId: string;
  candidateId: string;
  source: 'webhook' | 'reconciler';
}

export interface ReportQueue {
  enqueueReports(reports: readonly ReportToWriteBack[]): Promise<void>;
}

/** What a webhook function has of a connection: no pacing, no interview-service client. */
export type WebhookContext = Pick<ConnectionContext, 'connection' | 'secrets' | 'ats'>;

/** Per-connection collaborators, built once per warm function and cached. */
export interface ConnectionContext {
  connection: Connection;
  secrets: ConnectionSecrets;
  ats: AtsAdapter;
  /** The connection's turns on its ATS's rate limit (shared/pacing/turn.ts); absent where nothing paces. */
  turns?: AtsTurns | undefined;
  interviews: InterviewService;
}

/** A turn a message holds on its connection's schedule (it went back for it): when it begins, the calls it holds. */
export interface HeldTurn {
  at: number;
  calls: number;
}

/** Each message's turn on its connection's ATS schedule, booked by what its step declares (shared/pacing/turn.ts). */
export interface AtsTurns {
  /**
   * Waits for the turn (`held` when the message went back for one), or throws the message back carrying it;
   * `beforeWait` first, where the turn is not now.
   */
  take(
    step: StepKind,
    held: HeldTurn | undefined,
    signal?: AbortSignal,
    beforeWait?: () => Promise<void>,
  ): Promise<void>;
  /** A turn for work of no message (a sweep's page), taken only when it is near: answers whether it was. */
  takeNear(step: StepKind, signal?: AbortSignal): Promise<boolean>;
}

/** The turn a message carries back from the queue, if it went back for one. */
export function heldTurn(message: {
  turnAt?: number | undefined;
  turnCalls?: number | undefined;
}): HeldTurn | undefined {
  return message.turnAt === undefined ? undefined : { at: message.turnAt, calls: message.turnCalls ?? 1 };
}

export interface PipelineLogger {
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
}

/** Per message: the caller's deadline, and how long a claim may be held (the invocation's remaining time). */
export interface RunOptions {
  signal?: AbortSignal | undefined;
  leaseMs?: number | undefined;
  /** How many times the queue has handed the message over (1 the first time): above 1, an earlier try began. */
  receiveCount?: number | undefined;
  /** Fields its copy carries should this message go back for later (functions/_runtime/deferral.ts: `withCarried`). */
  carry?: ((fields: Record<string, unknown>) => void) | undefined;
}

/** What every use case is given. */
export interface PipelineDependencies {
  store: MappingStore;
  contextFor(connectionId: string): Promise<ConnectionContext | undefined>;
  logger: PipelineLogger;
  now?: () => number;
  /** A fresh owner id per attempt, so two workers on the same message never share a lease. */
  newOwner?: () => string;
  sleep?: (ms: number) => Promise<void>;
  /**
   * The queue ledger, where a worker records the ATS refusing a connection's key and says it once a day
   * (key-refused.ts); without it, each refusal is an ERROR line.
   */
  ledger?: Pick<QueueLedger, 'claimEnqueue' | 'recordEnqueued'> | undefined;
  /** A report of no application may be an order's (shared/orders/): completes it, answers how (undefined: none). */
  orderReport?: (context: ConnectionContext, report: InterviewReport, run?: RunOptions) => Promise<string | undefined>;
}

/** The stage-entered use case also sends the invitation e-mail; only the invite worker loads a mail client. */
export interface InviteDependencies extends PipelineDependencies {
  mailer: Mailer;
}

/** What a use case's inner work runs with: its dependencies, its clock, the worker's deadline, its log fields. */
export interface WorkContext<D extends PipelineDependencies = InviteDependencies> {
  deps: D;
  now: () => number;
  signal: AbortSignal | undefined;
  log: Record<string, unknown>;
}
