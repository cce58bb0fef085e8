import { randomUUID } from 'node:crypto';
import type { ApplicationRef } from '../ats/port';
import type { InterviewReport } from '../interview-service';
import type { ReportCreatedMessage } from '../queue/messages.schema';
import { WORKER_TIMING } from './constants';
import { refusesKey, ReportNotVisibleError } from './errors';
import { mayHaveSucceeded } from '../errors';
import { sayKeyRefused } from './key-refused';
import { forgetDeliveredReport, markReportArrived } from './interview-taken';
import { findInvitation } from './report-invitation';
import { statusStep } from './status';
import { type ClaimedWork, endClaimedWork } from './claimed-work';
import { decideAdvance, decisionAfterExit } from './report-note';
import { waitForHolder } from './held-claim';
import { attachesReportFile, reportFileReader, reportFileStep } from './report-file';
import { runSteps, type Step } from './steps';
import { tellReportUnreadable } from './report-unreadable';
import {
  recordWriteBackStep,
  reportNoteStep,
  moveRefused,
  movedOut,
  stageMoveStep,
  startedClean,
  writeBackKey,
  exitBeforeAdvance,
  type WriteBackStepsInput,
} from './write-back-steps';
import { type ConnectionContext, heldTurn, type PipelineDependencies, type RunOptions } from './ports';
import type { ApplicationKey, ApplicationRecord } from './records';

export type ReportCreatedOutcome =
  | 'written-back'
  | 'already-written-back'
  /** Its write-back was refused for good before (`ops retry` sends it again): a later copy ends here. */
  | 'already-failed'
  | 'held-elsewhere'
  /** The ATS refuses the connection's key: the report waits for it (the reconciler enqueues it again). */
  | 'held'
  | 'unmatched'
  | 'other-report'
  | 'unknown-connection'
  | 'failed'
  /** An assessment order's report: the order completed (its `reason` says how). */
  | 'order';

export interface ReportCreatedResult {
  outcome: ReportCreatedOutcome;
  reason?: string;
  advanced?: boolean;
  /** Written back with a rule that did not advance: a recruiter reviews. */
  flagged?: boolean;
}

/**
 * A report is ready: re-read it through the API (the webhook body is never trusted), find its application,
 * and write back once: the note, then the stage move when the rule says so. Each step is recorded, so a
 * retry resumes where it stopped.
 */
export async function handleReportCreated(
  message: ReportCreatedMessage,
  deps: PipelineDependencies,
  options: RunOptions = {},
): Promise<ReportCreatedResult> {
  const context = await deps.contextFor(message.connectionId);
  if (!context) return { outcome: 'unknown-connection' };
  return writeBack(message, context, deps, options);
}

/** One report message's write-back: what it runs with. */
interface ReportRun {
  message: ReportCreatedMessage;
  context: ConnectionContext;
  deps: PipelineDependencies;
  options: WriteBackOptions;
  log: Record<string, unknown>;
}

type WriteBackOptions = RunOptions;

/** The claim on the report's application, with the record as claimed. */
interface ClaimedWriteBack extends ClaimedWork {
  record: ApplicationRecord;
  report: InterviewReport;
}

