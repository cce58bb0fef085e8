import { randomUUID } from 'node:crypto';
import type { Trigger } from '../config';
import type { ApplicationRef, StageEnteredEvent } from '../ats/port';
import { boundStageEnteredEvent } from '../ats/bounds';
import { singleEmailAddress } from '../validation';
import type { StageEnteredMessage } from '../queue/messages.schema';
import { WORKER_TIMING } from './constants';
import { ensureInterviewForTrigger } from './ensure-interview.use-case';
import { errorCode, isPermanent } from './errors';
import { formatInviteNote } from './report-note';
import { runStep, type Step } from './steps';
import { waitForHolder } from './held-claim';
import { postNoteOnce } from './post-note';
import type { ConnectionContext, InviteDependencies, MappingStore, PipelineDependencies, RunOptions } from './ports';

type InviteStepRecord = Omit<Parameters<MappingStore['recordInviteStep']>[2], 'interviewId'>;
import { normaliseEmail, type ApplicationKey, type ApplicationRecord } from './records';
import { matchTriggers, mayMatchTriggers } from './trigger-matching';

type ConfirmedEvent = StageEnteredEvent & { atsJobId: string };

export type StageEnteredOutcome =
  | 'invited'
  | 'duplicate-delivery'
  | 'candidate-deleted'
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
  if (!mayMatchTriggers(context.connection, message.event)) return [{ outcome: 'no-matching-trigger' }];
  const log = {
    connectionId: message.connectionId,
    atsApplicationId: message.event.atsApplicationId,
    deliveryId: message.event.deliveryId,
  };
  let event: ConfirmedEvent;
  try {
    const confirmation = await context.ats.confirmStageEntered(message.event, signal);
    if (!confirmation.confirmed) {
      deps.logger.warn('stage entered: the ATS does not confirm it', { ...log, reason: confirmation.reason });
      return [{ outcome: 'stage-not-confirmed', reason: confirmation.reason }];
    }
    // The ATS's API may hand back what no webhook could carry (Lever): bounded the same way.
    event = boundStageEnteredEvent(confirmation.event);
  } catch (error) {
    if (!isPermanent(error)) throw error;
    deps.logger.error('stage entered: could not confirm with the ATS', { ...log, code: errorCode(error) });
    return [{ outcome: 'failed', reason: errorCode(error) }];
  }
  const triggers = matchTriggers(context.connection, event);
  if (triggers.length === 0) return [{ outcome: 'no-matching-trigger' }];
  const results: StageEnteredResult[] = [];
  for (const trigger of triggers)
    results.push({
      triggerId: trigger.id,
      ...(await inviteForTrigger(message, event, context, trigger, deps, options)),
    });
  return results;
}

