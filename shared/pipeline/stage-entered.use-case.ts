import { randomUUID } from 'node:crypto';
import type { Trigger } from '../config';
import type { ApplicationRef, ApplicationStanding, StageEnteredEvent } from '../ats/port';
import { boundStageEnteredEvent } from '../ats/bounds';
import { singleEmailAddress } from '../validation';
import type { StageEnteredMessage } from '../queue/messages.schema';
import { WORKER_TIMING } from './constants';
import { ensureInterviewForTrigger } from './ensure-interview.use-case';
import {
  ClaimHeldElsewhereError,
  errorCode,
  InvitationNotFoundError,
  isPermanent,
  LinkWithheldError,
  refusesKey,
  warnRefusedForGood,
} from './errors';
import { sayKeyRefused } from './key-refused';
import { expiryNote, formatInviteNote } from './report-note';
import { runSteps, type Step } from './steps';
import { waitForHolder } from './held-claim';
import { noteStart } from './note-start';
import { noteEnding, postNoteOnce, refusableStart, refusedForGood, refusedOrUncertain } from './post-note';
import {
  type ConnectionContext,
  heldTurn,
  type InviteDependencies,
  type PipelineDependencies,
  type RunOptions,
  type StepData,
  type StepWrite,
  type WorkContext,
} from './ports';
import {
  invitationMarker,
  type PriorExpiry,
  normaliseEmail,
  stepDone,
  type ApplicationKey,
  type ApplicationRecord,
  type StepName,
  type StepRecord,
} from './records';
import { matchTriggers, mayMatchTriggers } from './trigger-matching';
import { shareStageNames, withStageName } from './stage-names';
import { statusStep } from './status';
import {
  actOnStanding,
  showOwedOnRetry,
  type StandingPlace,
  standingForTrigger,
  standingNow,
  targetOf,
} from './application-changed.use-case';
import { tellInviteFailure, type FailurePlace, type InviteFailure } from './failure-note';
import { type ClaimedWork, endClaimedWork } from './claimed-work';
import { refusalReason } from '../errors';
import { InterviewServiceError } from '../interview-service/errors';
import { withDeadline } from '../aws/deadline';

type ConfirmedEvent = StageEnteredEvent & { atsJobId: string };

export type StageEnteredOutcome =
  | 'invited'
  | 'duplicate-delivery'
  | 'candidate-deleted'
  /** The ATS said the application left the process lately, and a read found the candidate still out: no invitation. */
  | 'candidate-left'
  | 'already-invited'
  | 'held-elsewhere'
  | 'no-matching-trigger'
  | 'stage-not-confirmed'
  | 'unknown-connection'
  | 'failed';

export interface StageEnteredResult {
  triggerId?: string;
  outcome: StageEnteredOutcome;
  reason?: string;
}

/**
 * A candidate entered a stage: for each trigger it starts, claim application × trigger, make sure the
 * job's interview exists, invite (e-mail and/or ATS note), recording each step so a retry resumes.
 */
export async function handleStageEntered(
  message: StageEnteredMessage,
  deps: InviteDependencies,
  options: RunOptions = {},
): Promise<StageEnteredResult[]> {
  const { signal } = options;
  const context = await deps.contextFor(message.connectionId);
  if (!context) return [{ outcome: 'unknown-connection' }];
  if (!mayMatchTriggers(context.connection, withStageName(message.event, context.ats.knownStageNames?.()))) {
    return [{ outcome: 'no-matching-trigger' }];
  }
  // Its turn on the ATS's rate limit, by what an invitation declares; the claims that follow make a duplicate harmless.
  await context.turns?.take('invitation', heldTurn(message), signal);
  return confirmAndInvite(message, context, deps, options).catch(async (error: unknown) => {
    // The connection's key refused, wherever it was met (key-refused.ts): the claims it met are handed back, and the
    // message comes back (at last to the DLQ, redriven once the key works), said as an ERROR once a day.
    if (refusesKey(error)) {
      const line = "stage entered: the ATS refuses the connection's key; the stage change comes back";
      const attributes = { atsApplicationId: message.event.atsApplicationId, deliveryId: message.event.deliveryId };
      await sayKeyRefused(deps, message.connectionId, { message: line, error, attributes });
    }
    throw error;
  });
}

/** The stage change confirmed with the ATS, then each trigger it starts: claimed, the interview ensured, invited. */
async function confirmAndInvite(
  message: StageEnteredMessage,
  context: ConnectionContext,
  deps: InviteDependencies,
  options: RunOptions,
): Promise<StageEnteredResult[]> {
  const { signal } = options;
  const { connectionId, event: entered } = message;
  const log = { connectionId, atsApplicationId: entered.atsApplicationId, deliveryId: entered.deliveryId };
  let event: ConfirmedEvent | undefined;
  let [begun, unbegun]: Invitations = [[], []];
  let standing: ApplicationStanding | undefined;
  try {
    const confirmation = await context.ats.confirmStageEntered(message.event, signal);
    if (!confirmation.confirmed) {
      const held = await deps.store.findApplicationsByAtsId(connectionId, entered.atsApplicationId);
      [begun, unbegun] = await withFoundAtService(message, claimedByDelivery(message, held), { context, deps, signal });
      const first = begun[0];
      if (!first) {
        deps.logger.warn('stage entered: the ATS does not confirm it', { ...log, reason: confirmation.reason });
        // Finished on an earlier try, the exit recorded: its "cancelled" shown again where that try's tag went up.
        const finished = held.filter((r) => r.state === 'left' && r.entryDeliveryId === entered.deliveryId);
        await showOwedOnRetry(standingPlace({ context, deps, options }), finished, options.receiveCount);
        await writeNotesCarriedUnbegun(unbegun, { message, context, deps, options });
        return [{ outcome: 'stage-not-confirmed', reason: confirmation.reason }];
      }
      // The candidate was e-mailed before they left the stage: where they stand is read first (a retry finds the
      // invitation still claimed), then the invitation is finished and their exit recorded.
      deps.logger.info('stage entered: no longer in the stage; the invitation begun is finished', log);
      standing = await context.ats.readStanding(targetOf(first), signal);
    } else {
      // The ATS's API may hand back what no webhook could carry (Lever): bounded the same way.
      event = boundStageEnteredEvent(confirmation.event);
    }
  } catch (error) {
    // The connection's key refused comes back (handleStageEntered); any other refusal for good ends the message.
    if (!isPermanent(error) || refusesKey(error)) throw error;
    deps.logger.error('stage entered: could not confirm with the ATS', { ...log, code: errorCode(error) });
    return [{ outcome: 'failed', reason: errorCode(error) }];
  }
  // The stage names read to confirm it serve the webhook function too (Lever), written once per environment.
  await shareStageNames(message.connectionId, context.ats, deps.store, Date.now()).catch((error: unknown) =>
    deps.logger.warn('stage entered: the stage names could not be shared', { ...log, code: errorCode(error) }),
  );
  // Only the invitations begun, where the ATS no longer confirms the stage: no trigger is started anew.
  if (event === undefined) return finishBegun({ message, context, deps, options }, [begun, unbegun], standing);
  const triggers = matchTriggers(context.connection, event);
  if (triggers.length === 0) return [{ outcome: 'no-matching-trigger' }];
  const results: StageEnteredResult[] = [];
  for (const trigger of triggers)
    results.push({
      triggerId: trigger.id,
      ...(await inviteForTrigger({ message, event, context, trigger, deps, options })),
    });
  return results;
}

