import type { Trigger } from '../config';
import type { FollowUpMessage } from '../queue/messages.schema';
import { ClaimHeldElsewhereError, errorCode, isPermanent, refusesKey, stoppedUnsent } from './errors';
import { mayHaveSucceeded } from '../errors';
import { sayKeyRefused } from './key-refused';
import { sayConnectionFailure } from './failure-lines';
import { afterSideEffect } from './fault-injection';
import { type ConnectionContext, heldTurn, type InviteDependencies, type WorkContext } from './ports';
import { noteStart } from './note-start';
import { noteEnding, postNoteOnce, refusableStart, refusedForGood } from './post-note';
import { expiryNote } from './report-note';
import { expiryNoteOwed, reminderStep, stepDone, type ApplicationKey, type ApplicationRecord } from './records';
import {
  actOnStanding,
  showOwedStatus,
  standingForTrigger,
  standingNow,
  targetOf,
} from './application-changed.use-case';
import { ensureRoomBeforeDeadline, runSteps, type Step } from './steps';
import { showStatus } from './status';
import { interviewTaken, serviceListsReport, TAKEN_STEPS, takenMeanwhile } from './interview-taken';
import { DAY_MS, dueFollowUp, expiryOf, nothingOwed } from './follow-up-due';

export type FollowUpOutcome =
  | 'reminded'
  | 'expired'
  | 'resent'
  | 'extended'
  | 'left'
  | 'taken'
  | 'not-due'
  | 'not-open'
  | 'unknown-connection'
  /** The ATS refuses the connection's key: still due, it waits for the key. */
  | 'held'
  | 'failed';

/**
 * A reminder or an expiry, crash-safe like the invitation. A reminder is begun in the mapping table before it is
 * sent (one caller wins); one begun and not recorded sent is never sent again. The expiry moves the application
 * from `invited` to `expired` (never backwards: a report that came first wins), then writes one note (found again
 * by its marker after a crash) and the status. A report that comes after the expiry is still written back.
 *
 * Before it contacts the candidate or writes the expiry, it reads where the application stands in the ATS (one
 * documented read): a candidate who left the process (the webhook that said so may never have come) gets nothing
 * more, and their invitation moves to `left`; only an expiry recorded before they left still gets its note. An
 * operator's `resend` (the link e-mailed again) and `extend` (days added to the expiry) are carried out once per
 * request id.
 */
export async function handleFollowUp(
  message: FollowUpMessage,
  deps: InviteDependencies,
  signal?: AbortSignal,
  leaseMs = 60_000,
): Promise<{ outcome: FollowUpOutcome; reason?: string }> {
  const context = await deps.contextFor(message.connectionId);
  const trigger = context?.connection.triggers.find((t) => t.id === message.triggerId);
  if (!context || !trigger) return { outcome: 'unknown-connection' };
  const now = deps.now ?? Date.now;
  const key: ApplicationKey = {
    connectionId: message.connectionId,
    atsApplicationId: message.atsApplicationId,
    triggerId: message.triggerId,
  };
  const record = await deps.store.getApplication(key);
  if (!record) return { outcome: 'not-due' };
  const log = { connectionId: key.connectionId, atsApplicationId: key.atsApplicationId, triggerId: key.triggerId };
  // An expiry recorded is this message's to finish from the start (its note): no run enqueues it again.
  const owed = message.action === 'expire' && expiryNoteOwed(record);
  const run: FollowUpRun = { record, trigger, context, deps, now, signal, log, leaseMs, comesBack: owed };
  try {
    if (message.action === 'extend') return await extend(run, message);
    // A candidate who took the interview is neither reminded nor expired: asked before the turn is booked, and
    // looked at again once it has come, just before the candidate is contacted (interview-taken.ts).
    const look = { ...run, action: message.action };
    const dueNow = dueFollowUp(trigger, record, now());
    const due = message.action !== 'resend' && dueNow?.action === message.action;
    if (nothingOwed(message, record, dueNow)) return { outcome: 'not-due' };
    if (due && (await serviceListsReport(look))) return { outcome: 'taken' };
    // Each reads the application in the ATS first: it takes its turn on the connection's schedule, and keeps it when
    // it goes back, as every message does, rather than joining the end of a burst again each time.
    await context.turns?.take(message.action === 'expire' ? 'expiry' : 'reminder', heldTurn(message), signal);
    if (due && (await takenMeanwhile(look))) return { outcome: 'taken' };
    // Left already: nothing is sent; a retry shows the status its exit owes (its tag may have been cut short).
    if (record.state === 'left') {
      if (message.action === 'expire' && expiryNoteOwed(record)) await noteExpiry(run, record);
      await showOwedStatus({ context, deps, now, signal }, record);
      return { outcome: 'not-due' as const };
    }
    if (!(await stillInProcess(run))) {
      // An expiry recorded before the look found the candidate gone: its note is still owed (the exit's status shown).
      const left =
        message.action === 'expire' && expiryNoteOwed(record) ? await deps.store.getApplication(key) : undefined;
      if (left && expiryNoteOwed(left)) await noteExpiry(run, left);
      return { outcome: 'left' as const };
    }
    if (message.action === 'resend') return await resend(run, message);
    if (message.action === 'remind') return await remind(run, message.reminder ?? 0);
    return await expire(run);
  } catch (error) {
    return await followUpStopped(run, message, error);
  }
}

