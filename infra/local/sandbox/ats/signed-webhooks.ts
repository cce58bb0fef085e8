import { randomBytes, randomUUID } from 'node:crypto';
import type { VendorProfile } from '../../../../shared/ats/profile';
import { signatureFor } from '../../../../shared/ats/signatures';
import { errorMessage } from '../../../../shared/errors';
import type { AtsFaults } from './faults';

export interface WebhookTarget {
  url: string;
  /** The secret the customer chose, for ATSs that let them (Greenhouse, Ashby, Workable). */
  secret: string;
  /** Secrets the ATS issued itself, per event type (Lever: one webhook, and one signature token, per event). */
  issued?: Record<string, string> | undefined;
  /** The ATS's id for it, when it was made through the ATS's API. */
  id?: string;
  /** The events it is for; every event when absent (a webhook registered by the sandbox's control). */
  events?: string[];
  /** A disabled webhook is kept but sent nothing (Greenhouse disables one whose ping failed). */
  enabled?: boolean;
}

/** Whether `target` is sent a delivery of `event`. */
export function receives(target: WebhookTarget, event: string | undefined): boolean {
  if (target.enabled === false) return false;
  return event === undefined || target.events === undefined || target.events.includes(event);
}

/** Switches every webhook on or off, as an admin (or the ATS after failed deliveries) would. */
export function switchWebhooks(webhooks: WebhookTarget[], enabled: boolean): void {
  for (const target of webhooks) target.enabled = enabled;
}

/** The secret a delivery of `event` is signed with: the one the ATS issued for it, else the customer's. */
export function secretFor(target: WebhookTarget, event: string): string {
  return target.issued && Object.hasOwn(target.issued, event) ? (target.issued[event] as string) : target.secret;
}

export interface DeliveryRecord {
  eventId: string;
  url: string;
  action: string;
  status?: number;
  error?: string;
  /** Never sent: the stage change's webhook was dropped (a fault of the sandbox). */
  dropped?: boolean;
  at: number;
}

export interface SignedDelivery {
  body: Buffer;
  headers: Record<string, string>;
  eventId: string;
  /** The ATS's event type, which decides the webhooks it goes to. */
  event?: string;
}

/**
 * A webhook signed as its vendor's profile says: HMAC-SHA256 of the raw body in the profile's header (with the
 * delivery's id where the vendor names one), or, where the vendor signs `token + triggeredAt` (Lever), the token,
 * the moment and the signature in the body itself. `serialize`: the vendor's own JSON (Greenhouse escapes `<>&`).
 */
export function signDelivery(
  scheme: VendorProfile['signature'],
  secret: string,
  document: Record<string, unknown>,
  options: { event?: string; serialize?: (document: unknown) => Buffer } = {},
): SignedDelivery {
  const serialize = options.serialize ?? ((d: unknown) => Buffer.from(JSON.stringify(d)));
  if (scheme.signs === 'token+triggeredAt') {
    const token = randomBytes(16).toString('hex');
    const triggeredAt = Date.now();
    const signature = signatureFor(scheme, secret, `${token}${triggeredAt}`);
    const body = serialize({ triggeredAt, ...document, token, signature });
    return { body, headers: {}, eventId: token, event: options.event };
  }
  const body = serialize(document);
  const eventId = randomUUID();
  const headers: Record<string, string> = {};
  if (scheme.header) headers[scheme.header.toLowerCase()] = signatureFor(scheme, secret, body);
  if (scheme.deliveryHeader) headers[scheme.deliveryHeader.toLowerCase()] = eventId;
  return { body, headers, eventId, event: options.event };
}

/** Posts the exact bytes it signed; records each delivery's answer. */
export async function deliverSigned(
  target: WebhookTarget,
  delivery: SignedDelivery,
  deliveries: DeliveryRecord[],
  action: string,
): Promise<DeliveryRecord> {
  const record: DeliveryRecord = { eventId: delivery.eventId, url: target.url, action, at: Date.now() };
  deliveries.push(record);
  try {
    const response = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...delivery.headers },
      body: delivery.body,
      signal: AbortSignal.timeout(30_000),
    });
    await response.arrayBuffer();
    record.status = response.status;
  } catch (error) {
    record.error = errorMessage(error);
  }
  return record;
}

/** Where a sandbox's webhooks go and are recorded, with the draw that decides a dropped stage change. */
export interface WebhookHub {
  state: { webhooks: WebhookTarget[]; deliveries: DeliveryRecord[]; faults: AtsFaults };
  random: () => number;
}

/** One change's webhooks: `deliveries` per target, sent `repeat` times (a resend is the same delivery, same id). */
export interface Change {
  action: string;
  deliveries(target: WebhookTarget): SignedDelivery[];
  repeat?: number | undefined;
  /** A recruiter's stage change, whose webhook the `dropStageChangeRate` fault may never send. */
  droppable?: boolean;
}

/** Sends a change to every webhook that takes its events, in order; answers each delivery's record. */
export async function sendChange(hub: WebhookHub, change: Change): Promise<DeliveryRecord[]> {
  const { state } = hub;
  if (change.droppable && state.faults.dropStageChangeRate > 0 && hub.random() < state.faults.dropStageChangeRate) {
    const dropped = { eventId: randomUUID(), url: '', action: change.action, at: Date.now(), dropped: true };
    state.deliveries.push(dropped);
    return [dropped];
  }
  const planned = state.webhooks.flatMap((target) =>
    change.deliveries(target).flatMap((delivery) => (receives(target, delivery.event) ? [{ target, delivery }] : [])),
  );
  const records: DeliveryRecord[] = [];
  for (let i = 0; i < Math.max(1, change.repeat ?? 1); i++)
    for (const { target, delivery } of planned)
      records.push(await deliverSigned(target, delivery, state.deliveries, change.action));
  return records;
}
