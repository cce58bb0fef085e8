import type { ApplicationRef, ApplicationStanding } from '../ats/port';
import { ATS_ERROR_CODES } from '../ats/errors';
import { outOfStage, type Trigger } from '../config';
import { errorCode } from '../errors';
import type { ApplicationChangedMessage } from '../queue/messages.schema';
import { ClaimHeldElsewhereError, refusesKey, warnRefusedForGood } from './errors';
import { sayKeyRefused } from './key-refused';
import { type ConnectionContext, heldTurn, type PipelineDependencies, type RunOptions } from './ports';
import type { ApplicationRecord } from './records';
import { showStatus } from './status';
import { waitForHolder } from './held-claim';

export type ApplicationChangedOutcome = 'left' | 'returned' | 'unchanged' | 'nothing-to-do' | 'unknown-connection';

/** Where the connector acts on what the ATS says of an application it holds: its records, the ATS, its status. */
export interface StandingPlace {
  context: ConnectionContext;
  deps: Pick<PipelineDependencies, 'store' | 'logger' | 'now'>;
  now: () => number;
  signal?: AbortSignal | undefined;
}

/** The application as the ATS knows it, from the connector's record. */
export const targetOf = (record: ApplicationRecord): ApplicationRef => ({
  atsApplicationId: record.atsApplicationId,
  atsCandidateId: record.atsCandidateId,
  atsJobId: record.atsJobId,
  fromStageId: record.stageId,
});

/** A candidate still in the process, moved out of the trigger's stage before taking the interview. */
export interface MovedOn {
  active: false;
  exit: 'moved';
  reason?: string | undefined;
}

/**
 * What a read before a further contact means for an invitation: the standing as read, or, where the candidate is in
 * the process but surely in another stage than the trigger's (by id or name, as the trigger matches), moved on. A
 * stage the read does not tell leaves them followed.
 */
export function standingForTrigger(
  standing: ApplicationStanding,
  trigger: Pick<Trigger, 'stage'>,
  record: Pick<ApplicationRecord, 'atsJobId' | 'stageId'>,
): ApplicationStanding | MovedOn {
  if (!standing.active) return standing;
  // In the very stage it was invited from, by the ATS's own id: not moved, whatever the trigger says since.
  const stage = { id: standing.stageId, name: standing.stageName };
  if (!outOfStage(trigger.stage, record.stageId, stage, record.atsJobId)) return standing;
  return { active: false, exit: 'moved', reason: standing.stageName ? `now in ${standing.stageName}` : undefined };
}

/**
 * Where the application stands, as the ATS says now: one the ATS answers it does not have (a 404, or a read that finds
 * no such application) has left for good (`deleted`: removed, or merged into another), so nothing follows it.
 */
export async function standingNow(
  context: ConnectionContext,
  target: ApplicationRef,
  signal: AbortSignal | undefined,
): Promise<ApplicationStanding> {
  try {
    return await context.ats.readStanding(target, signal);
  } catch (error) {
    if (errorCode(error) !== ATS_ERROR_CODES.notFound) throw error;
    return { active: false, exit: 'deleted', reason: 'the ATS no longer has this application' };
  }
}

/**
 * Acts on the application's standing as the ATS says it now, for one of its records: an exit is recorded (an
 * invitation moves to `left`, and shows "cancelled"), or an exit undone returns the invitation to where it was (and
 * its status). Answers what changed. The status is shown after the state is written, and again on a retry until its
 * claim says it was (`statusOwed`): a rate limit between the two never leaves a left candidate shown as invited.
 */
