import type * as v from 'valibot';
import type { ApplicationStanding } from '../port';
import type { candidateSchema } from './workable.schemas';

/** A stage of a job as the adapter keeps it: the slug a move takes, the name reads show, its kind where listed. */
export interface WorkableJobStage {
  slug: string;
  name: string;
  kind?: string | null | undefined;
}

type CandidateRead = v.InferOutput<typeof candidateSchema>['candidate'];

/** The job's stage list names its hired stage by `kind` (reference: job stages, [mirror]). */
const HIRED_STAGE_KIND = 'hired';

/** A reason is the recruiter's free text: kept short, as the port asks for the ATS's reason, not a document. */
const MAX_REASON_LENGTH = 200;

/**
 * Where a Workable candidate stands, from its details (reference: job-candidates-show). Workable has no withdrawn
 * flag: a candidate who withdrew is disqualified too, told apart only by the free-text reason, so every
 * disqualification is 'rejected' with that reason. A hire is a move into the job's hired stage, which sets
 * `hired_at`; where the job's stages are already known (never read for this), a stage of kind "hired" counts too.
 * `stages`: the job's stages if held, else undefined (the stage is then given by name only).
 */
export function standingOfCandidate(
  candidate: CandidateRead,
  stages: readonly WorkableJobStage[] | undefined,
): ApplicationStanding {
  if (candidate.disqualified)
    return {
      active: false,
      exit: 'rejected',
      reason: candidate.disqualification_reason?.slice(0, MAX_REASON_LENGTH) || undefined,
    };
  const stage = stages?.find((s) => s.name === candidate.stage);
  if (candidate.hired_at || stage?.kind === HIRED_STAGE_KIND) return { active: false, exit: 'hired' };
  return { active: true, stageId: stage?.slug, stageName: candidate.stage };
}
