import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { KomboApi } from '../../../shared/orders/kombo-client';
import {
  fetchMissedKomboOrders,
  handleKomboWebhook,
  komboSignatureMatches,
  komboSignatureOf,
} from '../../../shared/orders/kombo-orders';
import { BACKEND_SCREEN, orderingConnection, partnerDependencies } from '../../helpers/partner-calls';

const connection = orderingConnection({
  orders: { kombo: { integrations: ['teamtailor:globex', 'workday:initech'], tests: [BACKEND_SCREEN] } },
});
const SECRET = 'kombo-webhook-secret-0123456789';

function kombo() {
  const { orders, queued, deps, pause } = partnerDependencies(connection, { komboWebhookSecret: SECRET });
  /** `signature: null` sends none. */
  const deliver = (
    raw: string,
    signature: string | null = komboSignatureOf(SECRET, Buffer.from(raw)),
    id = connection?.id ?? '',
  ) =>
    handleKomboWebhook(
      id,
      {
        call: id,
        method: 'POST',
        headers: signature === null ? {} : { 'x-kombo-signature': signature },
        query: new URLSearchParams(),
        rawBody: Buffer.from(raw),
      },
      deps,
    );
  return { orders, queued, deliver, deps, pause };
}

/** `assessment:order-received` as Kombo's SDK models it: every field but the candidate's e-mail null. */
const orderData = (overrides: Record<string, unknown> = {}) => ({
  id: 'B5KQKhAgsT3ZW6wQjVaTfLJs',
  package_id: 'backend-screen',
  status: 'OPEN',
  integration_id: 'teamtailor:globex',
  candidate: { email: 'Ada@Example.com', remote_id: null, first_name: null, last_name: null, phone: null },
  application: { remote_id: null },
  job: { remote_id: null, name: null, job_code: null, description: null, location: null, hiring_team: [] },
  ...overrides,
});
const event = (data: unknown = orderData(), type = 'assessment:order-received') =>
  JSON.stringify({ id: 'evt_1', type, data });

