import { randomUUID } from 'node:crypto';
import { httpsLink } from '../validation';
import type { ApplicationRef } from '../ats/port';
import type { InterviewReport } from '../interview-service';
import type { ReportCreatedMessage } from '../queue/messages.schema';
import { WORKER_TIMING } from './constants';
import { errorCode, isPermanent, ReportNotVisibleError, stoppedUnsent } from './errors';
import { statusStep } from './status';
import { decideAdvance, formatReportNote } from './report-note';
import { waitForHolder } from './held-claim';
import { postNoteOnce } from './post-note';
import { runSteps, type Step } from './steps';
import { withinRateWindow } from './pacing';
import type { StageMatcher } from '../config';
import type { ConnectionContext, PipelineDependencies, RunOptions } from './ports';
import { normaliseEmail, type ApplicationKey, type ApplicationRecord } from './records';
import { errorMessage } from '../errors';

export type ReportCreatedOutcome =
  | 'written-back'
  | 'already-written-back'
  | 'held-elsewhere'
  | 'unmatched'
  | 'other-report'
  | 'unknown-connection'
  | 'failed';

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
  options: RunOptions & { receiveCount?: number } = {},
): Promise<ReportCreatedResult> {
  const context = await deps.contextFor(message.connectionId);
  if (!context) return { outcome: 'unknown-connection' };
  return withinRateWindow(context, message, options.signal, () => writeBack(message, context, deps, options));
}

/** The report re-read, its application found and claimed, then the note and the move where the rule says so. */
async function writeBack(
  message: ReportCreatedMessage,
  context: ConnectionContext,
  deps: PipelineDependencies,
  options: RunOptions & { receiveCount?: number },
): Promise<ReportCreatedResult> {
  const now = deps.now ?? Date.now;
  const log = {
    connectionId: message.connectionId,
    reportId: message.reportId,
    interviewId: message.interviewId,
    source: message.source,
  };
  const reports = await context.interviews.listReports(
    { interview_id: message.interviewId, candidate_id: message.candidateId },
    { signal: options.signal },
  );
  const report = reports.find((r) => r.report_id === message.reportId);
  if (!report) {
    if ((options.receiveCount ?? 1) < WORKER_TIMING.reportNotFoundReceives)
      throw new ReportNotVisibleError(message.reportId);
    return park(context, message, 'the interview service does not list this report', deps, log);
  }
  const application = message.atsApplicationId
    ? (await deps.store.findApplicationsByAtsId(context.connection.id, message.atsApplicationId))[0]
    : await findApplication(context, report, deps);
  if (!application) return park(context, message, 'no application has this interview and candidate e-mail', deps, log);

  const key: ApplicationKey = {
    connectionId: application.connectionId,
    atsApplicationId: application.atsApplicationId,
    triggerId: application.triggerId,
  };
  const owner = (deps.newOwner ?? randomUUID)();
  const claim = await deps.store.claimWriteBack(
    key,
    report.report_id,
    { owner, now: now(), durationMs: options.leaseMs ?? WORKER_TIMING.applicationLeaseMs },
    report.candidate_id,
  );
  const reportKey = `${key.connectionId}#${report.report_id}`;
  const appLog = { ...log, atsApplicationId: key.atsApplicationId, triggerId: key.triggerId };
  if (claim.kind === 'done') return { outcome: 'already-written-back' };
  if (claim.kind === 'busy') {
    const finished = await waitForHolder(
      deps,
      key,
      (r) => r.state === 'written_back' && r.reportId === report.report_id,
      options.leaseMs ?? WORKER_TIMING.applicationLeaseMs,
    );
    return { outcome: finished ? 'already-written-back' : 'held-elsewhere' };
  }
  if (claim.kind === 'other-report') {
    deps.logger.warn('report: the application was already written back with another report', appLog);
    return { outcome: 'other-report' };
  }
  const record = claim.record;
  const target: ApplicationRef = {
    atsApplicationId: record.atsApplicationId,
    atsCandidateId: record.atsCandidateId,
    atsJobId: record.atsJobId,
    fromStageId: record.stageId,
  };
  const rule = context.connection.writeBack.advance;
  const decision = decideAdvance(rule, report);
  try {
    // The write-back is the order of its steps (steps.ts): the report link where the ATS has a link field, the note,
    // then the move where the rule says so.
    const input: WriteBackStepsInput = {
      context,
      deps,
      key,
      owner,
      target,
      record,
      report,
      signal: options.signal,
      now,
    };
    const reportLink = context.ats.attachReportLink ? httpsLink(report.report_url) : undefined;
    await runSteps(
      [
        ...(reportLink ? [reportLinkStep(input, reportLink)] : []),
        reportNoteStep(input, decision, rule !== undefined),
        ...(decision.advance && rule ? [stageMoveStep(input, rule.toStage)] : []),
        ...statusStep(
          context,
          record,
          decision.advance && rule ? 'advanced' : rule ? 'flagged for review' : 'completed',
          target,
          deps,
          (last) => deps.store.recordWriteBackStep(key, owner, { done: last }),
          key,
          options.signal,
        ),
      ],
      reportKey,
    );
    // An operator attached this parked report by hand: it is no longer unmatched.
    if (message.atsApplicationId) await deps.store.unparkReport(context.connection.id, report.report_id);
    deps.logger.info('report written back', { ...appLog, advanced: decision.advance });
    return { outcome: 'written-back', advanced: decision.advance, flagged: rule !== undefined && !decision.advance };
  } catch (error) {
    if (errorCode(error) === 'lease-lost') return { outcome: 'held-elsewhere' };
    if (!isPermanent(error)) {
      // Nothing half-done: the claim goes back now, and the next claim of the report looks nothing up.
      if (stoppedUnsent(error))
        await deps.store
          .releaseClaim(key, owner, startedClean(record) ? `writeBack:${record.writeBackAttempts ?? 1}` : undefined)
          .catch(() => undefined);
      throw error;
    }
    await deps.store.markApplicationFailed(key, owner, `${errorCode(error)}: ${errorMessage(error)}`);
    deps.logger.error('report: write-back failed permanently', { ...appLog, code: errorCode(error) });
    return { outcome: 'failed', reason: errorCode(error) };
  }
}

