import { ERROR_CODES, PAGINATION } from '../interview-service/constants';
import { eachPage } from '../interview-service/list-all';
import type { InterviewReport } from '../interview-service';
import { errorCode, isPermanent } from './errors';
import { SAFE_ID_PATTERN } from '../validation';
import { WORKER_TIMING } from './constants';
import { interviewsDue, PAGING_CADENCE } from './reconcile-cadence';
import { dueFollowUp } from './follow-up-due';

import {
  reportSubject,
  type ConnectionContext,
  type PipelineDependencies,
  type QueueLedger,
  type ReportToWriteBack,
} from './ports';
import { normaliseEmail, type ApplicationRecord, type JobRecord } from './records';

/**
 * A shared link's follow-up coming due within this (either side of now) keeps its interview read every run: the
 * hourly cadence step, a few runs of the reconciler's schedule before it and after.
 */
const FOLLOW_UP_NEAR_MS = Math.min(...PAGING_CADENCE.map((step) => step.everyMs));

export interface ReconcileResult {
  connectionId: string;
  interviewsChecked: number;
  reportsFound: number;
  enqueued: ReportToWriteBack[];
  /** Interviews whose reports could not be read this run, with the error's code; the next run tries again. */
  failedInterviews: { interviewId: string; code: string }[];
  /** Reports not written back whose message is still pending (enqueued within the grace period): not enqueued. */
  pending: number;
  /** The connection's share of the run ended before every interview was read; the next run reads the rest. */
  cutShort: boolean;
  /**
   * Quiet interviews read to the end with nothing to enqueue nor pending (reconcile-cadence.ts): the caller records
   * these looks once the run's reports are sent, and their next look waits for their cadence.
   */
  looked: string[];
  /** When the run began reading: the time its looks are recorded at. */
  at: number;
}

const OPEN_STATES: ReadonlySet<ApplicationRecord['state']> = new Set(['claimed', 'invited', 'completed', 'expired']);
/** A failed invitation with no report takes one (application-states.ts): the service may have e-mailed it. */
const takesReport = (a: ApplicationRecord) => OPEN_STATES.has(a.state) || (a.state === 'failed' && !a.reportId);
/** Open, or failed with its e-mail gone out and its link withheld (failure-note.ts): a report is awaited. */
const awaitsReport = (a: ApplicationRecord) =>
  takesReport(a) && (a.state !== 'failed' || a.steps.failureNoteLinkWithheld !== undefined);

/**
 * The service's report webhooks are unsigned and may never arrive. For every interview of the connection, page
 * its reports and return those not yet written back: a report of a known application that is still open, or a
 * report that matches no application and is not parked yet (the worker parks it, with its reason). Only what was
 * missed is returned: a report enqueued within `WORKER_TIMING.enqueueGraceMs` (its webhook came, or an earlier run
 * found it, and its message waits for its turn) is pending; each one returned is recorded in the queue ledger with
 * one conditional write. The caller enqueues them (and takes the records back if it cannot); the write-back
 * worker's claims make a report found twice harmless.
 */
export async function reconcileConnection(
  connectionId: string,
  deps: ReconcileDependencies,
  signal?: AbortSignal,
): Promise<ReconcileResult> {
  const result: ReconcileResult = {
    connectionId,
    interviewsChecked: 0,
    reportsFound: 0,
    enqueued: [],
    failedInterviews: [],
    pending: 0,
    cutShort: false,
    looked: [],
    at: (deps.now ?? Date.now)(),
  };
  const context = await deps.contextFor(connectionId);
  if (!context) return result;
  const now = result.at;
  try {
    const since = now - WORKER_TIMING.reconcileWindowMs;
    const ready = (await deps.store.listJobs(connectionId)).filter((job) => job.state === 'ready' && job.interviewId);
    // The interviews with an invitation awaiting its report, and those of jobs made or changed within the window (a
    // report there that no invitation matches is parked by the worker, with its reason): no other is read.
    const awaited = ready.length ? await awaitedInterviews(context, { since, now }, deps) : new Map<string, number>();
    const lastChanged = new Map<string, number>();
    for (const { interviewId, updatedAt } of ready) {
      const invitations = awaited.get(interviewId as string);
      if (updatedAt >= since || invitations !== undefined)
        lastChanged.set(interviewId as string, Math.max(updatedAt, invitations ?? 0));
    }
    // A quiet interview is looked at on its cadence (reconcile-cadence.ts); the looks are returned for recording.
    const { due, quiet } = await interviewsDue(connectionId, lastChanged, now, deps.ledger);
    const backlogUntil = readOnce(() => deps.ledger.backlogUntil(connectionId));
    for (const job of resumedLast(ready.filter((j) => due.has(j.interviewId as string)))) {
      const before = [result.enqueued.length, result.pending, result.failedInterviews.length];
      await reconcileJob({ job, context, deps, now, signal, backlogUntil }, result);
      const after = [result.enqueued.length, result.pending, result.failedInterviews.length];
      // A look that found a report to send, or one pending, is not recorded: the next run looks again, as for any.
      if (quiet.has(job.interviewId as string) && after.every((n, i) => n === before[i]))
        result.looked.push(job.interviewId as string);
    }
  } catch (error) {
    // The connection's share of the run ended: what was found so far is returned (and enqueued); the rest waits
    // for the next run.
    if (!signal?.aborted) throw error;
    result.cutShort = true;
  }
  deps.logger.info('reconciled', {
    connectionId,
    interviewsChecked: result.interviewsChecked,
    reportsFound: result.reportsFound,
    enqueued: result.enqueued.length,
    pending: result.pending,
    failedInterviews: result.failedInterviews.length,
    cutShort: result.cutShort,
  });
  return result;
}