/**
 * The invitations begun, where the ATS no longer confirms the stage: each finished with the job and the address its
 * claim recorded, nothing new sent. Each is tried before a failure goes on, so one finished has its exit recorded
 * whatever another's step does (the retry no longer finds it claimed); then the carried notes of those that began
 * nothing.
 */
async function finishBegun(
  delivery: Pick<TriggerRun, 'message' | 'context' | 'deps' | 'options'>,
  [begun, unbegun]: Invitations,
  standing: ApplicationStanding | undefined,
): Promise<StageEnteredResult[]> {
  const { message, context } = delivery;
  const results: StageEnteredResult[] = [];
  let failure: { error: unknown } | undefined;
  for (const record of begun) {
    const trigger = context.connection.triggers.find((t) => t.id === record.triggerId);
    if (!trigger) continue;
    const candidate = { ...message.event.candidate, email: claimedAddress(message, record) };
    const event = { ...message.event, atsJobId: record.atsJobId, candidate };
    try {
      const finished = await inviteForTrigger({ ...delivery, event, trigger, finishing: true });
      results.push({ triggerId: trigger.id, ...finished });
    } catch (error) {
      failure ??= { error };
    }
  }
  // Exits, then the carried notes, even where every invitation begun belongs to a trigger since removed.
  await afterFinishing(delivery, begun, unbegun, standing);
  if (failure) throw failure.error;
  return results.length ? results : [{ outcome: 'no-matching-trigger' }];
}

/**
 * The address an invitation began with: the claim's, recorded normalised, as the webhook wrote it where it is the same
 * mailbox (what the service was sent, for a look-up by keyword). A webhook may carry none (Lever's) or another.
 */
function claimedAddress(message: StageEnteredMessage, record: ApplicationRecord): string | undefined {
  const sent = message.event.candidate.email;
  if (record.candidateEmail === undefined) return sent;
  return sent !== undefined && normaliseEmail(sent) === record.candidateEmail ? sent : record.candidateEmail;
}

/** Invitations e-mailed, and the others. */
type Invitations = [ApplicationRecord[], ApplicationRecord[]];

/**
 * The invitations this delivery claimed and has not finished (still `claimed`), those e-mailed (see `emailed`) first,
 * then the others. A message that comes back for its next step after the candidate left the stage (a recruiter's quick
 * rejection) finishes the e-mailed ones rather than leaving them claimed, with no note, no status and no exit an ATS
 * webhook could record. One not yet e-mailed ends as before: nothing more reaches a candidate the ATS no longer shows
 * in the stage (only the expiry note it carried is written).
 */
function claimedByDelivery(message: StageEnteredMessage, held: ApplicationRecord[]): Invitations {
  const claimed = held.filter((r) => r.state === 'claimed' && r.entryDeliveryId === message.event.deliveryId);
  return [claimed.filter(emailed), claimed.filter((r) => !emailed(r))];
}

/**
 * The service invitations begun with their e-mail asked for and not recorded done (their worker stopped in between),
 * where the ATS no longer confirms the stage: the service is asked whether it has each. One it has may have e-mailed
 * the candidate and is finished as one recorded done; one it has not never reached it, and is left as the others.
 */
async function withFoundAtService(
  message: StageEnteredMessage,
  [begun, unbegun]: Invitations,
  { context, deps, signal }: { context: ConnectionContext; deps: InviteDependencies; signal?: AbortSignal | undefined },
): Promise<Invitations> {
  const found: ApplicationRecord[] = [];
  const others: ApplicationRecord[] = [];
  for (const record of unbegun) {
    const email = claimedAddress(message, record);
    const interviewId = serviceEmailBegun(record) ? record.interviewId : undefined;
    const asked =
      interviewId && email
        ? await context.interviews.findInvitation(interviewId, email, { signal }).catch((error: unknown) => {
            // Refused for good: not known to have reached the service; left as the others, nothing sent.
            warnRefusedForGood(
              error,
              deps.logger,
              'stage entered: the service refused the look for an invitation',
              record,
            );
            return undefined;
          })
        : undefined;
    (asked ? found : others).push(record);
  }
  return [[...begun, ...found], others];
}

/** The service invitation's record where the service was asked to e-mail it. */
const SERVICE_EMAILED = 'e-mailed by the service';

/**
 * Whether the invitation's e-mail may have reached the candidate, as its record says (never the configuration as it is
 * now): the connector's begun, or the service's invitation done with its e-mail asked for (one only begun may never
 * have reached the service: finishing it could e-mail).
 */
const emailed = (record: ApplicationRecord): boolean =>
  record.steps.inviteEmail !== undefined || emailedByService(record);

const emailedByService = (record: ApplicationRecord): boolean =>
  stepDone(record.steps.serviceInvite) && record.steps.serviceInvite?.value === SERVICE_EMAILED;

/** A service invitation begun with its e-mail asked for, not recorded done: it may not have reached the service. */
const serviceEmailBegun = (record: ApplicationRecord): boolean =>
  !stepDone(record.steps.serviceInvite) &&
  record.steps.serviceInvite?.startedAt !== undefined &&
  record.steps.serviceInvite.value === SERVICE_EMAILED;