/**
 * A follow-up the ATS refused. Refused the connection's key at its look, a reminder or an expiry is held, not
 * failed: it stays due, and goes once the key is fixed (key-refused.ts). Past the look, or finishing an expiry
 * recorded, or an operator's request, none of which a run enqueues again, the message comes back (at last to the DLQ,
 * redriven once the key works). Refused for good otherwise: said, acknowledged, and still due. Anything that may
 * pass on a retry goes up.
 */
async function followUpStopped(
  run: FollowUpRun,
  message: FollowUpMessage,
  error: unknown,
): Promise<{ outcome: FollowUpOutcome; reason?: string }> {
  const { deps, log } = run;
  if (refusesKey(error)) {
    // Only a reminder or an expiry not yet recorded is sent again by the reconciler; the rest comes back through SQS.
    const comesBack = run.comesBack || (message.action !== 'remind' && message.action !== 'expire');
    const line = `follow-up: the ATS refuses the connection's key; the follow-up ${comesBack ? 'comes back' : 'waits'}`;
    await sayKeyRefused(deps, message.connectionId, {
      message: line,
      error,
      attributes: { ...log, action: message.action },
    });
    if (comesBack) throw error;
    return { outcome: 'held', reason: errorCode(error) };
  }
  if (!isPermanent(error)) throw error;
  // Nothing is recorded: it stays due, and the reconciler sends it again in half an hour or so, until the cause is
  // fixed. Said as an ERROR once a day for the connection and the refusal, WARN lines between.
  const line = { ...log, action: message.action, code: errorCode(error) };
  if (!deps.ledger) deps.logger.error('follow-up: refused for good', line);
  else
    await sayConnectionFailure({ ledger: deps.ledger, logger: deps.logger, now: deps.now }, message.connectionId, {
      message: 'follow-up: refused for good',
      kind: `follow-up ${errorCode(error)}`,
      error,
      attributes: line,
    });
  return { outcome: 'failed', reason: errorCode(error) };
}

/** One follow-up of one application: what it runs with. */
interface FollowUpRun extends WorkContext {
  record: ApplicationRecord;
  trigger: Trigger;
  context: ConnectionContext;
  leaseMs: number;
  /**
   * Past the look at the ATS, or finishing an expiry recorded: what it writes next is this message's to finish, as no
   * run enqueues it again, so a refused key sends the message back rather than hold it.
   */
  comesBack?: boolean;
}

/**
 * Whether the candidate is still in the process, as the ATS says now; one who left has their exit recorded (no
 * reminder, no expiry note, the status "cancelled"). Only an invitation with something still to do is read.
 */