/** `read`'s answer, asked for the first time it is wanted and kept for the rest of the run. */
const readOnce = <T>(read: () => Promise<T>): (() => Promise<T>) => {
  let answer: Promise<T> | undefined;
  return () => {
    answer ??= read();
    return answer;
  };
};

/** An interview whose reading a spent share stopped goes on after the others: a big one never starves the rest. */
const resumedLast = (jobs: JobRecord[]): JobRecord[] => {
  const resumed = (j: JobRecord) => (j.reportsReadFrom === undefined ? 0 : 1);
  return [...jobs].sort((a, b) => resumed(a) - resumed(b));
};

/**
 * The interviews with an invitation awaiting its report, or one that would take its report and changed within the
 * window (a failed invitation the recruiter was told to send by hand), by the state index, each with when the last
 * of those invitations changed: a run reads what is open, never every application of every job. A shared link's
 * invitation with a reminder or its expiry coming due within the hour (either side of now) counts as changed now:
 * only the report found here tells that follow-up the interview was taken (the worker asks the service only of a
 * per-candidate invitation), so its interview is read every run around it (reconcile-cadence.ts).
 */
async function awaitedInterviews(
  context: ConnectionContext,
  { since, now }: { since: number; now: number },
  deps: ReconcileDependencies,
) {
  const open = await deps.store.listApplicationsInStates(context.connection.id, [...OPEN_STATES, 'failed']);
  const awaited = (a: ApplicationRecord) => awaitsReport(a) || (takesReport(a) && a.updatedAt >= since);
  const triggers = new Map(context.connection.triggers.map((t) => [t.id, t] as const));
  // Due by the near future, and not already long overdue (a follow-up the worker does not send stays due).
  const followUpSoon = (a: ApplicationRecord) => {
    const trigger = triggers.get(a.triggerId);
    if (!trigger || a.serviceCandidateId !== undefined) return false;
    return (
      dueFollowUp(trigger, a, now + FOLLOW_UP_NEAR_MS) !== undefined &&
      !dueFollowUp(trigger, a, now - FOLLOW_UP_NEAR_MS)
    );
  };
  const changed = new Map<string, number>();
  for (const a of open) {
    if (!a.interviewId || !awaited(a)) continue;
    const at = followUpSoon(a) ? now : a.updatedAt;
    changed.set(a.interviewId, Math.max(at, changed.get(a.interviewId) ?? 0));
  }
  return changed;
}

type ReconcileDependencies = Pick<PipelineDependencies, 'store' | 'contextFor' | 'logger' | 'now'> & {
  ledger: QueueLedger;
  /** Whether a report no application has completed an assessment order already (shared/orders/). */
  isOrderReport?: (connectionId: string, report: InterviewReport) => Promise<boolean>;
};

interface JobRun {
  job: JobRecord;
  context: ConnectionContext;
  deps: ReconcileDependencies;
  now: number;
  signal: AbortSignal | undefined;
  /** Until when the connection's queue holds messages waiting for its ATS's turns, read once a run when asked. */
  backlogUntil: () => Promise<number | undefined>;
}

/**
 * One interview of the connection: its reports read a page at a time, and those not written back claimed for
 * enqueueing as each page comes. Should the share run out part-way, the page it stopped before is kept on the job
 * (`reportsReadFrom`), and the next run reads on from there: every report is read in time, however many there are.
 */
async function reconcileJob(run: JobRun, result: ReconcileResult): Promise<void> {
  const { job, deps } = run;
  const interviewId = job.interviewId as string;
  const applications = (await deps.store.listApplicationsByInterview(interviewId)).filter(
    (a) => a.connectionId === result.connectionId,
  );
  result.interviewsChecked++;
  const onPage = async (reports: InterviewReport[]) => {
    result.reportsFound += reports.length;
    for (const report of reports) {
      const found = await toEnqueue(run, report, applications, result.connectionId);
      if (found === 'pending') result.pending++;
      else if (found) result.enqueued.push(found);
    }
  };
  // Read to its end: the next reading starts from the first page again.
  const read = await readReports(run, result, onPage);
  if (read === 'done' && job.reportsReadFrom !== undefined) await deps.store.recordReportsReadFrom(job, undefined);
}

