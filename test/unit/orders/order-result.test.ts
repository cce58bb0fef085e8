import { afterEach, describe, expect, it, vi } from 'vitest';
import { OutwardCallError } from '../../../shared/errors';
import { announceRefused, ashbyUpdateOf, greenhouseAnnouncer } from '../../../shared/orders/announce';
import { completeOrderWithReport, OrderNotInvitedError } from '../../../shared/orders/order-result.use-case';
import { handleOrderWork } from '../../../shared/orders/order-work.use-case';
import { ordersDue } from '../../../shared/orders/orders-due';
import type { OrderRecord } from '../../../shared/orders/records';
import { connectionDocument } from '../../helpers/connections';
import { MemoryMappingStore } from '../../helpers/memory-store';
import { greenhouseOrder, MemoryOrderStore } from '../../helpers/memory-orders';
import { dependencies, fakeContext } from '../../helpers/pipeline-fakes';
import { NOW, reportFactory } from '../../helpers/pipeline-records';

const QUESTIONS = [{ question: 'Walk us through a system you built.', time: 3, type: 'audio' }];
const TEST = { id: 'backend-screen', name: 'Backend screen', interview: { questions: QUESTIONS }, expireAfterDays: 7 };
const DAY = 86_400_000;

afterEach(() => vi.unstubAllGlobals());

/** An order invited for interview `int-1`, its ATS told through `announce`. */
async function invitedOrder(overrides: Partial<OrderRecord> = {}) {
  const { context } = fakeContext(connectionDocument({ orders: { greenhouse: { tests: [TEST] } } }));
  const orders = new MemoryOrderStore();
  const order = greenhouseOrder(NOW, {
    state: 'invited',
    interviewId: 'int-1',
    completionUrl: 'https://app.greenhouse.io/integrations/testing_partners/take_home_tests/7',
    ...overrides,
  });
  await orders.recordOrder(order);
  const announce = vi.fn(async (_order: OrderRecord, _signal?: AbortSignal) => undefined);
  const base = dependencies(new MemoryMappingStore(), context);
  const deps = { ...base, orders, announcerFor: () => ({ announce }), now: () => NOW + DAY };
  return { context, orders, order, announce, deps };
}