async function stillInProcess(run: FollowUpRun): Promise<boolean> {
  const { record, context, deps, now, signal } = run;
  if (record.state !== 'invited' && record.state !== 'expired') return true;
  // An expiry recorded still writes its note and status where the ATS refuses the look for good (not the key): they
  // are the connector's own record, and no run would come back to them.
  const read = await standingNow(context, targetOf(record), signal).catch((error: unknown) => {
    if (record.state === 'expired' && isPermanent(error) && !refusesKey(error)) return undefined;
    throw error;
  });
  run.comesBack = true;
  if (!read) return true;
  // Moved by the connector itself (a report's write-back advancing the candidate) is no moving on.
  const standing = record.reportId === undefined ? standingForTrigger(read, run.trigger, record) : read;
  if (standing.active) return true;
  await actOnStanding({ context, deps, now, signal }, record, standing);
  return false;
}

/** The invitation e-mailed again (`npm run ops -- resend`), once per request, only to a candidate still invited. */
async function resend(run: FollowUpRun, message: FollowUpMessage): Promise<{ outcome: FollowUpOutcome }> {
  const { record, deps, now, log } = run;
  if (!message.requestId || !record.candidateEmail) return { outcome: 'not-open' };
  // The candidate took the interview, its report not written back yet: the link is theirs no more to take.
  if (interviewTaken(record)) return { outcome: 'not-open' };
  ensureRoomBeforeDeadline('resend', run.signal);
  const request = { id: message.requestId, kind: 'resend' as const, now: now() };
  // Begun with the request (one write): a crash before SES leaves it begun, shown by `ops status`, never sent twice.
  const { applied } = await deps.store.applyOperatorRequest(record, request);
  if (!applied) return { outcome: 'not-open' };
  const sent = await sendLink(run, record.candidateEmail, false);
  // Not sent (SES refused it, or no link is held): recorded as refused, so `ops status` never shows a send.
  const resent = {
    name: 'resend' as const,
    record: sent
      ? { startedAt: request.now, doneAt: now() }
      : { startedAt: request.now, outcome: 'refused' as const, value: 'not sent: SES refused it, or no link is held' },
  };
  await deps.store.recordStep(record, { step: resent, round: record.reinvitations ?? 0 });
  deps.logger.info(`follow-up: the invitation was ${sent ? '' : 'not '}sent again`, { ...log, sent });
  return { outcome: sent ? 'resent' : 'failed' };
}

/** Days added to the invitation's expiry (`npm run ops -- extend`), once per request; an expired one opens again. */
async function extend(run: FollowUpRun, message: FollowUpMessage): Promise<{ outcome: FollowUpOutcome }> {
  const { record, context, deps, now, signal, log } = run;
  if (!message.requestId || !message.days) return { outcome: 'not-open' };
  // N days from the later of now and the expiry as it stands: an invitation long expired opens for N whole days.
  const from = Math.max(now(), expiryOf(run.trigger, record) ?? 0);
  const request = {
    id: message.requestId,
    kind: 'extend' as const,
    extendedUntil: from + message.days * DAY_MS,
    now: now(),
  };
  const { applied, record: after } = await deps.store.applyOperatorRequest(record, request);
  // An expired invitation opened again owes its status "invited" (shown again on a retry until it is).
  if (after) {
    await context.turns?.take('exit', heldTurn(message), signal);
    await showOwedStatus({ context, deps, now, signal }, after);
  }
  if (!applied || !after) return { outcome: 'not-open' };
  deps.logger.info('follow-up: the invitation was extended', {
    ...log,
    days: message.days,
    until: new Date(after.extendedUntil ?? 0).toISOString(),
  });
  return { outcome: 'extended' };
}

/**
 * The invitation's link e-mailed (a reminder, or a resend): SES's refusal is said, not thrown, since the e-mail is
 * begun once and never sent again. Answers whether SES took it.
 */