/** The report re-read, its application found and claimed, then the note and the move where the rule says so. */
async function writeBack(
  message: ReportCreatedMessage,
  context: ConnectionContext,
  deps: PipelineDependencies,
  options: WriteBackOptions,
): Promise<ReportCreatedResult> {
  const log = {
    connectionId: message.connectionId,
    reportId: message.reportId,
    interviewId: message.interviewId,
    source: message.source,
  };
  const run: ReportRun = { message, context, deps, options, log };
  const found = await reportAndApplication(run);
  if ('outcome' in found) return found;
  const { report, application, key } = found;
  if (application?.state === 'written_back' && application.reportId === report.report_id)
    return { outcome: 'already-written-back' };
  // Its turn on the ATS's rate limit, by what its sort declares, once its application shows it is not done (a
  // duplicate never books); a later turn sends it back before anything is claimed.
  const rule = context.connection.writeBack.advance;
  const move = rule !== undefined && decideAdvance(rule, report).advance;
  try {
    // Its invitation shows the report came before it waits for its turn, in the worker or in the queue, and when its
    // turn could not be booked (the message goes back all the same): once.
    let marked: Promise<void> | undefined;
    const arrived = () => (marked ??= markReportArrived({ ...run, application, reportId: message.reportId }));
    await context.turns
      ?.take(move ? 'writeBackMove' : 'writeBack', heldTurn(message), options.signal, arrived)
      .catch(async (error: unknown) => {
        await arrived();
        throw error;
      });
    const claimed = await claimReport(run, report, key, !application);
    if (!('record' in claimed)) return claimed;
    try {
      return await writeBackSteps(run, claimed);
    } catch (error) {
      if (refusesKey(error)) return await holdForKey(run, claimed, error);
      return await endClaimedWork(claimed, error, deps, () => ({ outcome: 'held-elsewhere' as const }));
    }
  } catch (error) {
    // Whatever sends it back for later (its turn, a 429, the deadline), it comes back to this application. Said to
    // this message's own run, never put on the error: one deadline's error is every message's of the invocation.
    const carried: Pick<ReportCreatedMessage, 'foundApplication'> = {
      foundApplication: { atsApplicationId: key.atsApplicationId, triggerId: key.triggerId },
    };
    options.carry?.(carried);
    throw error;
  }
}

/**
 * The ATS refused the connection's key (key-refused.ts): the claim is handed back, the application stays `completed`,
 * and the reconciler enqueues the report again once it is no longer under way, until the key is fixed. Nothing is
 * marked failed: the reports that come while a key is revoked are written back once it works again. A refusal of a
 * call that may have landed (a retried note's) hands the claim back unclean, so the next try looks for the note first.
 */
async function holdForKey(run: ReportRun, claimed: ClaimedWriteBack, error: unknown): Promise<ReportCreatedResult> {
  const { deps } = run;
  const cleanStop = mayHaveSucceeded(error) ? undefined : claimed.cleanStop;
  await deps.store.releaseClaim(claimed.key, claimed.owner, cleanStop);
  await sayKeyRefused(deps, claimed.key.connectionId, {
    message: "report: the ATS refuses the connection's key; the write-back waits for it",
    error,
    attributes: { ...claimed.log },
  });
  // A report an operator matched by hand (`ops match`) is found by no run: its message comes back (the DLQ at last).
  if (run.message.atsApplicationId) throw error;
  return { outcome: 'held' };
}

/** The report and the key of its application, the application too where it was read; or why it is parked. */
type FoundReport = { report: InterviewReport; key: ApplicationKey; application?: ApplicationRecord | undefined };

/**
 * The report as the service lists it, and its application (by the key a return carries: unread when it holds its
 * turn, since its claim reads it); or why it is parked.
 */
async function reportAndApplication(run: ReportRun): Promise<FoundReport | ReportCreatedResult> {
  const { message, context, deps, options } = run;
  const reports = await context.interviews
    .listReports({ interview_id: message.interviewId, candidate_id: message.candidateId }, { signal: options.signal })
    .catch(async (error: unknown) => {
      // A finished interview whose report the service will not give: its application is told so, reminded no more.
      await tellReportUnreadable(run, error);
      throw error;
    });
  const report = reports.find((r) => r.report_id === message.reportId);
  if (!report) {
    if ((options.receiveCount ?? 1) < WORKER_TIMING.reportNotFoundReceives)
      throw new ReportNotVisibleError(message.reportId);
    return park(run, 'the interview service does not list this report');
  }
  const connectionId = context.connection.id;
  if (message.foundApplication) {
    const key = { connectionId, ...message.foundApplication };
    // Back in the turn it holds, it claims with no read; back without one, it reads first, so a done one never books.
    if (message.turnAt !== undefined) return { report, key };
    const carried = await deps.store.getApplication(key);
    return carried ? { report, application: carried, key } : park(run, 'its application is gone');
  }
  const application = message.atsApplicationId
    ? operatorsMatch(await deps.store.findApplicationsByAtsId(connectionId, message.atsApplicationId), report)
    : await findInvitation(context.connection, deps.store, {
        interviewId: report.interview_id,
        candidateId: report.candidate_id,
        atsApplicationId: report.ats_job_application_id ?? undefined,
        candidateEmail: report.candidate_email_id ?? undefined,
      });
  if (application) return { report, application, key: keyOf(application) };
  const order = await deps.orderReport?.(context, report, options);
  if (order === 'order-no-public-link') return park(run, "the order's report has no public https link");
  if (order) return { outcome: 'order', reason: order };
  return park(run, 'no application has this interview and candidate e-mail');
}

