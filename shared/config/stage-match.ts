import { type StageMatcher, stageIdForJob } from './connection.schema';

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

/**
 * Whether an application standing in `current` is surely out of the stage it was in when the connector acted: not in
 * it by the ATS's own id (`fromStageId`), and in no stage the trigger's matcher names (by id or name). A stage the read
 * does not tell is not out. The lifecycle's "moved out" and a move's "moved on since" are this one rule.
 */
export function outOfStage(
  matcher: StageMatcher,
  fromStageId: string | undefined,
  current: { id?: string | undefined; name?: string | undefined },
  jobId: string | undefined,
): boolean {
  if (current.id !== undefined && current.id === fromStageId) return false;
  return stageMatches(matcher, current, jobId) === 'no';
}
