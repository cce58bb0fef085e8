import { randomUUID } from 'node:crypto';
import type { VendorProfile } from '../../../../shared/ats/profile';
import { signatureFor } from '../../../../shared/ats/signatures';
import { postWebhook } from '../http-kit';
import type { AtsFaults } from './edge';

/**
 * Where a webhook goes: `secret` the customer chose (Greenhouse, Ashby, Workable), `issued` the ATS's own per event
 * type (Lever: one webhook and one signature token per event); `id` the ATS's, when made through its API; `events`
 * it is for (every event when absent: one registered by the control); `enabled: false` kept but sent nothing.
 */
export type WebhookTarget = { url: string; secret: string; issued?: Record<string, string> | undefined } & {
  id?: string;
  events?: string[];
  enabled?: boolean;
};

/** `dropped`: never sent, as the stage change's webhook was dropped (a fault of the sandbox). */
export type DeliveryRecord = { eventId: string; url: string; action: string; at: number } & {
  status?: number;
  error?: string;
  dropped?: boolean;
};

/** `event`: the ATS's event type, which decides the webhooks it goes to. */
export type SignedDelivery = { body: Buffer; headers: Record<string, string>; eventId: string; event?: string };
/**
 * A webhook signed as the profile says, with the secret issued for its event or the customer's: in a header over the
 * raw body, or over `token + triggeredAt` in the body (Lever). `serialize`: the vendor's JSON (Greenhouse's escapes).
 */
export function signDelivery(
  scheme: VendorProfile['signature'],
  target: WebhookTarget,
  document: Record<string, unknown>,
  options: { event: string; serialize?: (document: unknown) => Buffer },
): SignedDelivery {
  const { event, serialize = (d: unknown) => Buffer.from(JSON.stringify(d)) } = options;
  const secret = target.issued?.[event] ?? target.secret;
  const eventId = randomUUID();
  if (scheme.signs === 'token+triggeredAt') {
    const [token, triggeredAt] = [eventId.replaceAll('-', ''), Date.now()];
    const signature = signatureFor(scheme, secret, `${token}${triggeredAt}`);
    return { body: serialize({ triggeredAt, ...document, token, signature }), headers: {}, eventId: token, event };
  }
  const body = serialize(document);
  const headers: Record<string, string> = {};
  if (scheme.header) headers[scheme.header.toLowerCase()] = signatureFor(scheme, secret, body);
  if (scheme.deliveryHeader) headers[scheme.deliveryHeader.toLowerCase()] = eventId;
  return { body, headers, eventId, event };
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
  const answer = await postWebhook(target.url, delivery.body, { headers: delivery.headers });
  return Object.assign(record, 'error' in answer ? { error: answer.error } : { status: answer.status });
}

/** Where a sandbox's webhooks go and are recorded, with the draw that decides a dropped stage change. */
export type WebhookHub = {
  state: { webhooks: WebhookTarget[]; deliveries: DeliveryRecord[]; faults: AtsFaults };
  random: () => number;
};

/** A change's webhooks are sent `repeat` times (the same delivery); `droppable`: a stage change a fault may drop. */
export type ChangeOptions = { repeat?: number | undefined; droppable?: boolean };
type Change = { action: string; deliveries(target: WebhookTarget): SignedDelivery[] } & ChangeOptions;

/** Sends a change to every webhook that takes its events, in order; answers each delivery's record. */
export async function sendChange(hub: WebhookHub, change: Change): Promise<DeliveryRecord[]> {
  const { state } = hub;
  if (change.droppable && state.faults.dropStageChangeRate > 0 && hub.random() < state.faults.dropStageChangeRate) {
    const dropped = { eventId: randomUUID(), url: '', action: change.action, at: Date.now(), dropped: true };
    state.deliveries.push(dropped);
    return [dropped];
  }
  const takes = (target: WebhookTarget, event?: string) =>
    target.enabled !== false && (event === undefined || target.events === undefined || target.events.includes(event));
  const planned = state.webhooks.flatMap((target) =>
    change.deliveries(target).flatMap((delivery) => (takes(target, delivery.event) ? [{ target, delivery }] : [])),
  );
  const records: DeliveryRecord[] = [];
  for (let i = 0; i < Math.max(1, change.repeat ?? 1); i++)
    for (const { target, delivery } of planned)
      records.push(await deliverSigned(target, delivery, state.deliveries, change.action));
  return records;
}
