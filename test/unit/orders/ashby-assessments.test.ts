import { describe, expect, it } from 'vitest';
import { type AshbyCall, handleAshbyPartner } from '../../../shared/orders/ashby-assessments';
import { issuePartnerKey } from '../../../shared/orders/partner-calls';
import { orderIdFor } from '../../../shared/orders/records';
import { BACKEND_SCREEN, orderingConnection, partnerDependencies } from '../../helpers/partner-calls';

const connection = orderingConnection({ ats: 'ashby', orders: { ashby: { tests: [BACKEND_SCREEN] } } });
const KEY = issuePartnerKey(connection.id);
const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

function ashby() {
  const { orders, queued, deps, pause } = partnerDependencies(connection, { ashbyPartnerKey: KEY });
  const call = (name: AshbyCall, body: unknown, key = KEY) =>
    handleAshbyPartner(
      {
        call: name,
        method: 'POST',
        headers: { authorization: basic(key) },
        query: new URLSearchParams(),
        rawBody: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
      },
      deps,
    );
  return { orders, queued, call, pause };
}

/** `assessment.start` as Ashby sends it (ASPEC), with a field the connector does not read. */
const start = (overrides: Record<string, unknown> = {}) => ({
  assessment_type_id: 'backend-screen',
  candidate: {
    ashby_id: 'c-1',
    first_name: 'Kemi',
    last_name: 'Adeyemi',
    email: 'Kemi@Example.com',
    ashby_profile_url: 'https://app.ashbyhq.com/candidates/c-1',
  },
  application: { ashby_id: 'a-1', status: 'Active' },
  job: { ashby_id: 'j-1', name: 'Backend', ashby_job_url: 'https://app.ashbyhq.com/jobs/j-1', hiringTeam: [] },
  additional_fields: { department: 'eng' },
  ...overrides,
});

describe('Ashby Assessments endpoints', () => {
  it('answers 401 to a key that is not the connection’s, before it reads the body', async () => {
    const { call, orders } = ashby();
    for (const key of ['nobody.x', `${KEY}x`, issuePartnerKey('other')])
      expect(await call('assessment.start', 'not JSON', key)).toMatchObject({ status: 401 });
    expect(orders.orders.size).toBe(0);
  });

  it('refuses a start while the connection is off, with a message for the recruiter; nothing queued', async () => {
    const { call, orders, queued, pause } = ashby();
    pause();
    const answer = await call('assessment.start', start());
    expect(answer).toMatchObject({ status: 422, body: { message: expect.stringContaining('paused') } });
    expect([orders.orders.size, queued.length]).toEqual([0, 0]);
  });

  it('lists the tests as assessment types', async () => {
    expect(await ashby().call('assessment.list', {})).toEqual({
      status: 200,
      body: {
        success: true,
        results: [{ assessment_type_id: 'backend-screen', name: 'Backend screen', description: 'Backend screen' }],
      },
    });
  });

  it('starts once: a UUID, the same id while the order is open; a new order after the last one ended', async () => {
    const { call, orders, queued } = ashby();
    const first = await call('assessment.start', start());
    // Ashby types assessment_id `format: uuid`.
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(first).toMatchObject({ status: 200, body: { success: true, results: { assessment_id: uuid } } });
    // Ashby's retry of an answer it lost (or a second click) while the order waits: the same id, queued again.
    expect(await call('assessment.start', start())).toEqual(first);
    expect(orders.orders.size).toBe(1);
    expect(queued).toHaveLength(2);
    const id = (first.body as { results: { assessment_id: string } }).results.assessment_id;
    const key = { connectionId: connection?.id ?? '', orderId: id };
    expect(await orders.getOrder(key)).toMatchObject({
      source: 'ashby',
      candidateEmail: 'kemi@example.com',
      atsApplicationId: 'a-1',
      atsCandidateId: 'c-1',
    });
    // Its work begun (the candidate being invited): a start repeated after an answer Ashby lost still learns the
    // same id, and nothing is queued again.
    await orders.claimOrder(key, { owner: 'w', now: Date.now(), durationMs: 60_000 });
    await orders.recordOrderStep(key, { owner: 'w', move: 'createInterview' });
    expect(await call('assessment.start', start())).toEqual(first);
    expect(queued).toHaveLength(2);
    expect(await call('assessment.cancel', { assessment_id: id })).toMatchObject({ status: 200 });
    const again = await call('assessment.start', start());
    expect(again.status).toBe(200);
    expect((again.body as { results: { assessment_id: string } }).results.assessment_id).not.toBe(id);
  });

  it("answers errors in Ashby's envelope: errors, and errorInfo with a code beside them", async () => {
    const { call } = ashby();
    const noEmail = start({ candidate: { ...start().candidate, email: 'nope' } });
    expect(await call('assessment.start', noEmail)).toMatchObject({
      status: 400,
      body: { success: false, errors: [expect.any(String)], errorInfo: { code: 'invalid_input' } },
    });
    expect(await call('assessment.cancel', { assessment_id: 'unknown' })).toMatchObject({
      status: 404,
      body: { errorInfo: { code: 'not_found' } },
    });
  });

  it('answers an order placed before ids were UUIDs with its own id while it is open', async () => {
    const { call, orders } = ashby();
    const legacyId = orderIdFor('ashby', connection?.id ?? '', ['a-1', 'backend-screen']);
    await orders.recordOrder({
      connectionId: connection?.id ?? '',
      orderId: legacyId,
      source: 'ashby',
      testId: 'backend-screen',
      state: 'invited',
      candidateEmail: 'kemi@example.com',
      atsApplicationId: 'a-1',
      steps: {},
      createdAt: 1,
      updatedAt: 1,
    });
    expect(await call('assessment.start', start())).toMatchObject({
      status: 200,
      body: { results: { assessment_id: legacyId } },
    });
    expect(orders.orders.size).toBe(1);
  });

  it('answers 422 with a message for the recruiter, 400 naming the field, 404 for an unknown cancel', async () => {
    const { call, orders } = ashby();
    expect(await call('assessment.start', start({ assessment_type_id: 'gone' }))).toEqual({
      status: 422,
      body: { message: expect.stringContaining('no longer offered') },
    });
    const noEmail = start({ candidate: { ...start().candidate, email: 'nope' } });
    expect(await call('assessment.start', noEmail)).toMatchObject({
      status: 400,
      body: { success: false, errors: [expect.stringMatching(/^candidate\.email: /)] },
    });
    expect(await call('assessment.cancel', { assessment_id: 'ord_unknown' })).toMatchObject({ status: 404 });
    expect(orders.orders.size).toBe(0);
  });
});
