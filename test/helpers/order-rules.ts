import { expect, it } from 'vitest';
import { orderIdFor, type OrderRecord, type OrderStore } from '../../shared/orders/records';

/** Years ahead of the machine's clock, as mapping-rules.ts's: DynamoDB Local sweeps an item once its TTL passed. */
const NOW = Date.UTC(2036, 10, 26, 9, 0, 0);
let counter = 0;
/** A new order each call, received and not yet worked on. */
const newOrder = (): OrderRecord => {
  const n = ++counter;
  return {
    connectionId: 'acme',
    orderId: orderIdFor('greenhouse', 'acme', ['backend-screen', `https://app.greenhouse.io/people/${n}`, 'a@x.io']),
    source: 'greenhouse',
    testId: 'backend-screen',
    state: 'received',
    candidateEmail: `candidate-${n}@example.com`,
    completionUrl: 'https://app.greenhouse.io/integrations/testing_partners/take_home_tests/1',
    steps: {},
    createdAt: NOW,
    updatedAt: NOW,
  };
};
const lease = (owner: string, now = NOW) => ({ owner, now, durationMs: 60_000 });

/**
 * The order store's rules, one suite for every implementation: the DynamoDB store (integration lane) and the
 * in-memory one the use-case tests use (unit lane) must both hold them.
 */
export function orderRules(store: () => OrderStore): void {
  it('records an order once: the same order again is answered as it stands', async () => {
    const order = newOrder();
    expect(await store().recordOrder(order)).toEqual({ created: true, record: order });
    const again = await store().recordOrder({ ...order, candidateEmail: 'someone-else@example.com' });
    expect(again).toMatchObject({ created: false, record: { candidateEmail: order.candidateEmail } });
    expect(await store().getOrder(order)).toMatchObject({ orderId: order.orderId, state: 'received', steps: {} });
    expect(await store().getOrder({ connectionId: 'acme', orderId: 'ord_missing' })).toBeUndefined();
  });

  it('lets one worker claim its work, and the next only once the holder has stopped', async () => {
    const order = newOrder();
    await store().recordOrder(order);
    expect(await store().claimOrder(order, lease('w1'))).toMatchObject({ kind: 'claimed', resumed: false });
    expect(await store().claimOrder(order, lease('w2', NOW + 1000))).toEqual({ kind: 'held-elsewhere' });
    expect(await store().claimOrder(order, lease('w3', NOW + 61_000))).toMatchObject({
      kind: 'claimed',
      resumed: true,
    });
    const step = { name: 'interview', record: { doneAt: NOW } };
    await expect(store().recordOrderStep(order, { owner: 'w1', step })).rejects.toMatchObject({ code: 'lease-lost' });
    expect(await store().claimOrder({ connectionId: 'acme', orderId: 'ord_missing' }, lease('w4'))).toEqual({
      kind: 'missing',
    });
  });

  it('records steps under the claim, moves an order only as its states allow, then lets the claim go', async () => {
    const order = newOrder();
    await store().recordOrder(order);
    await store().claimOrder(order, lease('w1'));
    // Not from `received`: refused, nothing recorded.
    await expect(store().recordOrderStep(order, { owner: 'w1', move: 'invite' })).rejects.toMatchObject({
      code: 'lease-lost',
    });
    await store().recordOrderStep(order, {
      owner: 'w1',
      step: { name: 'interview', record: { doneAt: NOW } },
      move: 'createInterview',
      data: { interviewId: 'int-1' },
    });
    await store().recordOrderStep(order, { owner: 'w1', step: { name: 'inviteEmail', record: { startedAt: NOW } } });
    await store().recordOrderStep(order, { owner: 'w1', step: { name: 'inviteEmail', record: undefined } });
    await store().recordOrderStep(order, {
      owner: 'w1',
      step: { name: 'inviteEmail', record: { doneAt: NOW + 1 } },
      move: 'invite',
    });
    const invited = await store().getOrder(order);
    expect(invited).toMatchObject({
      state: 'invited',
      interviewId: 'int-1',
      steps: { interview: { doneAt: NOW }, inviteEmail: { doneAt: NOW + 1 } },
    });
    expect(invited?.steps.inviteEmail?.startedAt).toBeUndefined();
    expect(invited?.leaseOwner).toBeUndefined();
    expect(await store().claimOrder(order, lease('w2', NOW + 200_000))).toMatchObject({
      kind: 'done',
      record: { state: 'invited' },
    });
  });

  it('moves an order without a claim as its moves allow, and expires it only when old enough', async () => {
    const order = { ...newOrder(), state: 'invited' as const };
    await store().recordOrder(order);
    const early = await store().moveOrder(order, 'expire', { now: NOW + 1, receivedBefore: NOW - 1 });
    expect(early).toMatchObject({ moved: false, record: { state: 'invited' } });
    expect(await store().moveOrder(order, 'expire', { now: NOW + 2, receivedBefore: NOW + 1 })).toMatchObject({
      moved: true,
      record: { state: 'expired' },
    });
    // A report after the expiry still completes it; a second completion is refused, the record answered.
    const data = { reportId: 'rep-1', score: 80, profileUrl: 'https://r.example.com/1' };
    expect(await store().moveOrder(order, 'complete', { now: NOW + 3, data })).toMatchObject({
      moved: true,
      record: { state: 'completed', reportId: 'rep-1', score: 80 },
    });
    expect(await store().moveOrder(order, 'complete', { now: NOW + 4, data: { reportId: 'rep-2' } })).toMatchObject({
      moved: false,
      record: { reportId: 'rep-1' },
    });
    expect(await store().moveOrder({ connectionId: 'acme', orderId: 'ord_missing' }, 'cancel', { now: NOW })).toEqual({
      moved: false,
      record: undefined,
    });
  });

  it("claims an order's announcement once per end, and keeps it listed until its end is told", async () => {
    const order = { ...newOrder(), state: 'invited' as const, interviewId: `int-${Math.random()}` };
    await store().recordOrder(order);
    expect((await store().listOrdersWithWork('acme', 500)).map((o) => o.orderId)).toContain(order.orderId);
    expect(await store().claimOrder(order, lease('a1'), 'announce')).toMatchObject({ kind: 'done' });
    await store().moveOrder(order, 'complete', { now: NOW, data: { reportId: 'r', profileUrl: 'https://r.io/1' } });
    expect(await store().claimOrder(order, lease('a1'), 'announce')).toMatchObject({ kind: 'claimed' });
    expect(await store().claimOrder(order, lease('a2', NOW + 1), 'announce')).toEqual({ kind: 'held-elsewhere' });
    await store().recordOrderStep(order, { owner: 'a1', data: { announced: 'completed' }, release: true });
    expect(await store().claimOrder(order, lease('a3', NOW + 2), 'announce')).toMatchObject({ kind: 'done' });
    expect((await store().listOrdersWithWork('acme', 500)).map((o) => o.orderId)).not.toContain(order.orderId);
    expect(await store().findOrderByInterview(order.interviewId, order.candidateEmail)).toMatchObject({
      orderId: order.orderId,
      state: 'completed',
      announced: 'completed',
    });
    expect(await store().findOrderByInterview(order.interviewId, 'someone@else.io')).toBeUndefined();
  });
}