/**
 * The expiry notes this delivery's re-entries carried, where nothing of the new invitation began before the ATS stopped
 * confirming the stage (its worker stopped after the claim; the candidate left meanwhile): each written under the
 * claim, which is then handed back. Nothing reaches the candidate; the recruiter still reads that the earlier
 * invitation expired. An invitation already e-mailed (another trigger's, on the same delivery) writes its own as a
 * step when it is finished.
 */
async function writeNotesCarriedUnbegun(
  unbegun: ApplicationRecord[],
  delivery: Pick<TriggerRun, 'message' | 'context' | 'deps' | 'options'>,
): Promise<void> {
  const { message, context, deps } = delivery;
  for (const record of unbegun) {
    const trigger = context.connection.triggers.find((t) => t.id === record.triggerId);
    const owed = record.priorExpiry !== undefined && !stepDone(record.steps.priorExpiryNote);
    if (!trigger || !owed) continue;
    // A live holder writes the note itself, as its invitation's step; this message comes back after its lease in case
    // it stops (claimed again only once free, so no holder can have failed the invitation meanwhile).
    const heldFor = (record.leaseUntil ?? 0) - (deps.now ?? Date.now)();
    if (heldFor > 0)
      throw new ClaimHeldElsewhereError(`the expiry note application ${record.atsApplicationId} carries`, heldFor);
    const event = { ...message.event, atsJobId: record.atsJobId };
    const run: TriggerRun = { ...delivery, event, trigger };
    const claimed = await claimInvite(run);
    if (!('record' in claimed)) continue;
    try {
      await writeCarriedExpiryNote(run, claimed);
    } catch (error) {
      await endClaimedWork(claimed, error, deps, () => undefined);
      continue;
    }
    await deps.store.releaseClaim(claimed.key, claimed.owner, claimed.cleanStop);
    deps.logger.info(
      'stage entered: the expiry note carried is written; the new invitation was not begun',
      claimed.log,
    );
  }
}

/**
 * Once the invitations begun are finished, where the ATS no longer confirms the stage: the exit the standing read
 * before finishing says, recorded on each; then the expiry notes this delivery's re-entries that began nothing
 * carried (last: one whose claim is held elsewhere sends the message back, never holding up a candidate e-mailed).
 */
async function afterFinishing(
  delivery: Pick<TriggerRun, 'message' | 'context' | 'deps' | 'options'>,
  begun: ApplicationRecord[],
  unbegun: ApplicationRecord[],
  standing: ApplicationStanding | undefined,
): Promise<void> {
  const { deps } = delivery;
  const place = standingPlace(delivery);
  for (const finished of begun) {
    const record = await deps.store.getApplication(finished);
    if (standing && record?.state === 'invited') await actOnStanding(place, record, standing);
  }
  await writeNotesCarriedUnbegun(unbegun, delivery);
}

type TriggerResult = Omit<StageEnteredResult, 'triggerId'>;

/** One trigger's invitation: the message, the confirmed event and what it runs with. */
interface TriggerRun {
  message: StageEnteredMessage;
  event: ConfirmedEvent;
  context: ConnectionContext;
  trigger: Trigger;
  deps: InviteDependencies;
  options: RunOptions;
  /** The ATS no longer confirms the stage: an invitation e-mailed before is finished, and nothing new is sent. */
  finishing?: boolean;
}

/** The claim on application × trigger, with the record as claimed. */
interface ClaimedInvite extends ClaimedWork {
  record: ApplicationRecord;
  /** A fresh claim, or one taken over from a clean stop: nothing an earlier worker did can still land unseen. */
  startedClean: boolean;
}

/** How the candidate is invited: the service's own invitation, who e-mails, and the note. */
interface InviteChannels {
  recipient: string | undefined;
  serviceInvite: boolean;
  serviceEmails: boolean;
  sendEmail: boolean;
  postNote: boolean;
}

/** Claim, then invite; a step that throws ends the claimed work as every use case does (claimed-work.ts). */
async function inviteForTrigger(run: TriggerRun): Promise<TriggerResult> {
  const claimed = await claimInvite(run);
  if (!('record' in claimed)) return claimed;
  try {
    return await invite(run, claimed);
  } catch (error) {
    const ended = await endClaimedWork(claimed, error, run.deps, () =>
      afterLostLease(claimed.key, run.deps, claimed.log),
    );
    // The service refused for good: nothing reached the candidate, and the recruiter is told so in the ATS; or it had
    // e-mailed the invitation and refused its link only, which the recruiter is told instead. Not where the candidate
    // left and the invitation is only finished: the service may have e-mailed it before.
    if (ended.outcome !== 'failed' || run.finishing) return ended;
    const withheld = error instanceof LinkWithheldError;
    if (withheld || error instanceof InterviewServiceError)
      await tellInviteFailure(failurePlace(run, claimed.record), {
        cause: withheld ? 'link-withheld' : 'service-refused',
        code: errorCode(error),
        notSent: !withheld,
      });
    return ended;
  }
}

/** Where the run reads and shows where a candidate stands: its connection, what it runs with, its deadline. */
function standingPlace(run: Pick<TriggerRun, 'context' | 'deps' | 'options'>): StandingPlace {
  return { context: run.context, deps: run.deps, now: run.deps.now ?? Date.now, signal: run.options.signal };
}

/** Where an invitation's failure is told: the application as claimed, in the ATS it came from. */
function failurePlace(run: TriggerRun, record: ApplicationRecord): FailurePlace {
  return { ...standingPlace(run), record, target: entryTarget(run.event, record.atsApplicationId) };
}

/** The application as the stage change names it. */
const entryTarget = (event: ConfirmedEvent, atsApplicationId = event.atsApplicationId) => ({
  atsApplicationId,
  atsCandidateId: event.atsCandidateId,
  atsJobId: event.atsJobId,
  fromStageId: event.stage.id,
});

const candidateEmail = (event: ConfirmedEvent) =>
  event.candidate.email ? normaliseEmail(event.candidate.email) : undefined;

