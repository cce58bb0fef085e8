import type { CandidateDeletedEvent, InboundWebhook, WebhookParseResult } from '../port';
import { deliveryIdOf } from '../../validation';
import { readPart, readWebhookBody } from '../webhook-body';
import { readApplicationChange } from './greenhouse.lifecycle';
import { greenhouseProfile } from './profile';
import {
  candidateAnonymizedSchema,
  candidateDeletedSchema,
  candidateMergedSchema,
  candidateStageChangeSchema,
  greenhouseEnvelopeSchema,
} from './greenhouse.schemas';
import { idText } from './greenhouse.reads';

/**
 * A Greenhouse delivery, read after its signature is verified: a stage change (the whole body is signed and carries
 * the job and the candidate), a candidate leaving or coming back (greenhouse.lifecycle.ts), or a privacy signal.
 */
export function parseGreenhouseWebhook(request: InboundWebhook): WebhookParseResult {
  const read = readWebhookBody(request.rawBody, greenhouseEnvelopeSchema);
  if (!read.ok) return read.result;
  const envelope = read.value;
  if (envelope.action === 'ping') return { kind: 'ping' };
  const deliveryId = deliveryIdOf(
    request.headers[greenhouseProfile.signature.deliveryHeader.toLowerCase()],
    request.rawBody,
  );
  const privacy = readPrivacySignal(envelope.action, envelope.payload);
  if (privacy)
    return privacy.ok ? { kind: 'candidate-deleted', event: { deliveryId, ...privacy.value } } : privacy.result;
  const changed = readApplicationChange(envelope.action, envelope.payload, deliveryId);
  if (changed) return changed;
  if (envelope.action !== 'candidate_stage_change')
    return { kind: 'ignored', reason: `action ${envelope.action} is not handled` };
  const parsed = readPart(envelope.payload, candidateStageChangeSchema, 'payload');
  if (!parsed.ok) return parsed.result;
  const application = parsed.value.application;
  const job = application.jobs?.[0];
  if (application.prospect || !job) return { kind: 'ignored', reason: 'a prospect without a job' };
  // A rejected or hired application is out of the process whatever stage it shows: never a stage entry (its own
  // reject_candidate / hire_candidate webhook says it left).
  if (application.status && application.status !== 'active')
    return { kind: 'ignored', reason: `application is ${application.status}` };
  const candidate = application.candidate;
  const email =
    candidate.email_addresses?.find((e) => e.type === 'personal')?.value ?? candidate.email_addresses?.[0]?.value;
  return {
    kind: 'stage-entered',
    event: {
      deliveryId,
      atsJobId: String(job.id),
      jobName: job.name ?? undefined,
      atsApplicationId: String(application.id),
      atsCandidateId: String(candidate.id),
      stage: { id: idText(application.current_stage?.id), name: application.current_stage?.name ?? undefined },
      candidate: { name: [candidate.first_name, candidate.last_name].filter(Boolean).join(' '), email },
    },
  };
}

type PrivacySignal =
  | { ok: true; value: Omit<CandidateDeletedEvent, 'deliveryId'> }
  | { ok: false; result: WebhookParseResult };

/**
 * The webhooks after which Greenhouse no longer holds a candidate's data as it was: deleted, merged into another
 * record (sent instead of `delete_candidate` when both are configured), or anonymised. Each is a purge.
 */
function readPrivacySignal(action: string, payload: unknown): PrivacySignal | undefined {
  if (action === 'delete_candidate') {
    const read = readPart(payload, candidateDeletedSchema, 'payload');
    if (!read.ok) return read;
    const { person } = read.value;
    return {
      ok: true,
      value: {
        atsCandidateId: String(person.id),
        atsApplicationIds: (person.deleted_application_ids ?? []).map(String),
      },
    };
  }
  if (action === 'merge_candidate') {
    const read = readPart(payload, candidateMergedSchema, 'payload');
    // The applications moved to the record that stays: only the merged-away candidate's records go.
    return read.ok
      ? { ok: true, value: { atsCandidateId: String(read.value.person.id), atsApplicationIds: [] } }
      : read;
  }
  if (action === 'candidate_anonymized') {
    const read = readPart(payload, candidateAnonymizedSchema, 'payload');
    return read.ok
      ? { ok: true, value: { atsCandidateId: String(read.value.candidate_id), atsApplicationIds: [] } }
      : read;
  }
  return undefined;
}
