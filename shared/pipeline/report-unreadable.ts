import type { ReportCreatedMessage } from '../queue/messages.schema';
import { WORKER_TIMING } from './constants';
import { errorCode, isPermanent } from './errors';
import { failureNoteStep, tellInviteFailure } from './failure-note';
import type { ConnectionContext, PipelineDependencies, RunOptions } from './ports';
import { normaliseEmail, stepDone, type ApplicationRecord } from './records';
import { isRateLimited } from '../errors';
import { targetOf } from './application-changed.use-case';

/** The step of the note that says a finished interview's report is not there yet: follow-ups stop at it. */
export const REPORT_UNREADABLE_STEP = failureNoteStep('report-unreadable');

/**
 * An invitation waiting for its report: invited, expired, left; a failed one only where the service e-mailed it and
 * withheld its link (its re-entry keeps its steps, and any other failed one reached no candidate).
 */
const awaitingReport = (record: ApplicationRecord): boolean =>
  ['invited', 'expired', 'left'].includes(record.state) ||
  (record.state === 'failed' && record.steps.failureNoteLinkWithheld !== undefined);
const roundOf = (record: ApplicationRecord): number => record.reinvitations ?? 0;

/** Where a report's read failed: its message, its connection, what it runs with. */
export interface UnreadReport {
  message: ReportCreatedMessage;
  context: ConnectionContext;
  deps: PipelineDependencies;
  options: RunOptions;
}

/**
 * The service did not give a finished interview's report: refused it (its key, its base URL), or gave no answer for
 * `reportUnreadableReceives` receives. The candidate has taken the interview, so their application is told in the
 * ATS once (the note says the report is not there yet and what to do) and gets no reminder or expiry. The message
 * keeps its tries and its place in the DLQ: once the service gives the report, it is written back as any other. A
 * rate limit, the worker's deadline or an earlier try's note tell nothing; nor does anything here fail the message.
 */
export async function tellReportUnreadable(unread: UnreadReport, error: unknown): Promise<void> {
  const { message, context, deps, options } = unread;
  const receives = options.receiveCount ?? 1;
  if (isRateLimited(error) || options.signal?.aborted) return;
  if (!isPermanent(error) && receives < WORKER_TIMING.reportUnreadableReceives) return;
  const log = { connectionId: message.connectionId, reportId: message.reportId, code: errorCode(error) };
  try {
    const record = await applicationOf(unread);
    if (!record || !awaitingReport(record) || record.reportId !== undefined) return;
    if (stepDone(record.steps[REPORT_UNREADABLE_STEP])) return;
    const now = deps.now ?? Date.now;
    // One worker tells it, in this invitation only: another message of this application waits its turn.
    const hold = { leaseUntil: now() + (options.leaseMs ?? WORKER_TIMING.applicationLeaseMs), round: roundOf(record) };
    const lease = {
      kind: 'lease',
      state: record.state,
      now: now(),
      until: hold.leaseUntil,
      round: hold.round,
    } as const;
    if (!(await deps.store.beginStep(record, REPORT_UNREADABLE_STEP, lease))) return;
    const place = { context, record, target: targetOf(record), deps, now, signal: options.signal, hold };
    await tellInviteFailure(place, { cause: 'report-unreadable', code: errorCode(error), notSent: false });
    deps.logger.warn('report: not given by the interview service; told in the ATS', {
      ...log,
      atsApplicationId: record.atsApplicationId,
    });
  } catch (tellError) {
    deps.logger.warn('report: not given by the interview service, and not told in the ATS', {
      ...log,
      tellCode: errorCode(tellError),
    });
  }
}

/**
 * The application of a report the service will not give, by what its message holds: the key a return carried or an
 * operator's match, the service's candidate id of a per-candidate invitation, else the webhook's e-mail. Only one
 * invited to this report's interview on this connection.
 */
async function applicationOf({ message, context, deps }: UnreadReport): Promise<ApplicationRecord | undefined> {
  const connectionId = context.connection.id;
  const mine = (record: ApplicationRecord | undefined) =>
    record?.connectionId === connectionId && record.interviewId === message.interviewId ? record : undefined;
  if (message.foundApplication)
    return mine(await deps.store.getApplication({ connectionId, ...message.foundApplication }));
  if (message.atsApplicationId) {
    const records = await deps.store.findApplicationsByAtsId(connectionId, message.atsApplicationId);
    return records.find((record) => mine(record));
  }
  if (context.connection.interviewService.invites.mode === 'per-candidate') {
    const invited = mine(await deps.store.findApplicationByServiceCandidate(message.interviewId, message.candidateId));
    if (invited) return invited;
  }
  if (!message.candidateEmail) return undefined;
  const email = normaliseEmail(message.candidateEmail);
  return mine(await deps.store.findApplicationByInterview(message.interviewId, email));
}
