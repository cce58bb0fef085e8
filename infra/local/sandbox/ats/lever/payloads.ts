import { leverProfile } from '../../../../../shared/ats/lever/profile';
import { signatureFor } from '../../../../../shared/ats/signatures';
import { randomBytes } from 'node:crypto';
import { secretFor, type WebhookTarget } from '../signed-webhooks';
import type { KitApplication, KitContext, KitExit, LifecycleAction, SignedDelivery } from '../ats-sandbox-kit';

/**
 * The webhooks the connector registers: one per event type, each with the signature token Lever issues for it
 * (help.lever.co 20087284427677 names the events; 4402565460237 the token per webhook).
 */
export const LEVER_WEBHOOK_EVENTS = [
  'candidateStageChange',
  'candidateArchiveChange',
  'candidateHired',
  'candidateDeleted',
] as const;

/**
 * Archive reason ids of the sandbox's account. Lever names an archived opportunity's reason by id (`GET
 * /v1/archive_reasons` has `{id, text, type: hired|non-hired}`, texts per account): one id per way of leaving.
 */
export const LEVER_ARCHIVE_REASON_IDS: Readonly<Record<KitExit['kind'], string>> = {
  rejected: 'reason-rejected',
  withdrawn: 'reason-withdrew',
  hired: 'reason-hired',
};

/** Signs `token + triggeredAt` only, never the body (the scheme embloy's verifier implements). */
export function leverDelivery(secret: string, event: string, data: Record<string, unknown>): SignedDelivery {
  const token = randomBytes(16).toString('hex');
  const triggeredAt = Date.now();
  const signature = signatureFor(leverProfile.signature, secret, `${token}${triggeredAt}`);
  return {
    body: Buffer.from(JSON.stringify({ triggeredAt, event, token, signature, data })),
    headers: {},
    eventId: token,
    event,
  };
}

/**
 * `archived` as Lever's opportunity carries it: null in the pipeline, else `{archivedAt, reason}` (epoch ms, an
 * archive reason id). An application archived without a kit exit reads as rejected.
 */
export function archivedJson(application: KitApplication) {
  if (application.status !== 'archived') return null;
  const exit = application.exit;
  return {
    archivedAt: Date.parse(exit?.at ?? application.updatedAt),
    reason: LEVER_ARCHIVE_REASON_IDS[exit?.kind ?? 'rejected'],
  };
}

export function opportunityJson(kit: KitContext, application: KitApplication, expand: boolean) {
  const { candidate } = kit.parties(application);
  return {
    id: application.id,
    name: `${candidate.firstName} ${candidate.lastName}`,
    contact: candidate.id,
    emails: [candidate.email],
    stage: application.stageId,
    archived: archivedJson(application),
    applications: expand
      ? [{ id: `app-${application.id}`, posting: application.jobId, type: 'posting' }]
      : [`app-${application.id}`],
  };
}

/**
 * The webhooks Lever sends for a lifecycle action (ats-routes.json, Lever webhooks): a rejection, a withdrawal and
 * an unarchive are `candidateArchiveChange` (`toArchived` null when unarchived); a hire is `candidateHired`, and, since
 * Lever archives hired opportunities, a `candidateArchiveChange` with the hired reason too. Each is signed with its
 * own webhook's token; ids only in `data`, as every Lever webhook.
 */
export function lifecycleDeliveries(
  application: KitApplication,
  target: WebhookTarget,
  action: LifecycleAction,
): SignedDelivery[] {
  const ids = {
    opportunityId: application.id,
    candidateId: application.candidateId,
    contactId: application.candidateId,
  };
  const archiveChange = leverDelivery(secretFor(target, 'candidateArchiveChange'), 'candidateArchiveChange', {
    ...ids,
    toArchived: action === 'unreject' ? null : archivedJson(application),
  });
  if (action !== 'hire') return [archiveChange];
  return [leverDelivery(secretFor(target, 'candidateHired'), 'candidateHired', ids), archiveChange];
}
