import type { Trigger } from '../config';
import type { ApplicationRecord, StepName } from './records';
import { findInvitation, type ReportCandidate } from './report-invitation';
import { errorCode } from './errors';
import { REPORT_UNREADABLE_STEP } from './report-unreadable';
import type { ConnectionContext, PipelineDependencies } from './ports';

/**
 * A candidate who took the interview is reminded no more and never expired, though their report is not written back
 * yet: its write-back may wait in the queue or for its turn on a slow ATS, or its webhook may be late or lost (the
 * reconciler finds it). The report's webhook marks the invitation it finds; the report's worker marks it before it
 * waits for its turn where the webhook could not; a reminder or an expiry looks again once its own turn has come,
 * just before the candidate is contacted.
 */
interface TakenContext<C extends Pick<ConnectionContext, 'connection'> = ConnectionContext> {
  context: C;
  deps: Pick<PipelineDependencies, 'store' | 'logger' | 'now'>;
  log: Record<string, unknown>;
}

/** What marking an invitation needs of the connection: the connection alone. */
type Taken = TakenContext<Pick<ConnectionContext, 'connection'>>;

/** Whether a trigger follows its invitations up: a reminder, or an expiry. */
export const followsUp = (trigger: Pick<Trigger, 'reminders' | 'expireAfterDays'>): boolean =>
  trigger.reminders !== undefined || trigger.expireAfterDays !== undefined;

/** The invitations a report's arrival is marked on: one open, or one still being finished. */
const MARKED_STATES: ReadonlySet<ApplicationRecord['state'] | undefined> = new Set(['invited', 'claimed']);

/**
 * A report about to wait for its turn on the ATS (in the worker, or back in the queue), whose invitation would still
 * be reminded or expired: the invitation shows it came (its step `reportArrived`), so neither follows while it waits.
 * An invitation still being finished (`claimed`: the candidate took the interview from its e-mail before its note was
 * posted) is marked too: it becomes `invited` with the mark, and no reminder follows. Once per invitation; a failure
 * to say so is logged, the message waiting all the same.
 */
export async function markReportArrived(
  run: Taken & {
    application?: ApplicationRecord | undefined;
    reportId: string;
  },
) {
  const { application, context, deps } = run;
  if (!application || !MARKED_STATES.has(application.state) || application.steps.reportArrived !== undefined) return;
  const trigger = context.connection.triggers.find((t) => t.id === application.triggerId);
  if (!trigger || !followsUp(trigger)) return;
  // The report it came for, so a report parked as unmatched takes back only its own mark.
  const arrived = {
    name: 'reportArrived' as const,
    record: { doneAt: (deps.now ?? Date.now)(), value: run.reportId },
  };
  await deps.store
    .recordStep(application, { step: arrived, round: application.reinvitations ?? 0 })
    .catch((error: unknown) =>
      deps.logger.warn('report: its arrival could not be recorded on the invitation', {
        ...run.log,
        code: errorCode(error),
      }),
    );
}

/** A report's delivery: its id, and what it says of its candidate (the e-mail where the body carries it). */
export type DeliveredReport = ReportCandidate & { reportId: string };

/**
 * At the report's webhook, before it is queued: its invitation shows it came (`reportArrived`), so no reminder or
 * expiry goes while the report waits in the queue for a worker. Only where a trigger of the connection follows up;
 * the invitation found as the worker finds it (the service's candidate id of a per-candidate invitation, else the
 * interview and e-mail), at most two reads and one write. Best effort: a failure is logged, the worker marks it.
 * The mark names its report (its `value`): a report parked as unmatched takes it back (`forgetDeliveredReport`).
 */
export async function markDeliveredReport(run: Delivered): Promise<void> {
  if (!run.context.connection.triggers.some(followsUp)) return;
  try {
    const application = await deliveredInvitation(run);
    await markReportArrived({ ...run, application, reportId: run.delivery.reportId });
  } catch (error) {
    run.deps.logger.warn('report: its invitation could not be read at its webhook', {
      ...run.log,
      code: errorCode(error),
    });
  }
}

/**
 * A report parked as unmatched (not listed by the service, or no application of its own): the mark its webhook made
 * is taken back, so the invitation is reminded and expired as before. Only a mark made for this very report.
 */
export async function forgetDeliveredReport(run: Delivered): Promise<void> {
  if (!run.context.connection.triggers.some(followsUp)) return;
  try {
    const application = await deliveredInvitation(run);
    if (application?.steps.reportArrived?.value === run.delivery.reportId)
      await run.deps.store.forgetStep(application, 'reportArrived', run.delivery.reportId);
  } catch (error) {
    run.deps.logger.warn('report: its mark on the invitation could not be taken back', {
      ...run.log,
      code: errorCode(error),
    });
  }
}

type Delivered = Taken & { delivery: DeliveredReport };

/** The delivery's invitation in this connection, found as its worker finds it (by what the delivery carries). */
const deliveredInvitation = ({ context: { connection }, deps, delivery }: Delivered) =>
  findInvitation(connection, deps.store, delivery);

/** The steps that show the interview taken while the invitation is still `invited`: no reminder begins, no expiry. */
export const TAKEN_STEPS: readonly StepName[] = ['reportArrived', REPORT_UNREADABLE_STEP];

/**
 * Whether the invitation's record shows its interview taken: its report claimed (`reportId`), come and waiting for
 * its turn (`reportArrived`), or not given by the service (report-unreadable.ts).
 */
export const interviewTaken = (record: ApplicationRecord): boolean =>
  record.reportId !== undefined || TAKEN_STEPS.some((step) => record.steps[step] !== undefined);

type FollowUpLook = TakenContext & { record: ApplicationRecord; action: string; signal?: AbortSignal | undefined };

/** Once the follow-up's turn has come, just before the candidate is contacted: a report that came while it waited. */
export async function takenMeanwhile(run: FollowUpLook): Promise<boolean> {
  const now = await run.deps.store.getApplication(run.record);
  return now !== undefined && interviewTaken(now) && said(run, 'its report came while the follow-up waited');
}

/**
 * Before the follow-up books its turn: whether the service lists a report of the invitation's own candidate there
 * (one filtered read, per-candidate invitations only), its webhook late or lost. Best effort: a refusal or no answer
 * is no answer, and the follow-up goes on as before it was asked (the invitation's own record is read again later).
 */
export async function serviceListsReport(run: FollowUpLook): Promise<boolean> {
  const { record, context, deps, signal, log } = run;
  const candidateId = record.serviceCandidateId;
  if (!record.interviewId || !candidateId) return false;
  try {
    const query = { interview_id: record.interviewId, candidate_id: candidateId };
    const reports = await context.interviews.listReports(query, { signal });
    return reports.some((r) => r.candidate_id === candidateId) && said(run, 'the service lists its report');
  } catch (error) {
    if (signal?.aborted) throw error;
    deps.logger.warn('follow-up: the service did not say whether the interview was taken', {
      ...log,
      code: errorCode(error),
    });
    return false;
  }
}

const said = ({ deps, log, action }: FollowUpLook, why: string): true => {
  deps.logger.info('follow-up: the interview was taken; its report is on its way', { ...log, action, why });
  return true;
};
