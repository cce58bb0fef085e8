import type { ApplicationRef } from '../ats/port';
import { errorCode, isPermanent, refusesKey } from './errors';
import { noteStart } from './note-start';
import { noteEnding, postNoteOnce, refusableStart, refusedForGood } from './post-note';
import type { ConnectionContext, PipelineDependencies } from './ports';
import { invitationMarker, type ApplicationRecord, type StepName } from './records';
import { showStatus } from './status';
import { runSteps, type Step } from './steps';

/** What the recruiter reads: a title where it is not "not sent", what happened, and what they can do. */
type FailureText = { title?: string; what: string; todo: string };

/** Why an invitation could not go out, each with what the recruiter reads in the ATS and what they can do. */
export const INVITE_FAILURES = {
  'no-email': {
    what: 'the candidate has no usable e-mail address in the ATS',
    todo: 'Add one to the candidate and move them into the stage again, or send them the interview link yourself.',
  },
  'email-refused': {
    what: 'the mail service refused the invitation e-mail',
    todo: 'Check the address with the candidate, then move them into the stage again or send the link yourself.',
  },
  'service-refused': {
    what: 'the interview service refused the interview or the invitation',
    todo:
      "Ask your AI interview administrator to check the connection's interview template, then move the candidate " +
      'into the stage again.',
  },
  'report-unreadable': {
    title: 'AI interview taken; its report is not here yet',
    what: 'the interview service did not give the connector the report',
    todo:
      'Nothing is needed on this candidate: no reminder or expiry follows. The report is written here once your AI ' +
      "interview administrator has the connection checked (npm run doctor) and the report's delivery retried.",
  },
  'link-withheld': {
    title: 'AI interview invitation e-mailed by the interview service; its link is not available here',
    what: 'the interview service would not give the link again for this note',
    todo:
      'The candidate has the invitation e-mail; their report is written here once they take the interview. No ' +
      'reminder or expiry follows this invitation. To see the link, open the candidate in the AI interview service.',
  },
  'move-refused': {
    title: 'AI interview result: stage not moved',
    what: 'the ATS refused the stage move the result called for',
    todo:
      'The report note above stands; move the candidate by hand if it suits the job, and ask your AI interview ' +
      "administrator to check the connection's target stage for this job.",
  },
} as const satisfies Record<string, FailureText>;
export type InviteFailure = keyof typeof INVITE_FAILURES;

/** The note a recruiter reads: what failed (with the refusal's code where there is one) and what to do. */
export function formatFailureNote(cause: InviteFailure, code?: string): string {
  const failure: FailureText = INVITE_FAILURES[cause];
  const title = failure.title ?? 'AI interview invitation not sent';
  return `${title}: ${failure.what}${code ? ` (${code})` : ''}.\n${failure.todo}`;
}

/** The step of a cause's note: a DynamoDB attribute name in an expression, letters and digits only. */
export const failureNoteStep = (cause: InviteFailure): StepName =>
  `failureNote${cause.replace(/(^|-)([a-z])/g, (_, _dash: string, c: string) => c.toUpperCase())}`;

/** The cause whose note a step records (`failureNoteReportUnreadable`: `report-unreadable`), if any. */
export const failureCauseOf = (step: string): InviteFailure | undefined =>
  (Object.keys(INVITE_FAILURES) as InviteFailure[]).find((cause) => failureNoteStep(cause) === step);

/** Where the failure is told: the connection, the application as recorded, what it runs with. */
export interface FailurePlace {
  context: ConnectionContext;
  record: ApplicationRecord;
  target: ApplicationRef;
  deps: Pick<PipelineDependencies, 'store' | 'logger'>;
  now: () => number;
  signal?: AbortSignal | undefined;
  /**
   * Where no claim holds the application (a report's note), the step's lease, kept beside its start so no other worker
   * begins it meanwhile, and the invitation's round its writes hold in.
   */
  hold?: { leaseUntil: number; round: number } | undefined;
}

/**
 * Tells the recruiter in the ATS that the invitation could not go out, once per cause for this invitation: one note
 * (its start recorded first, so a worker that stopped looks for it by its marker before posting again), then, where
 * nothing reached the candidate (`notSent`), the status "failed". A note the ATS refuses for good is recorded
 * refused and logged, and the status is shown all the same: the refusal that caused it is already recorded for the
 * operator (`npm run ops -- failed`).
 */
export async function tellInviteFailure(
  place: FailurePlace,
  failure: { cause: InviteFailure; code?: string | undefined; notSent: boolean },
): Promise<void> {
  const { context, record, target, deps, now, signal } = place;
  const name = failureNoteStep(failure.cause);
  const marker = invitationMarker(
    `ai-interview-failed:${record.atsApplicationId}:${record.triggerId}:${failure.cause}`,
    record,
  );
  const step = record.steps[name];
  const { hold } = place;
  const held = hold ? { leaseUntil: hold.leaseUntil } : undefined;
  let startedAt = step?.startedAt;
  const mark = (cleared: boolean) => () => {
    startedAt = cleared ? undefined : now();
    const begun = startedAt === undefined ? held : { ...held, startedAt };
    return deps.store.recordStep(record, { step: { name, record: begun }, round: hold?.round });
  };
  const log = { connectionId: record.connectionId, atsApplicationId: record.atsApplicationId, cause: failure.cause };
  // Its start is recorded everywhere: where notes are read back, a started note is looked up by its marker.
  const earlier = noteStart(
    context.ats,
    { target, marker, signal },
    { resumed: step?.startedAt !== undefined, startedAt: step?.startedAt },
    { start: mark(false), clear: mark(true), everywhere: true },
  );
  const note: Step<unknown> = {
    name: 'failure-note-posted',
    done: step?.doneAt !== undefined,
    ...refusableStart(earlier),
    // Refused for good (its look-up or its post): the note ends refused, and the status "failed" is shown all the same.
    perform: () =>
      postNoteOnce(context.ats, target, { body: formatFailureNote(failure.cause, failure.code), marker }, signal).catch(
        refusedForGood,
      ),
    recordDone: (result, outcome) => {
      const ended = noteEnding(result, outcome);
      if (ended.outcome === 'refused')
        deps.logger.warn('a failure could not be told in the ATS', { ...log, code: ended.value });
      return deps.store.recordStep(record, {
        step: { name, record: { startedAt, doneAt: now(), ...ended } },
        round: hold?.round,
      });
    },
  };
  try {
    await runSteps([note], `${record.connectionId}#${record.atsApplicationId}`);
    const round = record.reinvitations ?? 0;
    if (failure.notSent) await showStatus({ context, key: record, target, deps, signal, round }, 'failed');
  } catch (error) {
    // The connection's key refused is no verdict on this note: the work it belongs to waits for the key.
    if (!isPermanent(error) || refusesKey(error)) throw error;
    deps.logger.warn('a failure could not be told in the ATS', { ...log, code: errorCode(error) });
  }
}
