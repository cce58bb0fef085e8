import { createHash } from 'node:crypto';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import type { ApplicationChangedEvent, ApplicationStanding, ExitKind, WebhookParseResult } from '../port';
import { readPart } from '../webhook-body';
import { applicationPlaceSchema, type AshbyApplicationInfo } from './ashby.schemas';

/**
 * The webhooks whose `data.application` says where the application stands (webhook payloads OpenAPI): a stage change
 * (a move into an Archived-type stage is a rejection or a withdrawal), any update of the application, and a hire.
 */
export const APPLICATION_PLACE_ACTIONS: readonly string[] = [
  'candidateStageChange',
  'applicationUpdate',
  'candidateHire',
];

/**
 * Why an application is out of the process, or undefined while it is in it. Ashby archives a rejected and a withdrawn
 * application alike; only the archive reason's `reasonType` (RejectedByCandidate, RejectedByOrg, Other: Ashby's
 * archive reason OpenAPI) tells a withdrawal. A hired application is `Hired`, not archived.
 */
export function exitOf(application: Pick<AshbyApplicationInfo, 'status' | 'archiveReason'>): ExitKind | undefined {
  if (application.status === 'Hired') return 'hired';
  if (application.status !== 'Archived') return undefined;
  return application.archiveReason?.reasonType === 'RejectedByCandidate' ? 'withdrawn' : 'rejected';
}

/** `application.info` as a standing: out with its exit and the archive reason's text, or in, in its current stage. */
export function standingOf(application: AshbyApplicationInfo): ApplicationStanding {
  if (!application.status)
    throw new AtsError(ATS_ERROR_CODES.malformedResponse, `Ashby application.info of ${application.id} has no status`);
  const exit = exitOf(application);
  if (exit) return { active: false, exit, reason: application.archiveReason?.text ?? undefined };
  // Active, or a Lead (sourced, not yet applied): in the process either way.
  const stage = application.currentInterviewStage;
  return { active: true, stageId: stage.id, stageName: stage.title ?? undefined };
}

/**
 * A delivery of `action` as an application leaving or returning, or undefined where it is a stage change of an
 * application still in the process (read as a stage entry by the caller). `Archived` or `Hired` (and every
 * `candidateHire`) is a departure; an `applicationUpdate` saying `Active` is a possible return (an unarchive), a hint
 * the worker checks against its records before it reads anything.
 *
 * Related deliveries of one action share `webhookActionId` at the top level (docs: related-webhooks, "Common Payload
 * Data"), and a stage entry's delivery id is that id alone: the change is appended, so the exit's hints of one action
 * are one delivery (a retry or a related delivery is a duplicate) and never collide with a stage entry's.
 */
export function applicationChangeOf(
  action: string,
  data: unknown,
  webhookActionId: string | undefined,
): WebhookParseResult | undefined {
  const parsed = readPart(data, applicationPlaceSchema, 'data');
  if (!parsed.ok) return parsed.result;
  const { id, status, updatedAt } = parsed.value.application;
  const change: ApplicationChangedEvent['change'] | undefined =
    action === 'candidateHire' || status === 'Archived' || status === 'Hired'
      ? 'left'
      : action === 'applicationUpdate' && status === 'Active'
        ? 'returned'
        : undefined;
  if (!change) {
    if (action === 'applicationUpdate')
      return { kind: 'ignored', reason: `application is ${status ?? 'of no status'}` };
    return undefined;
  }
  // Without a webhookActionId, a retry of one delivery repeats its action, application, status and updatedAt.
  const derived = () =>
    `derived:${createHash('sha256')
      .update(`${action}|${id}|${status ?? ''}|${updatedAt ?? ''}`)
      .digest('hex')
      .slice(0, 40)}`;
  const deliveryId = webhookActionId ? `${webhookActionId}:${change}` : derived();
  return { kind: 'application-changed', event: { deliveryId, atsApplicationId: id, change } };
}
