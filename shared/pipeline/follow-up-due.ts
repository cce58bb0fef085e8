import type { Connection, Trigger } from '../config';
import type { FollowUpMessage } from '../queue/messages.schema';
import { DAY_MS, HOUR_MS } from './constants';
import { KEY_REFUSED_SUBJECT, type PipelineDependencies } from './ports';
import { reminderStep, type ApplicationRecord } from './records';
import { followsUp, interviewTaken } from './interview-taken';

// When an invitation is followed up: its reminders, its expiry, and the messages the reconciler sends for them.

export { DAY_MS, HOUR_MS } from './constants';

/** When the application was invited: its e-mail, else its note, else the service's invitation, else its claim. */
export const invitedAt = ({ steps, createdAt }: ApplicationRecord): number =>
  steps.inviteEmail?.doneAt ?? steps.inviteNote?.doneAt ?? steps.serviceInvite?.doneAt ?? createdAt;

/** When the invitation expires: `expireAfterDays` after it, or later where an operator extended it; none if off. */
export function expiryOf(trigger: Pick<Trigger, 'expireAfterDays'>, record: ApplicationRecord): number | undefined {
  if (trigger.expireAfterDays === undefined) return undefined;
  return Math.max(invitedAt(record) + trigger.expireAfterDays * DAY_MS, record.extendedUntil ?? 0);
}

/** How many reminders were begun (sent, or interrupted and never sent again). */
const remindersBegun = (record: ApplicationRecord): number => {
  let n = 0;
  while (record.steps[reminderStep(n)] !== undefined) n++;
  return n;
};

/**
 * The follow-up an invitation is due now, if any: the next reminder once its time has come (the n-th
 * `n × afterHours` after the invite), at most `reminders.max`; then the expiry once `expireAfterDays` have passed.
 */
export function dueFollowUp(
  trigger: Pick<Trigger, 'reminders' | 'expireAfterDays'>,
  record: ApplicationRecord,
  now: number,
): { action: 'remind'; reminder: number } | { action: 'expire' } | undefined {
  // The candidate took the interview, though its report may not be written back yet (interview-taken.ts).
  if (record.state !== 'invited' || interviewTaken(record)) return undefined;
  const since = now - invitedAt(record);
  // A reminder whose time has come goes first, even when the expiry is due too (a run that came late): the
  // candidate gets the reminders they were due, then the invitation expires.
  // A reminder is an e-mail: an invitation with none on record (its link went in the ATS note alone) is not reminded,
  // and expires on time.
  const reminders = record.candidateEmail === undefined ? undefined : trigger.reminders;
  const next = remindersBegun(record);
  if (reminders && next < reminders.max && since >= (next + 1) * reminders.afterHours * HOUR_MS)
    return { action: 'remind', reminder: next };
  const expiresAt = expiryOf(trigger, record);
  if (expiresAt !== undefined && now >= expiresAt) return { action: 'expire' };
  return undefined;
}

/** A follow-up due: its message's fields, and its subject in the queue ledger (one pending message per subject). */
export interface DueFollowUp {
  followUp: Omit<FollowUpMessage, 'v' | 'kind' | 'enqueueId' | 'receivedAt'>;
  subject: string;
}

/**
 * The follow-ups due for a connection's invitations, as messages for the invite worker: its applications still
 * `invited` (no report) of a trigger with reminders or an expiry, read by the state index, so a run reads the open
 * invitations and never every application of every job. Run on the reconciler's
 * schedule, which enqueues only those whose subject (the invitation, its round, the follow-up) it did not enqueue
 * lately: a follow-up reads the ATS first and may wait for its turn, and the next run must not pile copies behind
 * it. The worker re-reads each application and does nothing if it moved on, so a message sent twice is harmless.
 */
export async function followUpsDue(
  connection: Connection,
  deps: Pick<PipelineDependencies, 'store'>,
  now: number,
): Promise<DueFollowUp[]> {
  const triggers = new Map(connection.triggers.filter(followsUp).map((t) => [t.id, t] as const));
  if (!triggers.size) return [];
  const due: DueFollowUp[] = [];
  for (const record of await deps.store.listApplicationsInStates(connection.id, ['invited'])) {
    const trigger = triggers.get(record.triggerId);
    const followUp = trigger && dueFollowUp(trigger, record, now);
    if (!followUp) continue;
    const what = followUp.action === 'remind' ? `remind${followUp.reminder}` : `expire${record.extendedUntil ?? ''}`;
    // An invitation back from an exit is due its follow-ups anew: one enqueued while it was left did nothing.
    const since = record.returnedAt !== undefined ? `@${record.returnedAt}` : '';
    due.push({
      followUp: {
        connectionId: connection.id,
        atsApplicationId: record.atsApplicationId,
        triggerId: record.triggerId,
        ...followUp,
      },
      subject: `followUp#${record.atsApplicationId}#${record.triggerId}#${record.reinvitations ?? 0}#${what}${since}`,
    });
  }
  return due;
}

/**
 * A reminder or an expiry whose record shows it not due (sent, or its interview taken meanwhile) and nothing else
 * owed: it takes no turn and reads nothing in the ATS. A candidate who left may still owe the status of their exit,
 * and an expiry recorded its note or status.
 */
export function nothingOwed(message: FollowUpMessage, record: ApplicationRecord, due: ReturnType<typeof dueFollowUp>) {
  if (message.action === 'remind')
    return record.state !== 'left' && !(due?.action === 'remind' && due.reminder === (message.reminder ?? 0));
  const expiryBegun = record.expiredAt !== undefined || record.steps.expiryNote !== undefined;
  return message.action === 'expire' && record.state === 'invited' && due?.action !== 'expire' && !expiryBegun;
}

/** What the reconciler asks the queue ledger of the follow-ups due: their subjects, and whether the key was refused. */
export const ledgerSubjectsOf = (due: readonly DueFollowUp[]): string[] => [
  ...due.map((d) => d.subject),
  KEY_REFUSED_SUBJECT,
];

/**
 * Of the follow-ups due, those to enqueue, given the subjects the ledger `found` enqueued within the grace period:
 * none pending already, and while the ATS refuses the connection's key (recorded by a worker lately: key-refused.ts),
 * one a run, to find out whether it works again. The rest stay due, and go once it does.
 */
export function followUpsToEnqueue(due: readonly DueFollowUp[], found: ReadonlySet<string>): DueFollowUp[] {
  const fresh = due.filter((d) => !found.has(d.subject));
  return found.has(KEY_REFUSED_SUBJECT) ? fresh.slice(0, 1) : fresh;
}