describe('An order completed by its report, and told to the ATS', () => {
  it('completes with the score and the public link, tells the ATS once, and a repeat changes nothing', async () => {
    const { context, orders, order, announce, deps } = await invitedOrder();
    expect(await completeOrderWithReport(context, reportFactory(), deps)).toBe('order-completed');
    expect(await completeOrderWithReport(context, reportFactory(), deps)).toBe('order-already-completed');
    expect(announce).toHaveBeenCalledTimes(1);
    expect(await orders.getOrder(order)).toMatchObject({
      state: 'completed',
      reportId: 'rep-1',
      score: 82,
      profileUrl: 'https://files.example.com/r.pdf',
      announced: 'completed',
    });
    expect(await orders.listOrdersWithWork(order.connectionId, 10)).toEqual([]);
  });

  it('never completes without a public https link (Greenhouse would show nothing)', async () => {
    const { context, orders, order, announce, deps } = await invitedOrder();
    const report = reportFactory({ report_url: 'http://files.example.com/r.pdf' });
    expect(await completeOrderWithReport(context, report, deps)).toBe('order-no-public-link');
    expect(await orders.getOrder(order)).toMatchObject({ state: 'invited' });
    expect(announce).not.toHaveBeenCalled();
  });

  it('answers undefined for a report no order of this connection has', async () => {
    const { context, deps } = await invitedOrder();
    expect(await completeOrderWithReport(context, reportFactory({ interview_id: 'other' }), deps)).toBeUndefined();
    expect(await completeOrderWithReport(context, reportFactory({ candidate_email_id: null }), deps)).toBeUndefined();
  });

  it('sends a report for an order still being invited back to wait; another report is not taken', async () => {
    const waiting = await invitedOrder({ state: 'interview_created' });
    await expect(completeOrderWithReport(waiting.context, reportFactory(), waiting.deps)).rejects.toBeInstanceOf(
      OrderNotInvitedError,
    );
    const { context, deps } = await invitedOrder();
    await completeOrderWithReport(context, reportFactory(), deps);
    expect(await completeOrderWithReport(context, reportFactory({ report_id: 'rep-2' }), deps)).toBe(
      'order-other-report',
    );
  });

  it('hands the announcement back when the ATS refuses it, and tells it on the next attempt', async () => {
    const { context, orders, order, announce, deps } = await invitedOrder();
    announce.mockRejectedValueOnce(announceRefused('greenhouse', 403, new Headers()));
    await expect(completeOrderWithReport(context, reportFactory(), deps)).rejects.toMatchObject({
      code: 'announce-unauthorized',
      retryable: true,
    });
    // Completed, not yet told: the reconciler sees it (once no one has touched it for a while), and the retried
    // message tells it.
    const told = (await orders.getOrder(order)) as OrderRecord;
    expect(told).toMatchObject({ state: 'completed' });
    expect(told.announced).toBeUndefined();
    expect(ordersDue(context.connection, [told], NOW + DAY)).toEqual([]);
    expect(ordersDue(context.connection, [told], NOW + DAY + 3 * 60_000)).toEqual([
      { orderId: order.orderId, action: 'announce' },
    ]);
    expect(await completeOrderWithReport(context, reportFactory(), deps)).toBe('order-already-completed');
    expect(announce).toHaveBeenCalledTimes(2);
    expect(await orders.getOrder(order)).toMatchObject({ announced: 'completed' });
  });

  it('records a refusal for good (the ATS no longer has the test) with its reason, and never retries it', async () => {
    const { context, orders, order, announce, deps } = await invitedOrder();
    announce.mockRejectedValueOnce(announceRefused('greenhouse', 404, new Headers()));
    expect(await completeOrderWithReport(context, reportFactory(), deps)).toBe('order-completed');
    const told = (await orders.getOrder(order)) as OrderRecord;
    expect(told).toMatchObject({ state: 'completed', announced: 'completed', failureReason: /^announce-refused/ });
    expect(ordersDue(context.connection, [told], NOW + 2 * DAY)).toEqual([]);
    expect(await orders.listOrdersWithWork(order.connectionId, 10)).toEqual([]);
  });

  it('expires an order past its days, tells the ATS, and a late report still completes it', async () => {
    const { context, orders, order, announce, deps } = await invitedOrder();
    const message = { v: 1 as const, kind: 'order-work' as const, enqueueId: 'e', receivedAt: NOW, ...order };
    // Not yet: 1 day of 7.
    expect(await handleOrderWork({ ...message, action: 'expire' }, deps)).toEqual({ outcome: 'nothing-to-tell' });
    expect(ordersDue(context.connection, [order], NOW + 8 * DAY)).toEqual([
      { orderId: order.orderId, action: 'expire' },
    ]);
    const later = { ...deps, now: () => NOW + 8 * DAY };
    expect(await handleOrderWork({ ...message, action: 'expire' }, later)).toEqual({ outcome: 'expired' });
    expect(announce.mock.calls[0]?.[0]).toMatchObject({ state: 'expired' });
    expect(await completeOrderWithReport(context, reportFactory(), later)).toBe('order-completed');
    expect(announce.mock.calls.map(([o]) => o.state)).toEqual(['expired', 'completed']);
    expect(await orders.getOrder(order)).toMatchObject({ state: 'completed', announced: 'completed' });
  });
});

