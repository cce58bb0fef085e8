import type { ApplicationRecord } from './records';
import { errorCode, isPermanent } from './errors';
import type { ConnectionContext, PipelineDependencies } from './ports';

/**
 * A candidate who took the interview is reminded no more and never expired, though their report is not written back
 * yet: its write-back may wait for its turn on a slow ATS, or its webhook may be late or lost (the reconciler finds
 * it). The report's worker marks the invitation when it goes back for its turn; a reminder or an expiry looks again
 * once its own turn has come, just before the candidate is contacted.
 */
interface TakenContext {
  context: ConnectionContext;
  deps: Pick<PipelineDependencies, 'store' | 'logger' | 'now'>;
  log: Record<string, unknown>;
}

/**
 * A report going back for its turn on the ATS, whose invitation would still be reminded or expired: the invitation
 * shows it came (its step `reportArrived`), so neither follows while it waits. Once per invitation; a failure to say
 * so is logged, the message going back all the same.
 */
export async function markReportArrived(run: TakenContext & { application?: ApplicationRecord | undefined }) {
  const { application, context, deps } = run;
  if (application?.state !== 'invited' || application.steps.reportArrived !== undefined) return;
  const trigger = context.connection.triggers.find((t) => t.id === application.triggerId);
  if (trigger?.reminders === undefined && trigger?.expireAfterDays === undefined) return;
  const arrived = { name: 'reportArrived' as const, record: { doneAt: (deps.now ?? Date.now)() } };
  await deps.store
    .recordStep(application, { step: arrived, round: application.reinvitations ?? 0 })
    .catch((error: unknown) =>
      deps.logger.warn('report: its arrival could not be recorded on the invitation', {
        ...run.log,
        code: errorCode(error),
      }),
    );
}

/**
 * Whether the interview of a reminder or an expiry due was taken: its report came while the follow-up waited (the
 * invitation read again), or the service lists it (one filtered read, where the invitation is the candidate's own
 * there). A refusal is no answer (the follow-up goes on as before it was asked); a timeout is retried.
 */
export async function reportOnItsWay(
  run: TakenContext & { record: ApplicationRecord; action: string; signal?: AbortSignal | undefined },
): Promise<boolean> {
  const { record, deps, log, action } = run;
  const taken = (await deps.store.getApplication(record))?.steps.reportArrived !== undefined || (await listed(run));
  if (taken) deps.logger.info('follow-up: the interview was taken; its report is on its way', { ...log, action });
  return taken;
}

/** Whether the service lists a report of the invitation's own candidate there. */
async function listed(run: TakenContext & { record: ApplicationRecord; signal?: AbortSignal | undefined }) {
  const { record, context, deps, signal, log } = run;
  const candidateId = record.serviceCandidateId;
  if (!record.interviewId || !candidateId) return false;
  try {
    const query = { interview_id: record.interviewId, candidate_id: candidateId };
    return (await context.interviews.listReports(query, { signal })).some((r) => r.candidate_id === candidateId);
  } catch (error) {
    if (!isPermanent(error)) throw error;
    deps.logger.warn('follow-up: the service did not say whether the interview was taken', {
      ...log,
      code: errorCode(error),
    });
    return false;
  }
}