/** The first claim of the report, or one taken over from a clean stop: nothing earlier can still land unseen. */
function startedClean(record: ApplicationRecord): boolean {
  const attempts = record.writeBackAttempts ?? 1;
  return attempts <= 1 || record.cleanStop === `writeBack:${attempts - 1}`;
}

interface WriteBackStepsInput {
  context: ConnectionContext;
  deps: PipelineDependencies;
  key: ApplicationKey;
  owner: string;
  target: ApplicationRef;
  record: ApplicationRecord;
  report: InterviewReport;
  signal: AbortSignal | undefined;
  now: () => number;
}

/**
 * The report link on the application, where the ATS has a link field (Lever's links, which live on the contact): a
 * step of its own, so a message that comes back between it and the note does not attach it again. Only a crash
 * between the call and its record attaches it once more (the same URL on the same contact): it is not looked up.
 */
function reportLinkStep(input: WriteBackStepsInput, link: string): Step<void> {
  const { context, deps, key, owner, target, record, signal, now } = input;
  return {
    name: 'report-link-attached',
    done: record.reportLinkAt !== undefined,
    started: false,
    perform: () => context.ats.attachReportLink?.(target, link, signal) ?? Promise.resolve(),
    recordDone: (_result, _outcome, last) =>
      deps.store.recordWriteBackStep(key, owner, { reportLinkAt: now(), done: last }),
  };
}

/**
 * The report note. A second claim of the same report means an earlier worker may have posted the note and stopped:
 * it is looked up by its marker first.
 */
function reportNoteStep(
  input: WriteBackStepsInput,
  decision: ReturnType<typeof decideAdvance>,
  hasRule: boolean,
): Step<{ noteId?: string | undefined }> {
  const { context, deps, key, owner, target, record, report, signal, now } = input;
  const marker = `ai-interview-report:${report.report_id}`;
  return {
    name: 'report-note-posted',
    done: record.reportNoteAt !== undefined,
    // A second claim may follow a worker that posted and stopped; not one that stopped with nothing half-done.
    started: !startedClean(record),
    lookup: () => context.ats.findNote(target, marker, signal),
    perform: () => postNoteOnce(context.ats, target, { body: formatReportNote(report, decision), marker }, signal),
    recordDone: (note, _outcome, last) =>
      deps.store.recordWriteBackStep(key, owner, {
        ...(note?.noteId ? { reportNoteId: note.noteId } : {}),
        reportNoteAt: now(),
        flaggedForReview: hasRule && !decision.advance,
        done: last,
      }),
  };
}

/** The stage move: safe to perform again, since a move finds the application already in the target stage. */
function stageMoveStep(input: WriteBackStepsInput, toStage: StageMatcher): Step<{ stageId: string }> {
  const { context, deps, key, owner, target, record, signal, now } = input;
  return {
    name: 'stage-moved',
    done: record.movedAt !== undefined,
    started: false,
    perform: () => context.ats.moveToStage(target, toStage, signal),
    recordDone: (moved, _outcome, last) =>
      deps.store.recordWriteBackStep(key, owner, { movedToStageId: moved?.stageId, movedAt: now(), done: last }),
  };
}

/**
 * The service's candidate id of a per-candidate invitation first; then the service's own ATS link
 * (`ats_job_application_id`); otherwise interview and e-mail.
 */
async function findApplication(
  context: ConnectionContext,
  report: InterviewReport,
  deps: PipelineDependencies,
): Promise<ApplicationRecord | undefined> {
  // A per-candidate invitation is matched exactly by the service's candidate id, whatever e-mail was typed. Only
  // connections that invite per candidate pay for the read: a shared link records no such id.
  if (context.connection.interviewService.invites.mode === 'per-candidate') {
    const invited = await deps.store.findApplicationByServiceCandidate(report.interview_id, report.candidate_id);
    if (invited?.connectionId === context.connection.id) return invited;
  }
  if (report.ats_job_application_id) {
    const byAtsId = await deps.store.findApplicationsByAtsId(context.connection.id, report.ats_job_application_id);
    const match = byAtsId.find((a) => a.interviewId === report.interview_id);
    if (match) return match;
  }
  // A report without an e-mail (the service marks no field required) can only match by the ids above.
  if (!report.candidate_email_id) return undefined;
  const found = await deps.store.findApplicationByInterview(
    report.interview_id,
    normaliseEmail(report.candidate_email_id),
  );
  return found?.connectionId === context.connection.id ? found : undefined;
}

async function park(
  context: ConnectionContext,
  message: ReportCreatedMessage,
  reason: string,
  deps: PipelineDependencies,
  log: Record<string, unknown>,
): Promise<ReportCreatedResult> {
  await deps.store.parkUnmatchedReport(
    context.connection.id,
    { reportId: message.reportId, interviewId: message.interviewId, candidateId: message.candidateId },
    reason,
    (deps.now ?? Date.now)(),
  );
  deps.logger.warn('report parked as unmatched', { ...log, reason });
  return { outcome: 'unmatched', reason };
}