/** The service's answers that refuse the key itself (401; 403, as it refuses an expired key). */
const KEY_REFUSALS: ReadonlySet<string> = new Set([ERROR_CODES.unauthorized, ERROR_CODES.forbidden]);

/**
 * The interview's reports, each page handed to `onPage`, from where an earlier run stopped: 'done' at their end,
 * 'failed' when they could not be read (said, and retried by the next run). When the share runs out, the page it
 * stopped before is kept on the job and the error goes on up.
 */
async function readReports(
  run: JobRun,
  result: ReconcileResult,
  onPage: (reports: InterviewReport[]) => Promise<void>,
): Promise<'done' | 'failed'> {
  const interviewId = run.job.interviewId as string;
  let next = run.job.reportsReadFrom ?? 1;
  try {
    const pages = eachPage(
      (page, limit) =>
        run.context.interviews.listReports({ interview_id: interviewId, page, limit }, { signal: run.signal }),
      { pageSize: PAGINATION.reportPageSize, idOf: (report) => report.report_id, from: next },
    );
    for await (const { page, added } of pages) {
      await onPage(added);
      next = page + 1;
    }
    return 'done';
  } catch (error) {
    if (run.signal?.aborted) {
      if (next > (run.job.reportsReadFrom ?? 1)) await run.deps.store.recordReportsReadFrom(run.job, next);
      throw error;
    }
    // The service refusing the connection's key refuses every interview: the connection's run stops at the first, and
    // the reconciler says it once a day (failure-lines.ts), rather than read and warn of each one every run.
    if (isPermanent(error) && KEY_REFUSALS.has(errorCode(error))) throw error;
    // One interview that cannot be read does not stop the others (nor fail the connection): said, and retried.
    const code = errorCode(error);
    result.failedInterviews.push({ interviewId, code });
    run.deps.logger.warn('reconcile: the reports of one interview could not be read', {
      connectionId: result.connectionId,
      interviewId,
      code,
    });
    return 'failed';
  }
}

/**
 * A report to enqueue, 'pending' when its message is under way (enqueued within the grace period), or undefined:
 * written back already, or parked.
 */
/**
 * A report whose webhook came (its invitation shows it arrived) while the connection's queue still holds messages
 * waiting for the ATS's turns (a long backlog on a slow ATS outlasts the ledger's grace): its message is among them,
 * and a copy would only book another turn. Once the backlog is over, one still not written back is enqueued again.
 */
async function waitingItsTurn(run: JobRun, application: ApplicationRecord | undefined, reportId: string) {
  if (application?.steps.reportArrived?.value !== reportId) return false;
  return ((await run.backlogUntil()) ?? 0) > run.now;
}

async function toEnqueue(
  run: JobRun,
  report: InterviewReport,
  applications: ApplicationRecord[],
  connectionId: string,
): Promise<ReportToWriteBack | 'pending' | undefined> {
  if (![report.report_id, report.interview_id, report.candidate_id].every((id) => SAFE_ID_PATTERN.test(id))) {
    // Such an id could not be a key or a message: skipped and said, never a failure of the connection.
    run.deps.logger.warn('reconcile: a report with an identifier the connector cannot key on is skipped', {
      connectionId,
      interviewId: run.job.interviewId,
    });
    return undefined;
  }
  const email = report.candidate_email_id ? normaliseEmail(report.candidate_email_id) : undefined;
  const application = applications.find(
    (a) =>
      a.serviceCandidateId === report.candidate_id ||
      (report.ats_job_application_id && a.atsApplicationId === report.ats_job_application_id) ||
      (email !== undefined && a.candidateEmail === email),
  );
  // A write-back of this very report under way (claimed lately; its message may be waiting its turn for a
  // rate-limited ATS) is not enqueued again: each copy would wait for a turn of its own.
  const underWay =
    (application?.state === 'completed' &&
      application.reportId === report.report_id &&
      application.updatedAt >= run.now - WORKER_TIMING.writeBackUnderWayMs) ||
    (await waitingItsTurn(run, application, report.report_id));
  const toWriteBack = application
    ? takesReport(application) && !underWay
    : !(await run.deps.store.isReportParked(connectionId, report.report_id)) &&
      !(await run.deps.isOrderReport?.(connectionId, report));
  if (!toWriteBack) return undefined;
  const subject = reportSubject(report.report_id);
  if (!(await run.deps.ledger.claimEnqueue(connectionId, subject, run.now, WORKER_TIMING.enqueueGraceMs)))
    return 'pending';
  return {
    connectionId,
    reportId: report.report_id,
    interviewId: report.interview_id,
    candidateId: report.candidate_id,
    source: 'reconciler',
  };
}
