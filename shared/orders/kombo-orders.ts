import { timingSafeEqual } from 'node:crypto';
import * as v from 'valibot';
import type { Connection, ConnectionSecrets } from '../config';
import { hmacSha256 } from '../http';
import { normaliseEmail } from '../pipeline/records';
import { describeFirstIssue } from '../validation';
import { errorCode } from '../errors';
import { komboClient, type KomboApi } from './kombo-client';
import { komboEventSchema, komboOrderReceivedSchema, type KomboOrder } from './kombo.schemas';
import { PAUSED_ORDER, type PartnerAnswer, type PartnerDependencies, type PartnerRequest } from './partner-calls';
import { orderIdFor, type OrderRecord } from './records';

/**
 * Kombo's Assessment API as an order source (assessment-partner facts, section 4): Kombo POSTs a signed
 * `assessment:order-received` to `/orders/kombo/{connection id}`; the order is recorded once (its id a digest of
 * Kombo's), answered 2xx and worked through the queue. A permanent problem answers 422 `{message}`, which the ATS
 * shows the recruiter; any other failure leaves the order OPEN in Kombo, and the reconciler fetches it.
 */
export type KomboConfig = NonNullable<NonNullable<Connection['orders']>['kombo']>;

/**
 * `X-Kombo-Signature`: HMAC-SHA256 of the body, keyed by the webhook secret, base64url without padding (Kombo's
 * webhook docs). Whether Kombo signs the bytes it sends or a re-serialisation is unconfirmed (assessment-partner
 * facts, section 4): the bytes are what is checked here, and this line is the one to change once Kombo's hosted
 * sandbox shows otherwise. Until then a refused signature leaves the order OPEN, and the reconciler fetches it.
 */
export const komboSignatureOf = (secret: string, rawBody: Buffer): string =>
  hmacSha256(secret, rawBody).toString('base64url');