async function inviteForTrigger(
  message: StageEnteredMessage,
  event: ConfirmedEvent,
  context: ConnectionContext,
  trigger: Trigger,
  deps: InviteDependencies,
  options: RunOptions,
): Promise<Omit<StageEnteredResult, 'triggerId'>> {
  const { signal } = options;
  const leaseMs = options.leaseMs ?? WORKER_TIMING.applicationLeaseMs;
  const now = deps.now ?? Date.now;
  const newOwner = deps.newOwner ?? randomUUID;
  const email = event.candidate.email ? normaliseEmail(event.candidate.email) : undefined;
  const key: ApplicationKey = {
    connectionId: context.connection.id,
    atsApplicationId: event.atsApplicationId,
    triggerId: trigger.id,
  };
  const owner = newOwner();
  const claim = await deps.store.claimApplication(
    {
      source: `${context.connection.ats}:${context.connection.id}`,
      deliveryId: event.deliveryId,
      enqueueId: message.enqueueId,
    },
    {
      ...key,
      atsCandidateId: event.atsCandidateId,
      atsJobId: event.atsJobId,
      stageId: event.stage.id,
      candidateEmail: email,
    },
    { owner, now: now(), durationMs: leaseMs },
  );
  const log = {
    connectionId: key.connectionId,
    atsApplicationId: key.atsApplicationId,
    triggerId: trigger.id,
    deliveryId: event.deliveryId,
  };
  if (claim.kind === 'held-elsewhere') {
    const finished = await waitForHolder(deps, key, (r) => r.state !== 'claimed', leaseMs);
    deps.logger.info('stage entered: another worker held the claim', { ...log, finished });
    return { outcome: finished ? 'already-invited' : 'held-elsewhere' };
  }
  if (claim.kind !== 'claimed') {
    deps.logger.info('stage entered: nothing to do', { ...log, outcome: claim.kind });
    return { outcome: claim.kind };
  }
  const record = claim.record;
  // One mailbox or no e-mail: a list, a display name or a header smuggled into the address never reaches SES.
  const recipient = singleEmailAddress(event.candidate.email);
  if (trigger.invite.email && event.candidate.email !== undefined && recipient === undefined)
    deps.logger.warn('stage entered: the e-mail address is not one mailbox; the e-mail channel is skipped', log);
  const invites = context.connection.interviewService.invites;
  // Per-candidate: the service issues this candidate's own link and id; it needs an address to invite.
  const perCandidate = invites.mode === 'per-candidate' && recipient !== undefined;
  const serviceEmails = perCandidate && invites.emailedBy === 'service' && trigger.invite.email;
  const sendEmail = trigger.invite.email && recipient !== undefined && !serviceEmails;
  const postNote = trigger.invite.atsNote;
  try {
    if (!sendEmail && !postNote && !serviceEmails) {
      await deps.store.markApplicationFailed(
        key,
        owner,
        'the candidate has no usable e-mail address and the trigger posts no invite note',
      );
      deps.logger.warn('stage entered: no way to invite', log);
      return { outcome: 'failed', reason: 'no-invite-channel' };
    }
    const interview = await ensureInterviewForTrigger(context, trigger, event, {
      store: deps.store,
      logger: deps.logger,
      now,
      newOwner,
      signal,
      leaseMs,
    });
    const appKey = `${key.connectionId}#${key.atsApplicationId}#${trigger.id}`;
    const target: ApplicationRef = {
      atsApplicationId: key.atsApplicationId,
      atsCandidateId: event.atsCandidateId,
      atsJobId: event.atsJobId,
      fromStageId: event.stage.id,
    };
    const record_ = (step: InviteStepRecord) =>
      deps.store.recordInviteStep(key, owner, { interviewId: interview.interviewId, candidateEmail: email, ...step });
    // The link every later step sends: the candidate's own where the service issued one.
    let inviteUrl = record.candidateInviteUrl ?? interview.inviteUrl;
    const steps: ((isLast: boolean) => Step<unknown>)[] = [];
    if (perCandidate)
      steps.push((isLast) =>
        serviceInviteStep({
          context,
          event,
          interview,
          record,
          recipient,
          serviceEmails,
          signal,
          now,
          isLast,
          record_,
          onLink: (url) => (inviteUrl = url),
        }),
      );
    if (sendEmail)
      steps.push(
        (isLast): Step<unknown> => ({
          name: 'invite-emailed',
          done: record.inviteEmailAt !== undefined,
          // SES cannot be asked whether it sent: a started, unrecorded e-mail is uncertain, never sent twice.
          started: record.inviteEmailStartedAt !== undefined,
          recordStart: () => record_({ inviteEmailStartedAt: now(), done: false }),
          perform: () =>
            deps.mailer.sendInvite({
              to: recipient,
              candidateName: event.candidate.name ?? '',
              jobName: event.jobName ?? `Job ${event.atsJobId}`,
              inviteUrl,
              language: trigger.interview.language,
              from: trigger.invite.from,
            }),
          clearStart: () => record_({ clearEmailStart: true, done: false }),
          recordDone: async (_result, outcome) => {
            if (outcome === 'uncertain')
              deps.logger.warn('stage entered: the invite e-mail may have gone out before a crash; not sent again', {
                ...log,
                interviewId: interview.interviewId,
              });
            await record_({
              inviteEmailAt: outcome === 'uncertain' ? (record.inviteEmailStartedAt ?? now()) : now(),
              ...(outcome === 'uncertain' ? { inviteEmailUncertain: true } : {}),
              done: isLast,
            });
          },
        }),
      );
    if (postNote) {
      const marker = `ai-interview-invite:${key.atsApplicationId}:${trigger.id}`;
      steps.push(
        (isLast): Step<unknown> => ({
          name: 'invite-note-posted',
          done: record.inviteNoteAt !== undefined,
          // After a takeover the earlier worker may have posted the note and stopped before recording it.
          started: claim.resumed,
          lookup: () => context.ats.findNote(target, marker, signal),
          perform: () =>
            postNoteOnce(
              context.ats,
              target,
              { body: formatInviteNote(inviteUrl, sendEmail || serviceEmails), marker },
              signal,
            ),
          recordDone: () => record_({ inviteNoteAt: now(), done: isLast }),
        }),
      );
    }
    for (const [index, build] of steps.entries()) await runStep(build(index === steps.length - 1), appKey);
    deps.logger.info('stage entered: invited', {
      ...log,
      interviewId: interview.interviewId,
      email: sendEmail,
      serviceEmail: serviceEmails,
      perCandidate,
      note: postNote,
    });
    return { outcome: 'invited' };
  } catch (error) {
    if (errorCode(error) === 'lease-lost') return afterLostLease(key, deps, log);
    if (!isPermanent(error)) throw error;
    await deps.store.markApplicationFailed(key, owner, `${errorCode(error)}: ${(error as Error).message}`);
    deps.logger.error('stage entered: failed permanently', { ...log, code: errorCode(error) });
    return { outcome: 'failed', reason: errorCode(error) };
  }
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

/**
 * The candidate's own invitation on the service (`POST /interview/invite`), a step like the others. The call is
 * not idempotent, so its start is recorded first; a worker that finds it started looks the invitation up by
 * interview and e-mail (`GET /interview/invites?keyword=`) before it invites again.
 */
function serviceInviteStep(input: {
  context: ConnectionContext;
  event: ConfirmedEvent;
  interview: { interviewId: string };
  record: ApplicationRecord;
  recipient: string;
  serviceEmails: boolean;
  signal: AbortSignal | undefined;
  now: () => number;
  isLast: boolean;
  record_: (step: InviteStepRecord) => Promise<void>;
  onLink: (url: string) => void;
}): Step<unknown> {
  const { context, event, interview, record, recipient, signal, now, record_ } = input;
  type Invited = { candidateId: string; inviteUrl: string };
  const done = async (invited: Invited) => {
    input.onLink(invited.inviteUrl);
    await record_({ serviceInvitation: { ...invited, at: now() }, done: input.isLast });
  };
  return {
    name: 'service-invited',
    done: record.serviceCandidateId !== undefined,
    started: record.serviceInviteStartedAt !== undefined,
    recordStart: () => record_({ serviceInviteStartedAt: now(), done: false }),
    lookup: async (): Promise<Invited | undefined> => {
      const found = await context.interviews.findInvitation(interview.interviewId, recipient, { signal });
      if (!found) return undefined;
      // The invitations list carries no link: asked again for that candidate (`candidate_id`), the service
      // answers the same invitation, and sends no e-mail when told not to (the first call sent it, if any).
      const again = await context.interviews.inviteCandidate(
        {
          interviewId: interview.interviewId,
          name: event.candidate.name || recipient,
          email: recipient,
          candidateId: found.candidate_id,
          disableEmailNotification: true,
        },
        { signal },
      );
      return { candidateId: again.candidate_id, inviteUrl: again.invite_url };
    },
    perform: async (): Promise<Invited> => {
      const invitation = await context.interviews.inviteCandidate(
        {
          interviewId: interview.interviewId,
          name: event.candidate.name || recipient,
          email: recipient,
          jobApplicationId: event.atsApplicationId,
          disableEmailNotification: !input.serviceEmails,
        },
        { signal },
      );
      return { candidateId: invitation.candidate_id, inviteUrl: invitation.invite_url };
    },
    recordDone: (result) => done(result as Invited),
  };
}