/** What the stage change claims application × trigger with. */
const claimInputOf = (run: TriggerRun, key: ApplicationKey, exitReadAt: number | undefined) => ({
  ...key,
  atsCandidateId: run.event.atsCandidateId,
  atsJobId: run.event.atsJobId,
  stageId: run.event.stage.id,
  candidateEmail: candidateEmail(run.event),
  mayReinvite: run.trigger.reinvite !== 'never',
  enteredAt: run.message.receivedAt,
  exitReadAt,
});

/** The claim on application × trigger, or why there is nothing to do (a duplicate, another worker's claim...). */
async function claimInvite(run: TriggerRun): Promise<ClaimedInvite | TriggerResult> {
  const { event, context, trigger, deps } = run;
  const leaseMs = run.options.leaseMs ?? WORKER_TIMING.applicationLeaseMs;
  const key: ApplicationKey = {
    connectionId: context.connection.id,
    atsApplicationId: event.atsApplicationId,
    triggerId: trigger.id,
  };
  const owner = (deps.newOwner ?? randomUUID)();
  const delivery = { source: `${context.connection.ats}:${key.connectionId}`, deliveryId: event.deliveryId };
  const claimOnce = (exitReadAt?: number) =>
    deps.store.claimApplication({ ...delivery, enqueueId: run.message.enqueueId }, claimInputOf(run, key, exitReadAt), {
      owner,
      now: (deps.now ?? Date.now)(),
      durationMs: leaseMs,
    });
  let claim = await claimOnce();
  // The ATS said lately that this application left (a rejection before this delivery was handled: a delivery late,
  // retried by the ATS, or waiting its turn): where the candidate stands is read, and they are invited only if in.
  if (claim.kind === 'exit-seen') {
    const readAt = (deps.now ?? Date.now)();
    if (!(await stillInAfterExit(run))) return { outcome: 'candidate-left' };
    claim = await claimOnce(readAt);
  }
  // A candidate who left is in the stage again: back in the process (an unreject), their invitation returns to where
  // it was, and one that had expired is invited again, as any re-entry after an expiry.
  // That read shows the status the record owes: not shown again below.
  const looked = claim.kind === 'already-invited' && claim.record.state === 'left' ? claim.record : undefined;
  if (looked && (await returnedToProcess(run, looked))) claim = await claimOnce();
  const log = { ...key, deliveryId: event.deliveryId };
  if (claim.kind === 'held-elsewhere') {
    const reader = { read: () => deps.store.getApplication(key), now: deps.now, sleep: deps.sleep };
    const finished = await waitForHolder(reader, (r) => r.state !== 'claimed', leaseMs);
    deps.logger.info('stage entered: another worker held the claim', { ...log, finished });
    return { outcome: finished ? 'already-invited' : 'held-elsewhere' };
  }
  if (claim.kind !== 'claimed') {
    deps.logger.info('stage entered: nothing to do', { ...log, outcome: claim.kind });
    // Back in the process on an earlier try (an unreject): its "invited" shown again where that try's tag went up.
    if (claim.kind === 'already-invited' && !looked)
      await showOwedOnRetry(standingPlace(run), [claim.record], run.options.receiveCount);
    // An exit marked during the read holds the claim taken after it (`exitReadAt`): the candidate left meanwhile.
    return { outcome: claim.kind === 'exit-seen' ? 'candidate-left' : claim.kind };
  }
  const record = claim.record;
  const startedClean = !claim.resumed || record.cleanStop === `invite:${(record.inviteClaims ?? 0) - 1}`;
  const cleanStop = startedClean ? `invite:${record.inviteClaims ?? 0}` : undefined;
  // Its look at the ATS failing (the connection's key refused, no answer) hands the claim back as it found it.
  const handBack = async (error: unknown): Promise<never> => {
    await deps.store.releaseClaim(key, owner, cleanStop).catch(() => undefined);
    throw error;
  };
  if (claim.resumed && (await leftSinceClaimed(run, record).catch(handBack))) {
    await deps.store.releaseClaim(key, owner, `invite:${record.inviteClaims ?? 0}`);
    return { outcome: 'candidate-left' };
  }
  return { key, owner, log, record, startedClean, cleanStop, failedLine: 'stage entered: failed permanently' };
}

/**
 * A claim taken over (its worker stopped) or taken again (its invite failed) with nothing sent yet, where the ATS said
 * the application left after the claim was first made: that exit found the claim and could not end it. Whether the
 * candidate is out now, as the ATS says.
 */
async function leftSinceClaimed(run: TriggerRun, record: ApplicationRecord): Promise<boolean> {
  if (record.steps.inviteEmail || record.steps.serviceInvite) return false;
  const now = (run.deps.now ?? Date.now)();
  const seenAt = await run.deps.store.exitSeenAt(record.connectionId, record.atsApplicationId, now);
  if (seenAt === undefined || seenAt < record.createdAt) return false;
  return !(await stillInAfterExit(run));
}

/**
 * Whether a candidate whose application the ATS said left is in the process and in the trigger's stage now (unrejected
 * since, and moved into it), as the ATS says. An application the ATS refuses to read for good is not.
 */
async function stillInAfterExit(run: TriggerRun): Promise<boolean> {
  const { event, context, deps, options, trigger } = run;
  const log = { connectionId: context.connection.id, atsApplicationId: event.atsApplicationId };
  const read = await standingNow(context, entryTarget(event), options.signal).catch((error: unknown) => {
    warnRefusedForGood(error, deps.logger, 'stage entered: the ATS refused the read of an application that left', log);
    return undefined;
  });
  const standing = read && standingForTrigger(read, trigger, { atsJobId: event.atsJobId, stageId: event.stage.id });
  if (!standing?.active)
    deps.logger.info('stage entered: the candidate left the process before the invitation; nothing sent', {
      ...log,
      exit: standing?.exit,
    });
  return standing?.active === true;
}

/** Whether the candidate who left is back in the process, as the ATS says now: their exit is then undone. */
async function returnedToProcess(run: TriggerRun, record: ApplicationRecord): Promise<boolean> {
  const { context, deps, options } = run;
  const standing = await context.ats.readStanding(targetOf(record), options.signal).catch((error: unknown) => {
    // Refused for good (a merged or deleted application): not back; the stage change ends here, the message with it.
    warnRefusedForGood(
      error,
      deps.logger,
      'stage entered: the ATS refused the read of a candidate who had left',
      record,
    );
    return undefined;
  });
  if (!standing) return false;
  return (await actOnStanding(standingPlace(run), record, standing, true)) === 'returned';
}