describe('Kombo order webhook', () => {
  it('signs as Kombo documents: HMAC-SHA256 of the body, base64url without padding; nothing else matches', () => {
    const raw = Buffer.from(event());
    const digest = createHmac('sha256', SECRET).update(raw).digest();
    expect(komboSignatureOf(SECRET, raw)).toBe(digest.toString('base64url'));
    expect(komboSignatureMatches(SECRET, raw, digest.toString('base64url'))).toBe(true);
    for (const other of [digest.toString('base64'), digest.toString('hex'), `${digest.toString('base64url')}=`, ''])
      expect(komboSignatureMatches(SECRET, raw, other)).toBe(false);
  });

  it('refuses a forged or re-serialised body with 401 before reading it: nothing recorded or queued', async () => {
    const { deliver, orders, queued } = kombo();
    const raw = event();
    const reserialised = JSON.stringify(JSON.parse(raw), null, 2);
    expect(await deliver(reserialised, komboSignatureOf(SECRET, Buffer.from(raw)))).toMatchObject({ status: 401 });
    expect(await deliver('not JSON', 'forged')).toMatchObject({ status: 401 });
    expect(await deliver(raw, komboSignatureOf('another-secret-of-16+', Buffer.from(raw)))).toMatchObject({
      status: 401,
    });
    expect(await deliver(raw, null)).toMatchObject({ status: 401 });
    expect(await deliver(raw, komboSignatureOf(SECRET, Buffer.from(raw)), 'no-such-connection')).toMatchObject({
      status: 401,
    });
    expect(orders.orders.size).toBe(0);
    expect(queued).toHaveLength(0);
  });

  it('rejects an order while the connection is off (422, shown in the ATS): nothing recorded or queued', async () => {
    const { deliver, orders, queued, pause } = kombo();
    pause();
    expect(await deliver(event())).toMatchObject({ status: 422, body: { message: expect.stringContaining('paused') } });
    expect([orders.orders.size, queued.length]).toEqual([0, 0]);
  });

  it('records a delivery once, answers 2xx and queues it; a duplicate finds it and makes nothing new', async () => {
    const { deliver, orders, queued } = kombo();
    expect(await deliver(event())).toMatchObject({ status: 200 });
    expect(await deliver(event())).toMatchObject({ status: 200 });
    expect(orders.orders.size).toBe(1);
    const [order] = [...orders.orders.values()];
    expect(order).toMatchObject({
      source: 'kombo',
      atsOrderId: 'B5KQKhAgsT3ZW6wQjVaTfLJs',
      integrationId: 'teamtailor:globex',
      testId: 'backend-screen',
      candidateEmail: 'ada@example.com',
      state: 'received',
    });
    expect(order?.candidateName).toBeUndefined();
    // Queued while it waits for its work (the worker makes each step once); one order all the same.
    expect(new Set(queued.map((q) => q.orderId))).toEqual(new Set([order?.orderId]));
  });

  it('a crash between recording and queueing loses nothing: no 2xx, and the next delivery queues it', async () => {
    const { deliver, orders, queued, deps } = kombo();
    const enqueue = deps.enqueue;
    deps.enqueue = async () => {
      throw new Error('SQS unreachable');
    };
    // Kombo gets no 2xx: the order stays OPEN there (a delivery again, or the reconciler's fetch, brings it back).
    await expect(deliver(event())).rejects.toThrow('SQS unreachable');
    expect([...orders.orders.values()].map((o) => o.state)).toEqual(['received']);
    deps.enqueue = enqueue;
    expect(await deliver(event())).toMatchObject({ status: 200 });
    expect(orders.orders.size).toBe(1);
    expect(queued).toHaveLength(1);
  });

  it('answers 422 with a message for the recruiter: unknown package, no e-mail, integration not set up', async () => {
    const { deliver, orders } = kombo();
    const cases = [
      [orderData({ package_id: 'gone' }), /no longer offered/],
      [orderData({ candidate: { email: 'not an address', first_name: null } }), /no valid e-mail/],
      [orderData({ integration_id: 'greenhouse:someone-else' }), /not set up for this ATS account/],
    ] as const;
    for (const [data, message] of cases) {
      const answer = await deliver(event(data));
      expect(answer.status).toBe(422);
      expect((answer.body as { message: string }).message).toMatch(message);
    }
    expect(orders.orders.size).toBe(0);
  });

  it('rejects a signed order it cannot read (422 naming the field); takes other events, no order', async () => {
    const { deliver, orders } = kombo();
    // As unreadable on every delivery and fetch: rejected, so the recruiter sees why rather than waiting.
    const missingId = await deliver(event(orderData({ id: undefined })));
    expect(missingId.status).toBe(422);
    expect(JSON.stringify(missingId.body)).toMatch(/data\.id/);
    const notJson = await deliver('{"id":');
    expect(notJson).toMatchObject({ status: 400, body: { message: 'body: expected a JSON document' } });
    expect(await deliver(event({ changed_models: [] }, 'data-changed'))).toMatchObject({ status: 200 });
    expect(orders.orders.size).toBe(0);
  });
});

describe('Kombo orders missed while the webhook was down', () => {
  const page = (ids: string[], next?: string) => ({
    orders: ids.map((id) => ({ ...orderData({ id }), candidate: { email: `${id}@example.com` } }) as never),
    statuses: [],
    unreadable: 1,
    next,
  });

  it('fetches each integration’s recent OPEN orders, cursor by cursor: one order per Kombo order', async () => {
    const { deliver, orders, queued, deps } = kombo();
    await deliver(event(orderData({ id: 'a' })));
    const asked: string[] = [];
    const api: Pick<KomboApi, 'listOrders'> = {
      async listOrders(integrationId, query) {
        asked.push(`${integrationId} ${query.statuses?.join(',')} ${query.cursor ?? '-'} ${query.createdAfter}`);
        // One integration that cannot be read (disconnected in Kombo) stops none of the others.
        if (integrationId === 'workday:initech') throw new Error('401 from Kombo');
        return query.cursor ? page(['c']) : page(['a', 'b'], 'page-2');
      },
    };
    const totals = await fetchMissedKomboOrders(connection as never, api as KomboApi, deps);
    // Orders created within the longest expiry (14 days) and a day: older ones would only expire.
    const since = new Date(Date.UTC(2026, 10, 26) - 15 * 86_400_000).toISOString();
    expect(asked).toEqual([
      `teamtailor:globex OPEN - ${since}`,
      `teamtailor:globex OPEN page-2 ${since}`,
      `workday:initech OPEN - ${since}`,
    ]);
    expect(totals).toEqual({ recorded: 2, unreadable: 2, unknownPackage: 0, failedIntegrations: 1 });
    expect([...orders.orders.values()].map((o) => o.atsOrderId).sort()).toEqual(['a', 'b', 'c']);
    // The order its webhook recorded is queued again only while it waits: still one order.
    expect(new Set(queued.map((q) => q.atsOrderId))).toEqual(new Set(['a', 'b', 'c']));
  });
});
