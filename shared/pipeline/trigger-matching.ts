import { type Connection, type StageMatcher, stageIdForJob, type Trigger } from '../config';
import type { StageEnteredEvent } from '../ats/port';

export type MatchResult = 'yes' | 'no' | 'unknown';

/**
 * A stage matches by its id for the job (`idsByJob`), by a global id, else by exact name. 'unknown' when the
 * event does not carry what the matcher needs yet: Lever's webhook has no stage name and no job, Workable's
 * names its stage where a trigger may give the slug. The worker fills those in (`confirmStageEntered`) and
 * matches again.
 */
export function stageMatches(
  matcher: StageMatcher,
  stage: { id?: string | undefined; name?: string | undefined },
  jobId: string | undefined,
): MatchResult {
  const compare = (wanted: string, actual: string | undefined): MatchResult =>
    actual === undefined ? 'unknown' : wanted === actual ? 'yes' : 'no';
  if (matcher.idsByJob && jobId === undefined) return 'unknown';
  const perJob = stageIdForJob(matcher, jobId);
  if (perJob !== undefined) return compare(perJob, stage.id);
  if (matcher.id !== undefined) return compare(matcher.id, stage.id);
  if (matcher.name === undefined) return 'no';
  return compare(matcher.name, stage.name);
}

function jobMatches(trigger: Trigger, jobId: string | undefined): MatchResult {
  if (trigger.jobs === 'all') return 'yes';
  if (jobId === undefined) return 'unknown';
  return trigger.jobs.includes(jobId) ? 'yes' : 'no';
}

/** The triggers this stage change starts, for sure. */
export function matchTriggers(connection: Connection, event: Pick<StageEnteredEvent, 'atsJobId' | 'stage'>): Trigger[] {
  return connection.triggers.filter(
    (trigger) =>
      jobMatches(trigger, event.atsJobId) === 'yes' &&
      stageMatches(trigger.stage, event.stage, event.atsJobId) === 'yes',
  );
}

/** Whether any trigger may match once the worker has confirmed the event: the webhook enqueues only these. */
export function mayMatchTriggers(
  connection: Connection,
  event: Pick<StageEnteredEvent, 'atsJobId' | 'stage'>,
): boolean {
  return connection.triggers.some(
    (trigger) =>
      jobMatches(trigger, event.atsJobId) !== 'no' && stageMatches(trigger.stage, event.stage, event.atsJobId) !== 'no',
  );
}
