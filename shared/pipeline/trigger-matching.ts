import { type Connection, type MatchResult, stageMatches, type Trigger } from '../config';
import type { StageEnteredEvent } from '../ats/port';

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
