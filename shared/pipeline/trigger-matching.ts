import type { Connection, StageMatcher, Trigger } from '../config';
import type { StageEnteredEvent } from '../ats/port';

/** A stage matches by id when the trigger names one, else by exact name. */
export function stageMatches(matcher: StageMatcher, stage: { id?: string | undefined; name?: string | undefined }): boolean {
  if (matcher.id !== undefined) return matcher.id === stage.id;
  return matcher.name !== undefined && matcher.name === stage.name;
}

/** The triggers of a connection that this stage change starts. */
export function matchTriggers(connection: Connection, event: Pick<StageEnteredEvent, 'atsJobId' | 'stage'>): Trigger[] {
  return connection.triggers.filter((trigger) => (trigger.jobs === 'all' || trigger.jobs.includes(event.atsJobId)) && stageMatches(trigger.stage, event.stage));
}