/**
 * The channels this trigger invites through, for this candidate. Finishing an invitation the candidate left the stage
 * during, only the e-mail its record says began goes on (the connector's is never sent again; the service's is done),
 * whatever the configuration says now: nothing new reaches them, and the note says what was sent.
 */
function inviteChannels(run: TriggerRun, log: Record<string, unknown>, record: ApplicationRecord): InviteChannels {
  const { event, trigger } = run;
  // One mailbox or no e-mail: a list, a display name or a header smuggled into the address never reaches SES.
  const recipient = singleEmailAddress(event.candidate.email);
  if (trigger.invite.email && event.candidate.email !== undefined && recipient === undefined)
    run.deps.logger.warn('stage entered: the e-mail address is not one mailbox; the e-mail channel is skipped', log);
  const invites = run.context.connection.interviewService.invites;
  // Per-candidate: the service issues this candidate's own link and id; it needs an address to invite.
  const serviceInvite = invites.mode === 'per-candidate' && recipient !== undefined;
  const serviceEmails = serviceInvite && invites.emailedBy === 'service' && trigger.invite.email;
  // Never the connector's e-mail for an invitation the service was asked to e-mail (its record says so).
  const sendEmail = trigger.invite.email && recipient !== undefined && !serviceEmails && !emailedByService(record);
  const channels = { recipient, serviceInvite, serviceEmails, sendEmail, postNote: trigger.invite.atsNote };
  if (!run.finishing) return channels;
  const begun = { sendEmail: recipient !== undefined && record.steps.inviteEmail !== undefined };
  // A service invitation only begun is found again (the service has it: see withFoundAtService), never made anew. One
  // the connector's e-mail began too is finished by that e-mail, its service invitation left as it is.
  const serviceBegun = serviceEmailBegun(record) && !begun.sendEmail && recipient !== undefined;
  return {
    ...channels,
    ...begun,
    serviceInvite: serviceBegun,
    serviceEmails: serviceBegun || emailedByService(record),
  };
}

/**
 * The expiry note a re-entry carried, written on its own where the new invitation cannot go out (no channel): the
 * recruiter reads that the earlier invitation expired, then that this one failed. No `finish`: it is marked failed
 * next, not invited.
 */
async function writeCarriedExpiryNote(run: TriggerRun, claimed: ClaimedInvite): Promise<void> {
  const prior = claimed.record.priorExpiry;
  if (!prior) return;
  const { key, owner, record, log } = claimed;
  const place = failurePlace(run, record);
  const step = priorExpiryNoteStep(
    {
      ...{ context: place.context, target: place.target, record, deps: run.deps, log },
      ...{ signal: place.signal, now: place.now },
      recordStep: ({ step: written }) => run.deps.store.recordStep(key, { owner, step: written }),
    },
    prior,
  );
  await runSteps([step], `${key.connectionId}#${key.atsApplicationId}#${key.triggerId}`);
}

/** The job's interview ensured, then the invitation's steps run in order. */
async function invite(run: TriggerRun, claimed: ClaimedInvite): Promise<TriggerResult> {
  const { event, context, trigger, deps } = run;
  const { key, owner, log, record } = claimed;
  const channels = inviteChannels(run, log, record);
  if (!channels.sendEmail && !channels.postNote && !channels.serviceEmails) {
    const reason = 'the candidate has no usable e-mail address and the trigger posts no invite note';
    await writeCarriedExpiryNote(run, claimed);
    await deps.store.markApplicationFailed(key, owner, reason);
    deps.logger.warn('stage entered: no way to invite', log);
    await tellInviteFailure(failurePlace(run, record), { cause: 'no-email', notSent: true });
    return { outcome: 'failed', reason: 'no-invite-channel' };
  }
  const now = deps.now ?? Date.now;
  const { signal } = run.options;
  const interview = await jobInterview(run);
  const target: ApplicationRef = {
    atsApplicationId: key.atsApplicationId,
    atsCandidateId: event.atsCandidateId,
    atsJobId: event.atsJobId,
    fromStageId: event.stage.id,
  };
  const email = candidateEmail(event);
  const writes = inviteWrites(deps, key, owner, { interviewId: interview.interviewId, candidateEmail: email });
  const steps = inviteSteps({
    ...emailOutcomes(run, record, channels, writes),
    context,
    trigger,
    event,
    record,
    // A claim taken over from one that stopped cleanly resumes with nothing to look up.
    resumed: !claimed.startedClean,
    interview,
    recipient: channels.recipient,
    channels,
    finishing: run.finishing === true,
    target,
    deps,
    now,
    signal,
    log,
    recordStep: writes.record,
  });
  try {
    await runSteps(steps, `${key.connectionId}#${key.atsApplicationId}#${trigger.id}`);
  } finally {
    // A step that failed (a 429, a refusal, no answer, the deadline) does not take the carried mark with it.
    await writes.flush();
  }
  deps.logger.info('stage entered: invited', {
    ...log,
    interviewId: interview.interviewId,
    email: channels.sendEmail,
    serviceEmail: channels.serviceEmails,
    perCandidate: channels.serviceInvite,
    note: channels.postNote,
  });
  return { outcome: 'invited' };
}

/** What the invitation's steps read of its e-mail: whether it reached the candidate, and the note owed where not. */
function emailOutcomes(
  run: TriggerRun,
  record: ApplicationRecord,
  channels: InviteChannels,
  writes: ReturnType<typeof inviteWrites>,
): Pick<InviteStepsInput, 'emailReached' | 'emailFailure'> {
  // The service's e-mail as its invitation was begun: recorded where an earlier try began it, else as this run asks.
  const begun = record.steps.serviceInvite;
  const serviceEmailed =
    begun?.startedAt !== undefined || stepDone(begun) ? begun?.value === SERVICE_EMAILED : channels.serviceEmails;
  return {
    // An e-mail whose answer did not come (uncertain) is taken as sent, as it is everywhere: it is never sent again.
    emailReached: () => serviceEmailed || (channels.sendEmail && emailRefusal(writes, record) === undefined),
    // Only the connector's own e-mail may not go out and be told of; finishing, the one its record says began.
    emailFailure:
      (run.finishing ? channels.sendEmail : run.trigger.invite.email) && !channels.serviceEmails
        ? (alone) => emailFailureStep(run, record, () => emailFailureOf(channels, writes, record), { writes, alone })
        : undefined,
  };
}