export async function actOnStanding(
  place: StandingPlace,
  record: ApplicationRecord,
  standing: ApplicationStanding | MovedOn,
  reentered = false,
): Promise<'left' | 'returned' | 'unchanged'> {
  const { deps, now } = place;
  const log = {
    connectionId: record.connectionId,
    atsApplicationId: record.atsApplicationId,
    triggerId: record.triggerId,
  };
  let after = record;
  let outcome: 'left' | 'returned' | 'unchanged' = 'unchanged';
  if (!standing.active && record.state !== 'left' && !record.exit) {
    const exit = { kind: standing.exit, reason: standing.reason?.slice(0, 200), at: now() };
    after = (await deps.store.recordExit(record, exit)) ?? record;
    if (after.exit) outcome = 'left';
    if (after.state === 'left' && standing.exit === 'deleted')
      // Said louder: every candidate of a connection answered so means its ATS address is wrong, not its candidates.
      deps.logger.warn('the ATS no longer has the application: followed no more (a re-entry brings it back)', log);
    else if (after.state === 'left')
      deps.logger.info('the candidate left the process: no more reminders or expiry', { ...log, exit: standing.exit });
  } else if (
    standing.active &&
    (record.state === 'left' || record.exit) &&
    (reentered || record.exit?.kind !== 'moved')
  ) {
    // Moved out of the stage, a candidate is back only by entering it again (`reentered`), not by being in the process.
    after = (await deps.store.undoExit(record, now())) ?? record;
    outcome = 'returned';
    if (record.state === 'left')
      deps.logger.info('the candidate is back in the process: the invitation is as it was', {
        ...log,
        state: after.state,
      });
  }
  await showOwedStatus(place, after);
  return outcome;
}

/**
 * The status an exit or its undo owes the ATS, where statuses are shown: "cancelled" for an invitation that left, the
 * invitation's own for one whose exit was undone (its status claim was taken off with the exit). A status is claimed
 * before its tag is shown, so a claim may stand over a tag never shown (an ATS error, a lost answer, a crash between
 * the two): on a `retry` (the same work again: its message handed over once more, or a look that found it so) the
 * claimed status is owed again (a tag already there changes nothing), and an invitation back from an exit or opened
 * again by an extension shows its own again. A new hint about a left invitation whose claim says "cancelled" costs no
 * tag calls.
 */
export function statusOwed(
  context: ConnectionContext,
  record: ApplicationRecord,
  retry = true,
): 'cancelled' | 'invited' | 'expired' | undefined {
  if (context.connection.writeBack.status !== 'tags') return undefined;
  // An application the ATS no longer has takes no status, but where tags belong to the candidate (still there) the
  // invitation's tag is taken off as for any exit: "cancelled", under another application's status that is further.
  if (record.exit?.kind === 'deleted' && !context.ats.tagsCandidates) return undefined;
  const claimed = record.steps.status?.value;
  if (record.state === 'left') return retry || claimed !== 'cancelled' ? 'cancelled' : undefined;
  if (record.state !== 'invited' && record.state !== 'expired') return undefined;
  const reopened = (record.returnedAt !== undefined || record.extendedUntil !== undefined) && claimed === record.state;
  return claimed === undefined || (retry && reopened) ? record.state : undefined;
}

/** Whether a status was claimed since `since` that a retry would show again (another worker may be showing it). */
const statusClaimedWithin = (context: ConnectionContext, record: ApplicationRecord, since: number): boolean =>
  (record.steps.status?.startedAt ?? 0) > since && statusOwed(context, record, true) !== undefined;

/** Shows the status the record owes the ATS, if any. */
export async function showOwedStatus(place: StandingPlace, record: ApplicationRecord): Promise<void> {
  const owed = statusOwed(place.context, record);
  if (!owed) return;
  const { context, deps, signal } = place;
  const round = record.reinvitations ?? 0;
  await showStatus({ context, key: record, target: targetOf(record), deps, signal, round }, owed);
}

/**
 * A retried message that finds nothing left to do for `records` (their invitation finished, their exit or return
 * recorded): the status an earlier try owed is shown again, as its tag write may have got no answer and gone up
 * (shared/ats/ats-http.ts, `ordered`). A first try shows nothing here: the worker that recorded the change shows it.
 */
export async function showOwedOnRetry(place: StandingPlace, records: ApplicationRecord[], receiveCount = 1) {
  if (receiveCount <= 1) return;
  for (const record of records) await showOwedStatus(place, record);
}

/**
 * Records an exit or its undo could change: a 'left' hint concerns the others, a 'returned' one those that left; both
 * concern a record whose status is still owed after an earlier try stopped between its write and its status (on a
 * `retry`, one whose claimed status may never have been shown).
 */
const concerned = (
  context: ConnectionContext,
  record: ApplicationRecord,
  change: ApplicationChangedMessage['change'],
  retry: boolean,
) =>
  statusOwed(context, record, retry) !== undefined ||
  (change === 'left'
    ? record.state !== 'left' && (record.exit === undefined || record.state === 'invited' || record.state === 'expired')
    : record.state === 'left' || !!record.exit);

