import { createHash } from 'node:crypto';
import type { InboundWebhook, WebhookParseResult } from '../port';
import { readPart, readWebhookBody } from '../webhook-body';
import { APPLICATION_PLACE_ACTIONS, applicationChangeOf } from './ashby.lifecycle';
import {
  ashbyEnvelopeSchema,
  candidateDeleteSchema,
  candidateMergeSchema,
  candidateStageChangeSchema,
} from './ashby.schemas';

/**
 * The stage change (also a rejection or withdrawal: a move into an Archived-type stage), a hire, an update (an
 * unarchive), and the privacy signals (ats-facts, Corrections 2026-11). `webhook.create` takes one type per webhook.
 */
export const ASHBY_WEBHOOK_EVENTS = [
  'candidateStageChange',
  'candidateHire',
  'applicationUpdate',
  'candidateDelete',
  'candidateMerge',
] as const;

/**
 * An Ashby delivery, read after its signature is verified (the whole body is signed): a stage entry, an application
 * leaving or coming back (ashby.lifecycle.ts), or a privacy signal.
 */
export function parseAshbyWebhook(request: InboundWebhook): WebhookParseResult {
  const envelope = readWebhookBody(request.rawBody, ashbyEnvelopeSchema);
  if (!envelope.ok) return envelope.result;
  const { action } = envelope.value;
  if (action === 'ping') return { kind: 'ping' };
  const deliveryOf = (key: string) =>
    envelope.value.webhookActionId ?? `derived:${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
  // Privacy signals: the candidate is gone (deleted) or merged into another record; either way, forgotten.
  const gone =
    action === 'candidateDelete'
      ? readPart(envelope.value.data, candidateDeleteSchema, 'data')
      : action === 'candidateMerge'
        ? readPart(envelope.value.data, candidateMergeSchema, 'data')
        : undefined;
  if (gone) {
    if (!gone.ok) return gone.result;
    const atsCandidateId = 'candidate' in gone.value ? gone.value.candidate.id : gone.value.deletedCandidate.id;
    const deliveryId = deliveryOf(`${action}|${atsCandidateId}`);
    return { kind: 'candidate-deleted', event: { deliveryId, atsCandidateId, atsApplicationIds: [] } };
  }
  if (!APPLICATION_PLACE_ACTIONS.includes(action))
    return { kind: 'ignored', reason: `action ${action} is not handled` };
  // An exit (a move into an Archived-type stage, a hire) or its undo, never a stage entry.
  const changed = applicationChangeOf(action, envelope.value.data, envelope.value.webhookActionId);
  if (changed) return changed;
  // A stage move also fires applicationUpdate (docs: related-webhooks); candidateStageChange carries the entry.
  const parsed = readPart(envelope.value.data, candidateStageChangeSchema, 'data');
  if (!parsed.ok) return parsed.result;
  const { application } = parsed.value;
  if (application.status && application.status !== 'Active')
    return { kind: 'ignored', reason: `application is ${application.status}` };
  // `webhookActionId` is at the top level of every delivery ("Common Payload Data"); without one, a retry of
  // one delivery repeats application, stage and updatedAt, so together they name it.
  const deliveryId = deliveryOf(
    `${application.id}|${application.currentInterviewStage.id}|${application.updatedAt ?? ''}`,
  );
  return {
    kind: 'stage-entered',
    event: {
      deliveryId,
      atsJobId: application.job.id,
      jobName: application.job.title ?? undefined,
      atsApplicationId: application.id,
      atsCandidateId: application.candidate.id,
      stage: { id: application.currentInterviewStage.id, name: application.currentInterviewStage.title ?? undefined },
      candidate: {
        name: application.candidate.name ?? undefined,
        email: application.candidate.primaryEmailAddress?.value,
      },
    },
  };
}