async function sendLink(run: FollowUpRun, to: string, reminder: boolean): Promise<boolean> {
  const { record, trigger, deps, log } = run;
  const job = await deps.store.getJob({
    connectionId: record.connectionId,
    atsJobId: record.atsJobId,
    triggerId: record.triggerId,
  });
  const url = record.candidateInviteUrl ?? job?.inviteUrl;
  if (!url) return false;
  return deps.mailer
    .sendInvite({
      to,
      candidateName: '',
      jobName: job?.jobName ?? job?.interviewName.replace(/ \(ref [^)]*\)$/, '') ?? `Job ${record.atsJobId}`,
      inviteUrl: url,
      language: trigger.interview.language,
      from: trigger.invite.from,
      reminder,
    })
    .then(() => true)
    .catch((error: unknown) => {
      // SES refused before sending: not sent; it stays begun (not sent later either), and said.
      deps.logger.warn('follow-up: the e-mail was not sent', { ...log, code: errorCode(error) });
      return false;
    });
}

/** The n-th reminder (0-based), when the record says it is due. */
async function remind(run: FollowUpRun, n: number): Promise<{ outcome: FollowUpOutcome }> {
  const { record, deps, now, log } = run;
  // Due by the record itself (handleFollowUp): the message may be late, or the application may have moved on.
  if (!record.candidateEmail) return { outcome: 'not-due' };
  // Begun, a reminder is never sent again: it begins only with room for SES's answer before the deadline (steps.ts).
  ensureRoomBeforeDeadline(reminderStep(n), run.signal);
  const begun = now();
  const begin = { kind: 'once', state: 'invited', now: begun, unless: TAKEN_STEPS } as const;
  if (!(await deps.store.beginStep(record, reminderStep(n), begin))) return { outcome: 'not-due' };
  await sendLink(run, record.candidateEmail, true);
  afterSideEffect('reminder-emailed', `${record.connectionId}#${record.atsApplicationId}`);
  const sent = { name: reminderStep(n), record: { startedAt: begun, doneAt: now() } };
  // Only on this invitation: had the candidate come back and been invited again meanwhile, the new one's stays open.
  await deps.store.recordStep(record, { step: sent, round: record.reinvitations ?? 0 });
  deps.logger.info('follow-up: reminder sent', { ...log, reminder: n + 1 });
  return { outcome: 'reminded' };
}

/** The invitation expired: the application moved to `expired`, then one note, then the status. */
async function expire(run: FollowUpRun): Promise<{ outcome: FollowUpOutcome }> {
  const { record, trigger, context, deps, now, signal, log } = run;
  const due = dueFollowUp(trigger, record, now());
  const target = targetOf(record);
  if (record.state !== 'expired' && due?.action !== 'expire') {
    // Expired, then a report came: an expiry that stopped between showing its status and reading the claim again
    // may have shown "expired" over the report's status. Its claim now fails, and shows the claimed one again.
    if (record.expiredAt !== undefined)
      await showStatus({ context, key: record, target, deps, signal, round: record.reinvitations ?? 0 }, 'expired');
    // Expired (its note begun), then extended: the same expiry's "expired" may have landed after the extension's
    // "invited". The record owes "invited" again (an extension's), shown once more.
    else if (record.extendedUntil !== undefined && record.steps.expiryNote !== undefined)
      await showOwedStatus({ context, deps, now, signal }, record);
    return { outcome: 'not-due' };
  }
  const expiredHere = record.state === 'expired' ? undefined : now();
  // Not once the invitation shows its interview taken (a report marked while the expiry read the ATS).
  const expired =
    expiredHere === undefined ? record : await deps.store.expireApplication(record, expiredHere, TAKEN_STEPS);
  if (!expired) return { outcome: 'not-due' };
  await noteExpiry(run, expired, expiredHere);
  await showStatus({ context, key: expired, target, deps, signal, round: expired.reinvitations ?? 0 }, 'expired');
  deps.logger.info('follow-up: invitation expired', log);
  return { outcome: 'expired' };
}

/**
 * The expiry's one note, for an invitation whose expiry is recorded (`expired`, or `left` after it). One worker writes
 * it: a duplicate message that finds it leased comes back later rather than being acknowledged, so if the holder
 * stops, this message is the one that finishes the note. `expiredHere`: this invocation recorded the expiry then; on
 * an invitation whose note was never leased (an extension keeps the lease of an expiry before it), no earlier worker
 * can have posted it (none could lease it before; one leasing it since still holds it, as the lease outlasts the time
 * between the two), and it is not looked for in the ATS.
 */