/** How long the flush of a carried mark may take: within the margin the worker keeps before its timeout. */
const FLUSH_WINDOW_MS = 1_000;

/**
 * The invitation's writes to its application record. A step done and not last may be carried (`carry`): recorded by
 * the run's next write instead of one of its own (the e-mail's done mark by the note's), one write fewer an
 * invitation. A later step that fails has it written before the failure goes on (`flush`); only a crash in between
 * leaves it started and not done, as a crash before its own write would: the e-mail is recorded uncertain on resume
 * and never sent again.
 */
function inviteWrites(
  deps: PipelineDependencies,
  key: ApplicationKey,
  owner: string,
  fixed: StepData,
): { record: InviteStepsInput['recordStep']; flush: () => Promise<void>; emailRefused: () => string | undefined } {
  let carried: { name: StepName; record: StepRecord } | undefined;
  let refused: string | undefined;
  const record: InviteStepsInput['recordStep'] = async ({ step, data, last, carry }) => {
    if (step?.name === 'inviteEmail' && step.record?.outcome === 'refused') refused = step.record.value;
    if (carry && !last && step?.record) {
      carried = { name: step.name, record: step.record };
      return;
    }
    const before = carried;
    carried = undefined;
    try {
      await deps.store.recordStep(key, {
        owner,
        step,
        ...(before ? { before } : {}),
        data: { ...fixed, ...data },
        ...(last ? { finish: 'invited' } : {}),
      });
    } catch (error) {
      // Not written (throttled, no answer): still carried, for the flush. A lost lease is another worker's now.
      if (errorCode(error) !== 'lease-lost') carried ??= before;
      throw error;
    }
  };
  // Its own short window: the worker's deadline, when it is what ended the run, has fired already.
  const flush = () =>
    carried
      ? withDeadline(AbortSignal.timeout(FLUSH_WINDOW_MS), () => record({ last: false })).catch((error: unknown) =>
          deps.logger.warn('stage entered: the sent e-mail could not be recorded; it will read as uncertain', {
            ...key,
            code: errorCode(error),
          }),
        )
      : Promise.resolve();
  return { record, flush, emailRefused: () => refused };
}

/**
 * The note saying why the invitation e-mail did not go out (the link reached the ATS in its note, not the candidate),
 * as a step of the invitation, under its claim: a post whose answer did not come, or the connection's key refused,
 * sends the message back, and the claim's next holder looks for the note before posting it (failure-note.ts). Nothing
 * to say where the e-mail went out.
 */
function emailFailureStep(
  run: TriggerRun,
  record: ApplicationRecord,
  failure: () => ReturnType<typeof emailFailureOf>,
  { writes, alone }: { writes: { record: InviteStepsInput['recordStep'] }; alone: boolean },
): Step<unknown> {
  return {
    name: 'failure-note-posted',
    // Read when its turn comes, as the e-mail step before it says whether SES refused.
    get done() {
      return !alone && failure() === undefined;
    },
    started: false,
    perform: async () => {
      const owed = failure();
      if (owed) await tellInviteFailure(failurePlace(run, record), { ...owed, notSent: false });
      return undefined;
    },
    recordDone: (_result, _outcome, last) => (last ? writes.record({ last }) : Promise.resolve()),
  };
}

/** SES's refusal of the invitation e-mail, on this try or recorded by an earlier one. */
function emailRefusal(writes: { emailRefused: () => string | undefined }, record: ApplicationRecord) {
  const earlier = record.steps.inviteEmail;
  return writes.emailRefused() ?? (earlier?.outcome === 'refused' ? (earlier.value ?? 'refused') : undefined);
}

/** Why the connector's invitation e-mail did not go out: no usable address, or SES refused it. */
function emailFailureOf(
  channels: InviteChannels,
  writes: { emailRefused: () => string | undefined },
  record: ApplicationRecord,
): { cause: InviteFailure; code?: string | undefined } | undefined {
  if (!channels.recipient) return { cause: 'no-email' };
  const refused = emailRefusal(writes, record);
  return refused ? { cause: 'email-refused', code: refused } : undefined;
}

/** The job's interview for this trigger, created once (ensure-interview.use-case.ts). */
function jobInterview(run: TriggerRun): Promise<{ interviewId: string; inviteUrl: string }> {
  const { deps, options } = run;
  return ensureInterviewForTrigger(run.context, run.trigger, run.event, {
    store: deps.store,
    logger: deps.logger,
    now: deps.now ?? Date.now,
    newOwner: deps.newOwner ?? randomUUID,
    signal: options.signal,
    leaseMs: options.leaseMs ?? WORKER_TIMING.applicationLeaseMs,
  });
}

/**
 * The claim passed to another worker mid-invite. When that worker is the write-back, the candidate has already
 * taken the interview from the link this one sent: the invitation is done, and retrying the message would only
 * come back to find it so. Any other holder finishes the invite itself; this message is retried.
 */
async function afterLostLease(
  key: ApplicationKey,
  deps: PipelineDependencies,
  log: Record<string, unknown>,
): Promise<Omit<StageEnteredResult, 'triggerId'>> {
  const record = await deps.store.getApplication(key);
  if (record && record.reportId !== undefined && record.state !== 'claimed') {
    deps.logger.info('stage entered: the candidate finished the interview before the invite was recorded', {
      ...log,
      state: record.state,
    });
    return { outcome: 'invited' };
  }
  return { outcome: 'held-elsewhere' };
}

interface InviteStepsInput extends WorkContext {
  /** Whether an e-mail took the link to the candidate (the connector's, not refused; or the service's). */
  emailReached: () => boolean;
  /**
   * The note saying why the e-mail did not go out, where it may not: after the invite note, before the status.
   * `alone`: nothing else can end the invitation, so the step runs (and ends it) whether or not the note is owed.
   */
  emailFailure?: ((alone: boolean) => Step<unknown>) | undefined;
  context: ConnectionContext;
  trigger: Trigger;
  event: ConfirmedEvent;
  record: ApplicationRecord;
  resumed: boolean;
  interview: { interviewId: string; inviteUrl: string };
  recipient: string | undefined;
  channels: InviteChannels;
  /** The candidate left the stage: a step that would reach them anew is never performed (see `TriggerRun`). */
  finishing: boolean;
  target: ApplicationRef;
  recordStep: (write: { step?: StepWrite['step']; data?: StepData; last: boolean; carry?: boolean }) => Promise<void>;
}