/**
 * The application an operator matched the report to (`ops match`): of its invitations (one per trigger),
 * the one of the report's interview, else the first.
 */
const operatorsMatch = (records: ApplicationRecord[], report: InterviewReport): ApplicationRecord | undefined =>
  records.find((r) => r.interviewId === report.interview_id) ?? records[0];

const keyOf = ({ connectionId, atsApplicationId, triggerId }: ApplicationRecord): ApplicationKey => ({
  connectionId,
  atsApplicationId,
  triggerId,
});

/**
 * The write-back claimed for this report, or why there is nothing to do (done, another report, another worker).
 * `unread`: the key came with the message, so an application gone since is parked as any report with none.
 */
async function claimReport(
  run: ReportRun,
  report: InterviewReport,
  key: ApplicationKey,
  unread: boolean,
): Promise<ClaimedWriteBack | ReportCreatedResult> {
  const { deps, options } = run;
  const owner = (deps.newOwner ?? randomUUID)();
  const leaseMs = options.leaseMs ?? WORKER_TIMING.applicationLeaseMs;
  const lease = { owner, now: (deps.now ?? Date.now)(), durationMs: leaseMs };
  const claim = await deps.store
    .claimWriteBack(key, report.report_id, lease, report.candidate_id)
    .catch(async (error: unknown) => {
      if (!unread || (await deps.store.getApplication(key))) throw error;
      return undefined;
    });
  if (!claim) return park(run, 'its application is gone');
  const log = { ...run.log, atsApplicationId: key.atsApplicationId, triggerId: key.triggerId };
  if (claim.kind === 'done') return { outcome: 'already-written-back' };
  // This report's write-back was refused for good before (`ops failed` lists it; `ops retry` sends it again): a copy
  // delivered later (a webhook resent, a redrive) ends here, rather than coming back until the DLQ takes it.
  if (claim.kind === 'busy' && claim.record.state === 'failed' && claim.record.reportId === report.report_id)
    return { outcome: 'already-failed', reason: 'refused for good before: npm run ops -- failed' };
  if (claim.kind === 'busy') {
    const isDone = (r: ApplicationRecord) => r.state === 'written_back' && r.reportId === report.report_id;
    const reader = { read: () => deps.store.getApplication(key), now: deps.now, sleep: deps.sleep };
    return { outcome: (await waitForHolder(reader, isDone, leaseMs)) ? 'already-written-back' : 'held-elsewhere' };
  }
  if (claim.kind === 'other-report') {
    deps.logger.warn('report: the application was already written back with another report', log);
    return { outcome: 'other-report' };
  }
  const record = claim.record;
  const cleanStop = startedClean(record) ? `writeBack:${record.writeBackAttempts ?? 1}` : undefined;
  return { key, owner, log, record, report, cleanStop, failedLine: 'report: write-back failed permanently' };
}

/**
 * The write-back is the order of its steps (steps.ts): the note (with the report link before it where the ATS has a
 * link field), the report file (report-file.ts), then the move where the rule says so, then the status.
 */