async function noteExpiry(run: FollowUpRun, expired: ApplicationRecord, expiredHere?: number): Promise<void> {
  const { deps, now, leaseMs } = run;
  run.comesBack = true;
  const round = expired.reinvitations ?? 0;
  const lease = { kind: 'lease', state: expired.state, now: now(), until: now() + leaseMs, round } as const;
  if (!stepDone(expired.steps.expiryNote) && !(await deps.store.beginStep(expired, 'expiryNote', lease))) {
    // Back when the holder's lease ends as last read: one over already, in a second (read afresh); none read, a lease.
    const held = expired.steps.expiryNote?.leaseUntil ?? lease.until;
    const retryAfterMs = Math.min(leaseMs, Math.max(1_000, held - lease.now));
    throw new ClaimHeldElsewhereError(`the expiry of application ${expired.atsApplicationId}`, retryAfterMs);
  }
  // The expiry recorded here, on an invitation whose note no one ever leased (an extension keeps an earlier expiry's),
  // and leased within half a lease of it (the other half for another environment's clock running behind).
  const firstLease =
    expiredHere !== undefined &&
    expired.expiredAt === expiredHere &&
    expired.steps.expiryNote === undefined &&
    lease.now - expiredHere < leaseMs / 2;
  const note = expiryNoteStep(run, expired, lease.until, !firstLease);
  try {
    await runSteps([note], `${expired.connectionId}#${expired.atsApplicationId}`);
  } catch (error) {
    // Stopped before anything was sent (a rate limit, no room before the deadline, the key refused): the lease is given
    // back, so the next try begins the note again rather than waiting out this one's lease.
    if (stoppedUnsent(error) || (refusesKey(error) && !mayHaveSucceeded(error)))
      await deps.store
        .beginStep(expired, 'expiryNote', { ...lease, now: now(), until: now(), holds: lease.until })
        .catch(() => undefined);
    throw error;
  }
}

/**
 * The expiry note's step under the lease held until `leaseUntil`. `resumed`: an earlier try may have posted it. A
 * refusal for good (its post, or its look-up) ends the note refused, and the expiry goes on to its status.
 */
function expiryNoteStep(run: FollowUpRun, expired: ApplicationRecord, leaseUntil: number, resumed: boolean) {
  const { context, deps, now, signal } = run;
  const round = expired.reinvitations ?? 0;
  const target = targetOf(expired);
  const { body, marker } = expiryNote(expired, expired.expiredAt ?? now());
  const holdNote = (startedAt: number | undefined) =>
    deps.store.recordStep(expired, {
      step: { name: 'expiryNote', record: { leaseUntil, ...(startedAt ? { startedAt } : {}) } },
      round,
    });
  // The expiry was recorded before the note: a worker that finds it so looks for the note by its marker, or, where
  // no note is read back, finds it started (its start kept beside the lease).
  const earlier = noteStart(
    context.ats,
    { target, marker, signal },
    { resumed, startedAt: expired.steps.expiryNote?.startedAt },
    { start: () => holdNote(now()), clear: () => holdNote(undefined) },
  );
  const note: Step<unknown> = {
    name: 'expiry-note-posted',
    done: stepDone(expired.steps.expiryNote),
    ...refusableStart(earlier),
    perform: () => postNoteOnce(context.ats, target, { body, marker }, signal).catch(refusedForGood),
    // Uncertain where no note is read back and a start was found, or its answer did not come: said on the record.
    recordDone: (result, outcome) => {
      const ended = noteEnding(result, outcome);
      if (ended.outcome === 'refused')
        deps.logger.error('follow-up: the ATS refused the expiry note; the expiry goes on', {
          ...run.log,
          code: ended.value,
        });
      const done = { name: 'expiryNote' as const, record: { doneAt: now(), ...ended } };
      // In this invitation only: a re-entry meanwhile began a new one, whose own expiry owes its own note.
      return deps.store.recordStep(expired, { step: done, round });
    },
  };
  return note;
}