describe("How each ATS is told of an order's end", () => {
  const completed: OrderRecord = {
    connectionId: 'acme',
    orderId: 'ord_1',
    source: 'greenhouse',
    testId: 'backend-screen',
    state: 'completed',
    candidateEmail: 'a@x.io',
    completionUrl: 'https://app.greenhouse.io/integrations/testing_partners/take_home_tests/7',
    score: 82,
    profileUrl: 'https://files.example.com/r.pdf',
    steps: {},
    createdAt: NOW,
    updatedAt: NOW,
  };

  it("Greenhouse: a PATCH of the send_test url, no body, with Greenhouse's own credential", async () => {
    const { context } = fakeContext();
    context.secrets.greenhouseCompletionKey = 'issued-by-greenhouse';
    const fetch = vi.fn(async (..._args: unknown[]) => new Response(null, { status: 204 }));
    vi.stubGlobal('fetch', fetch);
    await greenhouseAnnouncer(context).announce(completed, undefined);
    const [url, init] = fetch.mock.calls[0] as [string, RequestInit];
    expect(url).toBe(completed.completionUrl);
    // A redirect is an answer, not followed: the credential goes to the URL Greenhouse gave, nowhere else.
    expect(init).toMatchObject({ method: 'PATCH', body: undefined, redirect: 'manual' });
    expect((init.headers as Record<string, string>).authorization).toBe(
      `Basic ${Buffer.from('issued-by-greenhouse:').toString('base64')}`,
    );
    fetch.mockResolvedValueOnce(new Response('{}', { status: 403 }));
    await expect(greenhouseAnnouncer(context).announce(completed, undefined)).rejects.toMatchObject({
      code: 'announce-unauthorized',
      retryable: true,
    });
    delete context.secrets.greenhouseCompletionKey;
    await expect(greenhouseAnnouncer(context).announce(completed, undefined)).rejects.toBeInstanceOf(OutwardCallError);
  });

  it("Greenhouse: never sends the credential to an order's URL off Greenhouse's hosts", async () => {
    const { context } = fakeContext();
    context.secrets.greenhouseCompletionKey = 'issued-by-greenhouse';
    const fetch = vi.fn(async (..._args: unknown[]) => new Response(null, { status: 204 }));
    vi.stubGlobal('fetch', fetch);
    for (const completionUrl of ['https://attacker.example/collect', 'https://app.greenhouse.io.evil.example/x'])
      await expect(
        greenhouseAnnouncer(context).announce({ ...completed, completionUrl }, undefined),
      ).rejects.toMatchObject({ code: 'no-completion-url', retryable: false });
    expect(fetch).not.toHaveBeenCalled();
  });

  it('Greenhouse: follows one redirect to another Greenhouse host, none elsewhere', async () => {
    const { context } = fakeContext();
    context.secrets.greenhouseCompletionKey = 'issued-by-greenhouse';
    const redirect = (location: string) => new Response(null, { status: 307, headers: { location } });
    const fetch = vi.fn(async (..._args: unknown[]) => new Response(null, { status: 204 }));
    vi.stubGlobal('fetch', fetch);
    fetch.mockResolvedValueOnce(
      redirect('https://app.eu.greenhouse.io/integrations/testing_partners/take_home_tests/7'),
    );
    await greenhouseAnnouncer(context).announce(completed, undefined);
    expect(fetch.mock.calls.map(([url]) => url)).toEqual([
      completed.completionUrl,
      'https://app.eu.greenhouse.io/integrations/testing_partners/take_home_tests/7',
    ]);
    fetch.mockClear();
    fetch.mockResolvedValueOnce(redirect('https://attacker.example/collect'));
    await expect(greenhouseAnnouncer(context).announce(completed, undefined)).rejects.toMatchObject({
      retryable: false,
    });
    expect(fetch).toHaveBeenCalledOnce();
  });

  it('reads a refusal: 429 and 5xx retried after the wait, other 4xx for good', () => {
    expect(announceRefused('ashby', 429, new Headers({ 'retry-after': '3' }))).toMatchObject({
      retryable: true,
      rateLimited: true,
      retryAfterMs: 3000,
    });
    expect(announceRefused('ashby', 503, new Headers())).toMatchObject({ retryable: true, definitelyNotSent: false });
    expect(announceRefused('ashby', 404, new Headers())).toMatchObject({ retryable: false, code: 'announce-refused' });
  });

  it('Ashby: the result, the report as the profile link, stable identifiers; or cancelled_reason', () => {
    const update = ashbyUpdateOf({ ...completed, source: 'ashby' }, NOW);
    expect(update).toMatchObject({
      assessment_id: 'ord_1',
      timestamp: NOW,
      assessment_status: { type: 'string', value: 'Completed' },
      assessment_result: { identifier: 'ai_match_score', type: 'numeric_score', value: 82 },
      assessment_profile_url: { identifier: 'report', type: 'url', value: 'https://files.example.com/r.pdf' },
    });
    const expired = ashbyUpdateOf({ ...completed, state: 'expired' }, NOW);
    expect(expired).toMatchObject({ cancelled_reason: { identifier: 'cancelled_reason', type: 'string' } });
    expect(expired).not.toHaveProperty('assessment_result');
  });
});
