import { createHash } from 'node:crypto';
import * as v from 'valibot';
import type { ConnectionSecrets } from '../../config';
import { digestMatches, hmacSha256 } from '../../http';
import { describeFirstIssue } from '../../validation';
import { readPart, readWebhookBody } from '../webhook-body';
import type { ApplicationChangedEvent, InboundWebhook, WebhookParseResult, WebhookVerification } from '../port';
import {
  archiveChangeDataSchema,
  candidateDeletedDataSchema,
  candidateHiredDataSchema,
  leverSignedFieldsSchema,
  leverWebhookSchema,
  stageChangeDataSchema,
} from './lever.schemas';

/**
 * The events the connector registers, one webhook (and one signature token) each (ats-facts, Corrections 2026-11;
 * help.lever.co 20087284427677 for the event names): a stage entered, an opportunity archived or unarchived, hired,
 * and a candidate deleted.
 */
export const LEVER_WEBHOOK_EVENTS = [
  'candidateStageChange',
  'candidateArchiveChange',
  'candidateHired',
  'candidateDeleted',
] as const;

/** What a Lever delivery is verified with: the connection's signature tokens and its freshness window. */
export interface LeverWebhookKeys {
  secrets: ConnectionSecrets;
  freshnessMinutes: number;
}

/**
 * HMAC-SHA256 of `token + triggeredAt` with the webhook's signature token, hex (embloy's verifier, citing
 * Lever's docs). Each Lever webhook (one per event type) has its own token: the body's `event` chooses it. A
 * `triggeredAt` outside the freshness window is stale; what was signed is the replay key.
 */
export function verifyLeverWebhook(request: InboundWebhook, now: number, keys: LeverWebhookKeys): WebhookVerification {
  let document: unknown;
  try {
    document = JSON.parse(request.rawBody.toString('utf8'));
  } catch {
    return { valid: false, reason: 'no signed fields: body is not JSON' };
  }
  const fields = v.safeParse(leverSignedFieldsSchema, document);
  if (!fields.success)
    return {
      valid: false,
      reason: `no signed fields: ${describeFirstIssue(fields.issues, { fallbackField: 'body' }).field} missing`,
    };
  const { event, token, triggeredAt, signature } = fields.output;
  const secret = signatureToken(keys.secrets, event);
  if (!secret) return { valid: false, reason: `the connection has no signature token for ${event} webhooks` };
  if (!digestMatches(hmacSha256(secret, `${token}${triggeredAt}`), signature, 'hex'))
    return { valid: false, reason: 'signature does not match' };
  const windowMs = keys.freshnessMinutes * 60_000;
  if (Math.abs(now - Number(triggeredAt)) > windowMs)
    return {
      valid: false,
      reason: `stale: triggeredAt is outside the ${keys.freshnessMinutes}-minute window`,
    };
  // The replay key is what was signed, hashed to a bounded key: no other (token, triggeredAt) signs the same.
  const signed = createHash('sha256').update(`${token}${triggeredAt}`).digest('hex');
  return { valid: true, replayKey: `lever-signed:${signed}`, replayTtlSeconds: Math.ceil((2 * windowMs) / 1000) };
}

/** The token of the webhook for `event`, else the connection's one token. */
function signatureToken(secrets: ConnectionSecrets, event: string): string | undefined {
  const perEvent = secrets.atsWebhookSecrets;
  return (perEvent && Object.hasOwn(perEvent, event) ? perEvent[event] : undefined) ?? secrets.atsWebhookSecret;
}

/**
 * A verified Lever delivery read for what it hints at. Lever signs `token + triggeredAt` only, never `data`, so every
 * result is a claim the worker checks with a read of the opportunity. The delivery id is the body's `token`, which a
 * retry of one delivery carries again.
 */
export function parseLeverWebhook(request: InboundWebhook): WebhookParseResult {
  const read = readWebhookBody(request.rawBody, leverWebhookSchema);
  if (!read.ok) return read.result;
  const webhook = read.value;
  // Lever's "Verify connection" sends signed test deliveries that name no opportunity: answered 200.
  if (isVerificationPayload(webhook.data))
    return { kind: 'ignored', reason: `a ${webhook.event} test delivery (no opportunity)` };
  switch (webhook.event) {
    case 'candidateStageChange':
      return stageEntered(webhook.token, webhook.data);
    case 'candidateArchiveChange':
      return archiveChanged(webhook.token, webhook.data);
    case 'candidateHired':
      return hired(webhook.token, webhook.data);
    case 'candidateDeleted':
      return candidateDeleted(webhook.token, webhook.data);
    default:
      return { kind: 'ignored', reason: `event ${webhook.event} is not handled` };
  }
}

/**
 * `candidateStageChange` names stages only (`fromStageId`, `toStageId`), never whether the opportunity is archived:
 * an archived one is refused by `confirmStageEntered`, which reads it.
 */
function stageEntered(deliveryId: string, value: unknown): WebhookParseResult {
  const data = readPart(value, stageChangeDataSchema, 'data');
  if (!data.ok) return data.result;
  return {
    kind: 'stage-entered',
    event: {
      deliveryId,
      atsApplicationId: data.value.opportunityId,
      atsCandidateId: data.value.contactId ?? data.value.candidateId ?? data.value.opportunityId,
      stage: { id: data.value.toStageId },
      candidate: {},
    },
  };
}

/**
 * `candidateArchiveChange`: `toArchived {archivedAt, reason}` when archived (rejected, withdrawn, or hired: Lever
 * archives hired opportunities too), null when unarchived (ats-routes.json, Lever webhooks).
 */
function archiveChanged(deliveryId: string, value: unknown): WebhookParseResult {
  const data = readPart(value, archiveChangeDataSchema, 'data');
  if (!data.ok) return data.result;
  return applicationChanged(deliveryId, data.value.opportunityId, data.value.toArchived ? 'left' : 'returned');
}

/** `candidateHired`: the opportunity left the pipeline. Lever documents no "unhired" event. */
function hired(deliveryId: string, value: unknown): WebhookParseResult {
  const data = readPart(value, candidateHiredDataSchema, 'data');
  if (!data.ok) return data.result;
  return applicationChanged(deliveryId, data.value.opportunityId, 'left');
}

/** An opportunity that left the pipeline or came back: a hint, which the worker checks with a read. */
function applicationChanged(
  deliveryId: string,
  opportunityId: string,
  change: ApplicationChangedEvent['change'],
): WebhookParseResult {
  return { kind: 'application-changed', event: { deliveryId, atsApplicationId: opportunityId, change } };
}

function candidateDeleted(deliveryId: string, value: unknown): WebhookParseResult {
  const deleted = readPart(value, candidateDeletedDataSchema, 'data');
  const contact = deleted.ok ? (deleted.value.contactId ?? deleted.value.candidateId) : undefined;
  if (!deleted.ok || !contact) return { kind: 'invalid', message: 'data.contactId: a deleted candidate needs an id' };
  return {
    kind: 'candidate-deleted',
    event: {
      deliveryId,
      atsCandidateId: contact,
      atsApplicationIds: deleted.value.opportunityId ? [deleted.value.opportunityId] : [],
    },
  };
}

/** A delivery whose `data` is an object naming no opportunity and no candidate: Lever's connection test. */
function isVerificationPayload(data: unknown): boolean {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return data === undefined || data === null;
  return !['opportunityId', 'candidateId', 'contactId'].some((key) => Object.hasOwn(data, key));
}