/** The invitation as steps, in order: the service's own invitation, the e-mail, the note with the link. */
function inviteSteps(input: InviteStepsInput): Step<unknown>[] {
  // The link every later step sends: the candidate's own once the service issued one.
  const link = { url: input.record.candidateInviteUrl ?? input.interview.inviteUrl };
  const { channels, recipient } = input;
  const status = statusStep(
    {
      ...{ context: input.context, key: input.record, target: input.target, deps: input.deps },
      ...{ signal: input.signal, round: input.record.reinvitations ?? 0 },
    },
    'invited',
    input.record,
    (last) => input.recordStep({ last }),
  );
  const notes = [
    ...(input.record.priorExpiry ? [priorExpiryNoteStep(input, input.record.priorExpiry)] : []),
    ...(channels.postNote ? [inviteNoteStep(input, link)] : []),
  ];
  // The e-mail's failure note where one may be owed, skipped where it is not. With no status after it, the note before
  // it ends the invitation unless the failure note is owed; with no such note to run (none, or done on an earlier try),
  // it ends the invitation itself, owed or not (its write carries the e-mail's).
  const previous = status.length === 0 ? notes.at(-1) : undefined;
  const failure = input.emailFailure?.(status.length === 0 && (previous === undefined || previous.done));
  if (failure && previous && !previous.done)
    notes.splice(-1, 1, { ...previous, recordDone: endsUnless(previous, failure) });
  return [
    ...(channels.serviceInvite && recipient ? [serviceInviteStep(input, recipient, link)] : []),
    ...(channels.sendEmail && recipient ? [inviteEmailStep(input, recipient, link)] : []),
    ...notes,
    ...(failure ? [failure] : []),
    ...status,
  ];
}

/** The step's record, ending the invitation where the step after it (skipped when done) is not to run. */
const endsUnless =
  (step: Step<unknown>, next: Step<unknown>): Step<unknown>['recordDone'] =>
  (result, outcome, last, cause) =>
    step.recordDone(result, outcome, last || next.done, cause);

/**
 * The candidate's own invitation on the service (`POST /interview/invite`). The call is not idempotent, so its
 * start is recorded first; a worker that finds it started looks the invitation up by interview and e-mail
 * (`GET /interview/invites?keyword=`) before it invites again.
 */
function serviceInviteStep(input: InviteStepsInput, recipient: string, link: { url: string }): Step<Invited> {
  const { context, event, interview, record, signal, now, recordStep } = input;
  const emails = input.channels.serviceEmails;
  const intent = (asked: boolean) => (asked ? { value: SERVICE_EMAILED } : {});
  const invite = async (extra: { candidateId?: string; jobApplicationId?: string; disableEmail: boolean }) => {
    const invitation = await context.interviews.inviteCandidate(
      {
        interviewId: interview.interviewId,
        name: event.candidate.name || recipient,
        email: recipient,
        candidateId: extra.candidateId,
        jobApplicationId: extra.jobApplicationId,
        disableEmailNotification: extra.disableEmail,
      },
      { signal },
    );
    return { candidateId: invitation.candidate_id, inviteUrl: invitation.invite_url };
  };
  return {
    name: 'service-invited',
    done: stepDone(record.steps.serviceInvite),
    started: record.steps.serviceInvite?.startedAt !== undefined,
    // Begun with what the service is asked for (its e-mail or not), so a worker that finds it later reads what was.
    recordStart: () =>
      recordStep({ step: { name: 'serviceInvite', record: { startedAt: now(), ...intent(emails) } }, last: false }),
    lookup: async () => {
      const found = await context.interviews.findInvitation(interview.interviewId, recipient, { signal });
      // The invitations list carries no link: asked again for that candidate (`candidate_id`), the service
      // answers the same invitation, and sends no e-mail when told not to (the first call sent it, if any).
      return found ? linkOfFound(invite({ candidateId: found.candidate_id, disableEmail: true }), record) : undefined;
    },
    // A new invitation after an expiry or an exit sends the candidate's own invitation again (the same link).
    perform: () => {
      // Finishing, the look before found it; gone since, it is not made anew for a candidate who left the stage.
      if (input.finishing) throw new InvitationNotFoundError(interview.interviewId);
      return invite({
        candidateId: record.serviceCandidateId,
        jobApplicationId: event.atsApplicationId,
        disableEmail: !emails,
      });
    },
    async recordDone(invited, outcome, last) {
      if (!invited) return;
      link.url = invited.inviteUrl;
      // Found, it is the invitation an earlier worker began: its e-mail is what that start recorded.
      const asked = outcome === 'found' ? record.steps.serviceInvite?.value === SERVICE_EMAILED : emails;
      const { value: _begun, ...started } = record.steps.serviceInvite ?? {};
      await recordStep({
        step: { name: 'serviceInvite', record: { ...started, doneAt: now(), ...intent(asked) } },
        data: { serviceCandidateId: invited.candidateId, candidateInviteUrl: invited.inviteUrl },
        last,
      });
    },
  };
}

/**
 * The link of an invitation found again at the service. Refused for good where the service was asked to e-mail it, the
 * candidate has the invitation and only the link is missing: a LinkWithheldError, which the recruiter is told as such.
 */
function linkOfFound(asked: Promise<Invited>, record: ApplicationRecord): Promise<Invited> {
  return asked.catch((error: unknown) => {
    // The first invitation only: a later one's start may find the invitation of the one before, e-mailed then.
    const emailed = record.steps.serviceInvite?.value === SERVICE_EMAILED && !record.reinvitations;
    throw emailed && isPermanent(error) && error instanceof InterviewServiceError
      ? new LinkWithheldError(error)
      : error;
  });
}