/** Whether `received` is the body's signature, in exactly the encoding above, compared in constant time. */
export function komboSignatureMatches(secret: string, rawBody: Buffer, received: string | undefined): boolean {
  const expected = Buffer.from(komboSignatureOf(secret, rawBody));
  const given = Buffer.from(received?.trim() ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const ORDER_RECEIVED = 'assessment:order-received';
const INLINE_ORDER_RECEIVED = 'inline-assessment:order-received';

/** Kombo shows a 422's `message` to the recruiter, and the order is rejected. */
const toRecruiter = (message: string): PartnerAnswer => ({ status: 422, body: { message } });
const refusal = (status: number, message: string): PartnerAnswer => ({ status, body: { message } });

export async function handleKomboWebhook(
  connectionId: string,
  request: PartnerRequest,
  deps: PartnerDependencies,
): Promise<PartnerAnswer> {
  if (request.method !== 'POST') return refusal(405, 'the webhook takes POST');
  // Authenticated before anything of the body is read: an unknown connection and a bad signature answer alike.
  const found = await deps.connectionFor(connectionId);
  const kombo = found?.connection.orders?.kombo;
  const secret = found?.secrets.komboWebhookSecret;
  if (
    !found ||
    !kombo ||
    !secret ||
    !komboSignatureMatches(secret, request.rawBody, request.headers['x-kombo-signature'])
  )
    return refusal(401, 'X-Kombo-Signature does not match the body');
  let document: unknown;
  try {
    document = JSON.parse(request.rawBody.toString('utf8'));
  } catch {
    return refusal(400, 'body: expected a JSON document');
  }
  const event = v.safeParse(komboEventSchema, document);
  if (!event.success) return refusal(400, describeFirstIssue(event.issues, { fallbackField: 'body' }).message);
  if (event.output.type === INLINE_ORDER_RECEIVED)
    return toRecruiter('This AI interview is sent to the candidate by e-mail; it cannot be taken inline.');
  // Other events (a data change, an integration's state) are not orders: taken and left.
  if (event.output.type !== ORDER_RECEIVED) return { status: 200, body: { ignored: event.output.type } };
  // Rejected (the ATS shows why), so it is not left open for the reconciler to fetch once the connection is on again.
  if (found.disabled) return toRecruiter(PAUSED_ORDER);
  const parsed = v.safeParse(komboOrderReceivedSchema, event.output.data);
  if (!parsed.success) {
    const issue = describeFirstIssue(parsed.issues, { fallbackField: 'data' });
    if (issue.message.startsWith('candidate.email'))
      return toRecruiter('The candidate has no valid e-mail address, so the AI interview cannot be sent.');
    // Signed by Kombo and unreadable all the same: it would be so on every delivery and fetch, so it is rejected.
    return toRecruiter(`The order could not be read (data.${issue.message}); the AI interview was not sent.`);
  }
  const order = parsed.output;
  if (!kombo.integrations.includes(order.integration_id))
    return toRecruiter('AI interviews are not set up for this ATS account: ask the interview vendor to add it.');
  const answer = await recordKomboOrder(
    { connection: found.connection, integrationId: order.integration_id, order },
    deps,
  );
  if (answer.kind === 'unknown-package')
    return toRecruiter(`This AI interview (${order.package_id}) is no longer offered: choose another assessment.`);
  deps.logger.info('kombo order received', {
    connectionId,
    orderId: answer.record?.orderId,
    eventId: event.output.id,
    integrationId: order.integration_id,
    created: answer.kind === 'recorded',
  });
  return { status: 200, body: {} };
}

export type RecordKomboOutcome =
  | { kind: 'recorded' | 'known'; record: OrderRecord }
  | { kind: 'not-open' | 'unknown-package'; record?: undefined };

/**
 * Records a Kombo order once (its id a digest of the integration and Kombo's order id: a delivery again, or the
 * reconciler's fetch of it, finds it recorded) and queues its work while it waits for it.
 */
export async function recordKomboOrder(
  placed: { connection: Connection; integrationId: string; order: KomboOrder },
  deps: Pick<PartnerDependencies, 'orders' | 'enqueue' | 'now'>,
): Promise<RecordKomboOutcome> {
  const { connection, integrationId, order } = placed;
  if (order.status !== 'OPEN') return { kind: 'not-open' };
  if (!connection.orders?.kombo?.tests.some((t) => t.id === order.package_id)) return { kind: 'unknown-package' };
  const now = deps.now();
  const name = [order.candidate.first_name, order.candidate.last_name].filter(Boolean).join(' ');
  const { created, record } = await deps.orders.recordOrder({
    connectionId: connection.id,
    orderId: orderIdFor('kombo', connection.id, [integrationId, order.id]),
    source: 'kombo',
    testId: order.package_id,
    state: 'received',
    candidateEmail: normaliseEmail(order.candidate.email),
    candidateName: name || undefined,
    atsOrderId: order.id,
    integrationId,
    atsCandidateId: order.candidate.remote_id ?? undefined,
    atsApplicationId: order.application?.remote_id ?? undefined,
    steps: {},
    createdAt: now,
    updatedAt: now,
  });
  // Until its work has begun, every delivery of the order queues it (the worker makes each step once).
  if (record.state === 'received') await deps.enqueue(record);
  return { kind: created ? 'recorded' : 'known', record };
}

/** How many pages (of 250) of OPEN orders one reconciler run reads per integration; the rest, the next run. */
const MAX_PAGES = 10;

export interface MissedOrdersTotals {
  recorded: number;
  unreadable: number;
  unknownPackage: number;
  failedIntegrations: number;
}

/**
 * Orders missed while the webhook was down (Kombo keeps them OPEN): `GET /assessment/orders?statuses=OPEN` for
 * each integration, cursor by cursor, each order recorded and queued as its webhook would have been.
 */
export async function fetchMissedKomboOrders(
  connection: Connection,
  api: KomboApi,
  deps: Pick<PartnerDependencies, 'orders' | 'enqueue' | 'now' | 'logger'>,
  signal?: AbortSignal,
): Promise<MissedOrdersTotals> {
  const kombo = connection.orders?.kombo;
  const totals = { recorded: 0, unreadable: 0, unknownPackage: 0, failedIntegrations: 0 };
  if (!kombo) return totals;
  // Orders older than their test's expiry would only expire: the look-back is the longest expiry and a day.
  const lookBackDays = Math.max(...kombo.tests.map((t) => t.expireAfterDays)) + 1;
  const createdAfter = new Date(deps.now() - lookBackDays * 86_400_000).toISOString();
  for (const integrationId of kombo.integrations) {
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_PAGES && !signal?.aborted; page++) {
        const listed = await api.listOrders(integrationId, { statuses: ['OPEN'], createdAfter, cursor }, signal);
        totals.unreadable += listed.unreadable;
        for (const order of listed.orders) {
          const outcome = await recordKomboOrder({ connection, integrationId, order }, deps);
          if (outcome.kind === 'recorded') totals.recorded++;
          if (outcome.kind === 'unknown-package') totals.unknownPackage++;
        }
        cursor = listed.next;
        if (!cursor) break;
      }
    } catch (error) {
      if (signal?.aborted) throw error;
      // One integration that cannot be read (disconnected in Kombo, say) does not stop the others: said, retried.
      totals.failedIntegrations++;
      deps.logger.warn('kombo: the orders of one integration could not be read', {
        connectionId: connection.id,
        integrationId,
        code: errorCode(error),
      });
    }
  }
  if (totals.recorded || totals.unreadable || totals.unknownPackage || totals.failedIntegrations)
    deps.logger.info('kombo: missed orders fetched', { connectionId: connection.id, ...totals });
  return totals;
}

/** The connection's Kombo API, when it takes Kombo orders and its secret holds the key. */
export function komboApiFor(
  connection: Connection,
  secrets: Pick<ConnectionSecrets, 'komboApiKey'>,
  timeoutMs = 10_000,
): KomboApi | undefined {
  const kombo = connection.orders?.kombo;
  if (!kombo || !secrets.komboApiKey) return undefined;
  return komboClient({ baseUrl: kombo.baseUrl, apiKey: secrets.komboApiKey, timeoutMs });
}
