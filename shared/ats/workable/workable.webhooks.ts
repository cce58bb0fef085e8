import { createHash } from 'node:crypto';
import { readPart, readWebhookBody } from '../webhook-body';
import type { WebhookParseResult } from '../port';
import { movedCandidateSchema, workableEnvelopeSchema } from './workable.schemas';

/**
 * One subscription for `candidate_moved` on every job and stage (reference: webhook-subscriptions): no `args`, so
 * moves out of a stage, disqualifications and hires reach the connector too (Workable has no event of their own).
 */
export const WORKABLE_WEBHOOK_EVENTS = ['candidate_moved'] as const;

/**
 * The delivery's id where the envelope has one; otherwise one derived from what the payload says happened, so a
 * replay of the same delivery (Workable replays until it gets a 200: reference: webhooks) gets the same id.
 */
function deliveryIdOf(envelope: { id?: string | null; firing_id?: string | null }, happened: string): string {
  return (
    envelope.id ?? envelope.firing_id ?? `derived:${createHash('sha256').update(happened).digest('hex').slice(0, 40)}`
  );
}

/**
 * A `candidate_moved` delivery (reference: candidate-events; the candidate as of delivery, not as of the event).
 * Workable documents no disqualify, withdraw or hire event: a disqualified candidate, or one with `hired_at`, is one
 * who left (never a stage entry). A requalified candidate cannot be told from a move in the payload, so it stays a
 * stage entry; the worker's standing read before any follow-up finds one who came back.
 */
export function parseCandidateMoved(rawBody: Buffer): WebhookParseResult {
  const read = readWebhookBody(rawBody, workableEnvelopeSchema);
  if (!read.ok) return read.result;
  const envelope = read.value;
  if (envelope.event_type !== 'candidate_moved')
    return { kind: 'ignored', reason: `event ${envelope.event_type} is not handled` };
  const parsed = readPart(envelope.data, movedCandidateSchema, 'data');
  if (!parsed.ok) return parsed.result;
  const candidate = parsed.value;
  const when = candidate.updated_at ?? envelope.fired_at ?? '';
  if (candidate.disqualified || candidate.hired_at) {
    const left = candidate.disqualified
      ? `disqualified|${candidate.disqualified_at ?? when}`
      : `hired|${candidate.hired_at}`;
    return {
      kind: 'application-changed',
      event: {
        deliveryId: deliveryIdOf(envelope, `${candidate.id}|${left}`),
        atsApplicationId: candidate.id,
        change: 'left',
      },
    };
  }
  return {
    kind: 'stage-entered',
    event: {
      deliveryId: deliveryIdOf(envelope, `${candidate.id}|${candidate.stage}|${when}`),
      atsJobId: candidate.job.shortcode,
      jobName: candidate.job.title ?? undefined,
      // A Workable candidate belongs to one job: it is the application.
      atsApplicationId: candidate.id,
      atsCandidateId: candidate.id,
      // The name; the slug is filled in by confirmStageEntered where a trigger is configured by slug.
      stage: { name: candidate.stage },
      candidate: {
        name: candidate.name ?? ([candidate.firstname, candidate.lastname].filter(Boolean).join(' ') || undefined),
        email: candidate.email ?? undefined,
      },
    },
  };
}
