import type * as v from 'valibot';
import type { ApplicationChangedEvent, ApplicationStanding, ExitKind, WebhookParseResult } from '../port';
import { readPart } from '../webhook-body';
import { applicationChangeSchema, type applicationSchema } from './greenhouse.schemas';

/**
 * The webhooks that say an application left the hiring process or came back (webhooks/_candidate_events.md):
 * "Candidate/Prospect rejected" (a withdrawal too: a rejection whose reason type is "They rejected us"), "Candidate
 * hired" (an offer accepted), and their undoing, "unrejected" and "unhired".
 */
export const APPLICATION_CHANGES: Readonly<Record<string, ApplicationChangedEvent['change']>> = {
  reject_candidate: 'left',
  hire_candidate: 'left',
  unreject_candidate: 'returned',
  unhire_candidate: 'returned',
  // One application destroyed (removed from a job, or merged on one job): its standing read then finds none.
  delete_application: 'left',
};

/**
 * The rejection reason type of a withdrawal, one of the three Greenhouse has ('We rejected them', 'They rejected us',
 * 'None specified'; harvest/_rejection_reasons.md). Type ids vary per organisation: the name is what can be matched.
 */
export const WITHDRAWAL_REASON_TYPE = 'They rejected us';

/**
 * `reject_candidate`, `hire_candidate`, `unreject_candidate`, `unhire_candidate` as an application change; undefined
 * for any other action. The change is a hint (the worker reads the standing before it acts), so a withdrawal is
 * 'left' like a rejection without reading the reason's type.
 */
export function readApplicationChange(
  action: string,
  payload: unknown,
  deliveryId: string,
): WebhookParseResult | undefined {
  const change = APPLICATION_CHANGES[action];
  if (!change) return undefined;
  const read = readPart(payload, applicationChangeSchema, 'payload');
  if (!read.ok) return read.result;
  return {
    kind: 'application-changed',
    event: { deliveryId, atsApplicationId: String(read.value.application.id), change },
  };
}

/**
 * Where an application read from `GET /v3/applications?ids=` stands: `rejected` or `hired` is out of the process (the
 * `status` filter's values, ats-facts Corrections 2026-11b); any other status (`in_process`, `active`, `paused`...)
 * is still in it, in its `job_interview_stage_id`. A rejection is a withdrawal only where the record itself carries
 * the reason's type; otherwise it stays a rejection (telling them apart would be another call).
 */
export function standingOf(application: v.InferOutput<typeof applicationSchema>): ApplicationStanding {
  if (application.status === 'hired') return { active: false, exit: 'hired' };
  if (application.status === 'rejected') {
    const reason = application.rejection_reason;
    const exit: ExitKind = reason?.type?.name === WITHDRAWAL_REASON_TYPE ? 'withdrawn' : 'rejected';
    return { active: false, exit, reason: reason?.name ?? undefined };
  }
  const stageId = application.job_interview_stage_id;
  return {
    active: true,
    stageId: stageId === null || stageId === undefined ? undefined : String(stageId),
    stageName: application.stage_name ?? undefined,
  };
}
