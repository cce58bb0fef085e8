import { randomUUID } from 'node:crypto';
import type { Trigger } from '../config';
import type { ApplicationRef, StageEnteredEvent } from '../ats/port';
import type { StageEnteredMessage } from '../queue/messages.schema';
import { WORKER_TIMING } from './constants';
import { ensureInterviewForTrigger } from './ensure-interview.use-case';
import { errorCode, isPermanent } from './errors';
import { formatInviteNote } from './report-note';
import type { ConnectionContext, PipelineDependencies } from './ports';
import { normaliseEmail, type ApplicationKey } from './records';
import { matchTriggers, mayMatchTriggers } from './trigger-matching';

type ConfirmedEvent = StageEnteredEvent & { atsJobId: string };

export type StageEnteredOutcome =
  | 'invited'
  | 'duplicate-delivery'
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
export async function handleStageEntered(message: StageEnteredMessage, deps: PipelineDependencies, signal?: AbortSignal): Promise<StageEnteredResult[]> {
  const context = await deps.contextFor(message.connectionId);
  if (!context) return [{ outcome: 'unknown-connection' }];
  if (!mayMatchTriggers(context.connection, message.event)) return [{ outcome: 'no-matching-trigger' }];
  const log = { connectionId: message.connectionId, atsApplicationId: message.event.atsApplicationId, deliveryId: message.event.deliveryId };
  let event: ConfirmedEvent;
  try {
    const confirmation = await context.ats.confirmStageEntered(message.event, signal);
    if (!confirmation.confirmed) {
      deps.logger.warn('stage entered: the ATS does not confirm it', { ...log, reason: confirmation.reason });
      return [{ outcome: 'stage-not-confirmed', reason: confirmation.reason }];
    }
    event = confirmation.event;
  } catch (error) {
    if (!isPermanent(error)) throw error;
    deps.logger.error('stage entered: could not confirm with the ATS', { ...log, code: errorCode(error) });
    return [{ outcome: 'failed', reason: errorCode(error) }];
  }
  const triggers = matchTriggers(context.connection, event);
  if (triggers.length === 0) return [{ outcome: 'no-matching-trigger' }];
  const results: StageEnteredResult[] = [];
  for (const trigger of triggers) results.push({ triggerId: trigger.id, ...(await inviteForTrigger(message, event, context, trigger, deps, signal)) });
  return results;
}

async function inviteForTrigger(message: StageEnteredMessage, event: ConfirmedEvent, context: ConnectionContext, trigger: Trigger, deps: PipelineDependencies, signal?: AbortSignal): Promise<Omit<StageEnteredResult, 'triggerId'>> {
  const now = deps.now ?? Date.now;
  const newOwner = deps.newOwner ?? randomUUID;
  const email = event.candidate.email ? normaliseEmail(event.candidate.email) : undefined;
  const key: ApplicationKey = { connectionId: context.connection.id, atsApplicationId: event.atsApplicationId, triggerId: trigger.id };
  const owner = newOwner();
  const claim = await deps.store.claimApplication(
    { source: `${context.connection.ats}:${context.connection.id}`, deliveryId: event.deliveryId, enqueueId: message.enqueueId },
    { ...key, atsCandidateId: event.atsCandidateId, atsJobId: event.atsJobId, stageId: event.stage.id, candidateEmail: email },
    { owner, now: now(), durationMs: WORKER_TIMING.applicationLeaseMs },
  );
  const log = { connectionId: key.connectionId, atsApplicationId: key.atsApplicationId, triggerId: trigger.id, deliveryId: event.deliveryId };
  if (claim.kind !== 'claimed') {
    deps.logger.info('stage entered: nothing to do', { ...log, outcome: claim.kind });
    return { outcome: claim.kind };
  }
  const record = claim.record;
  const sendEmail = trigger.invite.email && email !== undefined;
  const postNote = trigger.invite.atsNote;
  try {
    if (!sendEmail && !postNote) {
      await deps.store.markApplicationFailed(key, owner, 'the candidate has no e-mail address and the trigger posts no invite note');
      deps.logger.warn('stage entered: no way to invite', log);
      return { outcome: 'failed', reason: 'no-invite-channel' };
    }
    const interview = await ensureInterviewForTrigger(context, trigger, event, { store: deps.store, logger: deps.logger, now, newOwner, signal });
    const target: ApplicationRef = { atsApplicationId: key.atsApplicationId, atsCandidateId: event.atsCandidateId, atsJobId: event.atsJobId, fromStageId: event.stage.id };
    if (sendEmail && !record.inviteEmailAt) {
      await deps.mailer.sendInvite({ to: email, candidateName: event.candidate.name ?? '', jobName: event.jobName ?? `Job ${event.atsJobId}`, inviteUrl: interview.inviteUrl, language: trigger.interview.language, from: trigger.invite.from });
      await deps.store.recordInviteStep(key, owner, { interviewId: interview.interviewId, candidateEmail: email, inviteEmailAt: now(), done: !postNote || record.inviteNoteAt !== undefined });
    }
    if (postNote && !record.inviteNoteAt) {
      const marker = `ai-interview-invite:${key.atsApplicationId}:${trigger.id}`;
      // After a takeover the earlier worker may have posted the note and stopped before recording it.
      const existing = claim.resumed ? await context.ats.findNote(target, marker, signal) : undefined;
      if (!existing) await context.ats.postNote(target, { body: formatInviteNote(interview.inviteUrl, sendEmail), marker }, signal);
      await deps.store.recordInviteStep(key, owner, { interviewId: interview.interviewId, candidateEmail: email, inviteNoteAt: now(), done: true });
    }
    deps.logger.info('stage entered: invited', { ...log, interviewId: interview.interviewId, email: sendEmail, note: postNote });
    return { outcome: 'invited' };
  } catch (error) {
    if (errorCode(error) === 'lease-lost') return { outcome: 'held-elsewhere' };
    if (!isPermanent(error)) throw error;
    await deps.store.markApplicationFailed(key, owner, `${errorCode(error)}: ${(error as Error).message}`);
    deps.logger.error('stage entered: failed permanently', { ...log, code: errorCode(error) });
    return { outcome: 'failed', reason: errorCode(error) };
  }
}