async function writeBackSteps(run: ReportRun, claimed: ClaimedWriteBack): Promise<ReportCreatedResult> {
  const { context, deps, options, message } = run;
  const { key, owner, record, report } = claimed;
  const target: ApplicationRef = {
    atsApplicationId: record.atsApplicationId,
    atsCandidateId: record.atsCandidateId,
    atsJobId: record.atsJobId,
    fromStageId: record.stageId,
    fromStage: context.connection.triggers.find((t) => t.id === record.triggerId)?.stage,
  };
  const rule = context.connection.writeBack.advance;
  const now = deps.now ?? Date.now;
  const input: WriteBackStepsInput = { context, deps, key, owner, target, record, report, signal: options.signal, now };
  const exit = await exitBeforeAdvance(input, decideAdvance(rule, report));
  const decision = exit ? decisionAfterExit(exit) : decideAdvance(rule, report);
  const decided = exit
    ? 'completed'
    : decision.advance && rule
      ? 'advanced'
      : rule
        ? 'flagged for review'
        : 'completed';
  // A move the ATS refused leaves the candidate for a recruiter: flagged for review. One that found the candidate gone
  // shows what the look before the note shows for an exit: completed.
  const status = () => {
    if (decided !== 'advanced') return decided;
    if (moveRefused(input)) return 'flagged for review';
    return movedOut(input) ? 'completed' : decided;
  };
  const recordStatus = (last: boolean) => recordWriteBackStep(input, { last });
  const fileSteps = reportFileSteps(run, input);
  const steps = [
    reportNoteStep(input, decision, rule !== undefined && !exit),
    ...fileSteps,
    ...(decision.advance && rule ? [stageMoveStep(input, rule.toStage)] : []),
    ...statusStep(
      { context, key, target, deps, signal: options.signal, round: record.reinvitations ?? 0 },
      status,
      record,
      recordStatus,
    ),
  ];
  // The last step ends the write-back in its own write. One done already (a status claimed above the one this try would
  // show, after an exit recorded since) writes nothing: the write-back is ended after the others instead.
  const ended = steps.at(-1)?.done === true;
  try {
    await runSteps(steps, writeBackKey(input));
    if (ended) await recordWriteBackStep(input, { last: true });
  } finally {
    // A step after them failed, or had nothing to write: what was carried is recorded now, so no later try (even one
    // that finds this stop clean) makes it again. Should this write fail, its error is the run's: never a clean stop.
    if (input.carried) await recordWriteBackStep(input, { last: false });
  }
  // An operator attached this parked report by hand: it is no longer unmatched.
  if (message.atsApplicationId) await deps.store.unparkReport(context.connection.id, report.report_id);
  const advanced = decision.advance && !moveRefused(input) && !movedOut(input);
  deps.logger.info('report written back', { ...claimed.log, advanced });
  return { outcome: 'written-back', advanced, flagged: rule !== undefined && !advanced };
}

/**
 * The report file's step, where the connection attaches it (report-file.ts). The note's record rides with the file's,
 * and the file's with the next write (the move's, the status's or the finish): the file costs no write of its own.
 * Where the ATS takes the file on the note (Workable), the note carries it when it is at hand, and the step has
 * nothing left to attach.
 */
function reportFileSteps(run: ReportRun, input: WriteBackStepsInput): Step<string>[] {
  const { context, deps, options } = run;
  const { record, report, now } = input;
  input.carryNote = attachesReportFile(context);
  if (!input.carryNote) return [];
  const recordDone = (value: string, last: boolean) =>
    recordWriteBackStep(input, { step: { name: 'reportFile', record: { doneAt: now(), value } }, last, carry: true });
  // The "file not attached" note's start is kept on the file's step (where no note is read back: note-start.ts).
  const markNote = (begun: boolean) =>
    recordWriteBackStep(input, {
      step: { name: 'reportFile', record: begun ? { startedAt: now() } : undefined },
      last: false,
    });
  const readFile = reportFileReader(context, report, options.signal);
  let onNote = false;
  const receiveCount = options.receiveCount ?? 1;
  // A note whose answers do not come with its file (a large upload) goes without it once the file would be given up.
  if (context.ats.filesOnNotes && receiveCount < WORKER_TIMING.reportFileReceives)
    input.noteFile = { read: readFile, carried: () => (onNote = true) };
  const started = !startedClean(record);
  return [
    reportFileStep({
      ...{ ...input, logger: deps.logger, receiveCount, started, recordDone, markNote },
      ...{ readFile, onNote: () => onNote },
    }),
  ];
}

async function park(run: ReportRun, reason: string): Promise<ReportCreatedResult> {
  const { message, deps } = run;
  await deps.store.parkUnmatchedReport(
    run.context.connection.id,
    { reportId: message.reportId, interviewId: message.interviewId, candidateId: message.candidateId },
    reason,
    (deps.now ?? Date.now)(),
  );
  deps.logger.warn('report parked as unmatched', { ...run.log, reason });
  const { reportId, interviewId, candidateId, candidateEmail } = message;
  await forgetDeliveredReport({ ...run, delivery: { reportId, interviewId, candidateId, candidateEmail } });
  return { outcome: 'unmatched', reason };
}