/** The invitation e-mail through SES. SES cannot be asked whether it sent: a started one is uncertain on resume. */
function inviteEmailStep(input: InviteStepsInput, recipient: string, link: { url: string }): Step<unknown> {
  const { trigger, event, record, deps, now, recordStep, signal } = input;
  // When the e-mail was started: by an earlier worker, or by this one (kept when it ends uncertain).
  let startedAt = record.steps.inviteEmail?.startedAt;
  return {
    name: 'invite-emailed',
    done: stepDone(record.steps.inviteEmail),
    started: record.steps.inviteEmail?.startedAt !== undefined,
    signal,
    recordStart: () => {
      startedAt = now();
      return recordStep({ step: { name: 'inviteEmail', record: { startedAt } }, last: false });
    },
    perform: () =>
      deps.mailer
        .sendInvite({
          to: recipient,
          candidateName: event.candidate.name ?? '',
          jobName: event.jobName ?? `Job ${event.atsJobId}`,
          inviteUrl: link.url,
          language: trigger.interview.language,
          from: trigger.invite.from,
        })
        .catch((error: unknown) => {
          // A definite refusal (an unverified sender, an SES sandbox recipient) fails this channel, not the
          // invitation: the note with the same link still goes to the ATS. An answer that did not come is recorded
          // uncertain and never sent again, one shown unsent (throttling) is tried again (steps.ts).
          const refused = refusalReason(error);
          if (refused) return { refused };
          throw error;
        }),
    clearStart: () => recordStep({ step: { name: 'inviteEmail', record: undefined }, last: false }),
    async recordDone(result, outcome, last, cause) {
      const refused = (result as { refused?: string } | undefined)?.refused;
      if (refused) {
        deps.logger.error('stage entered: SES refused the invite e-mail; the ATS note carries the link', {
          ...input.log,
          interviewId: input.interview.interviewId,
          code: refused,
        });
        const done = { doneAt: now(), outcome: 'refused' as const, value: refused };
        await recordStep({ step: { name: 'inviteEmail', record: done }, last });
        return;
      }
      const uncertain = outcome === 'uncertain';
      if (uncertain)
        deps.logger.warn('stage entered: the invite e-mail may have gone out; not sent again', {
          ...input.log,
          interviewId: input.interview.interviewId,
          ...(cause === undefined ? {} : { reason: cause }),
        });
      const done = uncertain ? { startedAt, doneAt: startedAt ?? now(), outcome: 'uncertain' as const } : {};
      // Sent: carried by the next step's write (`inviteWrites`); an uncertain one is recorded at once.
      await recordStep({ step: { name: 'inviteEmail', record: { doneAt: now(), ...done } }, last, carry: !uncertain });
    },
  };
}

/** The note with the link; after a takeover the earlier worker may have posted it: looked up by its marker. */
function inviteNoteStep(input: InviteStepsInput, link: { url: string }): Step<unknown> {
  const { context, target, record, signal, now, recordStep, channels } = input;
  const marker = invitationMarker(`ai-interview-invite:${target.atsApplicationId}:${input.trigger.id}`, record);
  const start = (startedAt: number | undefined) =>
    recordStep({ step: { name: 'inviteNote', record: startedAt ? { startedAt } : undefined }, last: false });
  const earlier = noteStart(
    context.ats,
    { target, marker, signal },
    { resumed: input.resumed, startedAt: record.steps.inviteNote?.startedAt },
    { start: () => start(now()), clear: () => start(undefined) },
  );
  // Refused for good where an e-mail took the link to the candidate: the note ends refused and the invitation goes on
  // (reminders, expiry, status). Where the note was the link's only way, the refusal fails the invitation.
  const refusedWhenReached = (error: unknown) => {
    if (!input.emailReached()) throw error;
    return refusedOrUncertain(error);
  };
  return {
    name: 'invite-note-posted',
    done: stepDone(record.steps.inviteNote),
    ...refusableStart(earlier, refusedWhenReached),
    perform: () =>
      postNoteOnce(
        context.ats,
        target,
        { body: formatInviteNote(link.url, channels.sendEmail || channels.serviceEmails), marker },
        signal,
      ).catch(refusedWhenReached),
    recordDone: (result, outcome, last) => {
      const ended = noteEnding(result, outcome);
      if (ended.outcome === 'refused')
        input.deps.logger.error('stage entered: the ATS refused the invite note; the e-mailed invitation goes on', {
          ...input.log,
          code: ended.value,
        });
      const skipped = (result as { skipped?: string } | undefined)?.skipped;
      return recordStep({
        step: { name: 'inviteNote', record: { doneAt: now(), ...(skipped ? { value: skipped } : {}), ...ended } },
        last,
      });
    },
  };
}

/**
 * The note of the invitation this one replaced, whose expiry was recorded and its note not written before the candidate
 * re-entered (the re-entry carried it): after the candidate is contacted, before the new invitation's note (or, where
 * the new invitation cannot go out, before it is marked failed: writeCarriedExpiryNote), under that invitation's
 * marker, looked up before it is posted. The ATS refusing the look-up or the note for good ends this note, not the
 * invitation: a note that cannot be looked up is not posted (it may be there already).
 */
function priorExpiryNoteStep(
  input: Pick<InviteStepsInput, 'context' | 'target' | 'record' | 'signal' | 'now' | 'recordStep' | 'deps' | 'log'>,
  prior: PriorExpiry,
): Step<unknown> {
  const { context, target, record, signal, now, recordStep } = input;
  const { body, marker } = expiryNote({ ...record, reinvitations: prior.round }, prior.expiredAt);
  const step = record.steps.priorExpiryNote;
  const start = (startedAt: number | undefined) =>
    recordStep({ step: { name: 'priorExpiryNote', record: startedAt ? { startedAt } : undefined }, last: false });
  const earlier = noteStart(
    context.ats,
    { target, marker, signal },
    { resumed: true, startedAt: step?.startedAt },
    { start: () => start(now()), clear: () => start(undefined) },
  );
  return {
    name: 'expiry-note-posted',
    done: stepDone(step),
    ...refusableStart(earlier),
    perform: () => postNoteOnce(context.ats, target, { body, marker }, signal).catch(refusedForGood),
    recordDone: (result, outcome, last) => {
      const ended = noteEnding(result, outcome);
      if (ended.outcome === 'refused')
        input.deps.logger.warn('stage entered: the ATS refused the expiry note carried', input.log);
      return recordStep({ step: { name: 'priorExpiryNote', record: { doneAt: now(), ...ended } }, last });
    },
  };
}

type Invited = { candidateId: string; inviteUrl: string };