/**
 * The application's records, once no invitation of it is still being sent where the candidate left: an exit said
 * right after the invitation's e-mail (a recruiter's quick rejection) most often finds its last steps under way, a
 * second or two, and waits for them here (`waitForHolder`). One still held comes back when its holder's lease ends;
 * one whose holder stopped is left to its next contact's look, and the others are acted on now.
 */
async function heldAfterInvitation(
  message: ApplicationChangedMessage,
  deps: PipelineDependencies,
  leaseMs: number,
): Promise<ApplicationRecord[]> {
  const now = deps.now ?? Date.now;
  const read = () => deps.store.findApplicationsByAtsId(message.connectionId, message.atsApplicationId);
  const sending = (r: ApplicationRecord) => r.state === 'claimed' && (r.leaseUntil ?? 0) >= now();
  const held = await read();
  const holder = message.change === 'left' ? held.find(sending) : undefined;
  if (!holder) return held;
  const reader = { read: () => deps.store.getApplication(holder), now: deps.now, sleep: deps.sleep };
  await waitForHolder(reader, (r) => r.state !== 'claimed', leaseMs);
  const after = await read();
  const still = after.find(sending);
  if (still)
    throw new ClaimHeldElsewhereError(
      `the invitation of application ${message.atsApplicationId}`,
      Math.max(1_000, (still.leaseUntil ?? 0) - now()),
    );
  return after;
}

/**
 * The ATS said an application left the process or came back: a hint, acted on only after one read of what the ATS says
 * now (a delivery may be late, reordered, or, on Lever, unsigned beyond its token). Nothing is read when the connector
 * holds no record the change concerns. An invitation still being sent comes back after its claim's lease.
 */
export async function handleApplicationChanged(
  message: ApplicationChangedMessage,
  deps: PipelineDependencies,
  options: RunOptions = {},
): Promise<{ outcome: ApplicationChangedOutcome; reason?: string }> {
  const context = await deps.contextFor(message.connectionId);
  if (!context) return { outcome: 'unknown-connection' };
  // The same message again: handed over once more by SQS, or its copy put back for later (a deferral).
  const retry = (options.receiveCount ?? 1) > 1 || (message.deferrals ?? 0) > 0;
  const leaseMs = options.leaseMs ?? 60_000;
  const now = deps.now ?? Date.now;
  // Marked before the records are read: a stage change of this application not claimed yet (late, retried by the ATS,
  // or waiting its turn) then reads where the candidate stands before inviting; one claimed already is read below.
  if (message.change === 'left') await deps.store.noteExitSeen(message.connectionId, message.atsApplicationId, now());
  const held = await heldAfterInvitation(message, deps, leaseMs);
  const records = held.filter((r) => concerned(context, r, message.change, retry));
  const first = records[0];
  if (!first) {
    // A status claimed within a lease may be another worker's, between its claim and its tag: this same message
    // handed to it too (SQS delivers at least once). Acknowledged here, that worker's failure would never bring the
    // message back: it looks again once that lease is over, as a retry, which shows a status still owed.
    if (!retry && held.some((r) => statusClaimedWithin(context, r, now() - leaseMs)))
      throw new ClaimHeldElsewhereError(`the status of application ${message.atsApplicationId}`, leaseMs);
    return { outcome: 'nothing-to-do' };
  }
  const place: StandingPlace = { context, deps, now, signal: options.signal };
  try {
    await context.turns?.take('exit', heldTurn(message), options.signal);
    const standing = await standingNow(context, targetOf(first), options.signal);
    const outcomes: ('left' | 'returned' | 'unchanged')[] = [];
    for (const record of records) outcomes.push(await actOnStanding(place, record, standing));
    return { outcome: outcomes.find((o) => o !== 'unchanged') ?? 'unchanged' };
  } catch (error) {
    // A hint of an exit: with the connection's key refused, the look before the next reminder or expiry finds it. A
    // return no run looks for: its message comes back (the DLQ at last, redriven once the key works).
    if (refusesKey(error)) {
      const line = "application changed: the ATS refuses the connection's key";
      await sayKeyRefused(deps, message.connectionId, {
        message: line,
        error,
        attributes: { atsApplicationId: message.atsApplicationId, change: message.change },
      });
      if (message.change === 'returned') throw error;
      return { outcome: 'unchanged', reason: 'ats-unauthorized' };
    }
    const code = warnRefusedForGood(error, deps.logger, 'application changed: the ATS refused the read', message);
    return { outcome: 'unchanged', reason: code };
  }
}
