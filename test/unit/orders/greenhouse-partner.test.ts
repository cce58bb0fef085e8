import { describe, expect, it } from 'vitest';
import {
  type GreenhousePartnerDependencies,
  handleGreenhousePartner,
  issuePartnerKey,
  type PartnerCall,
  partnerKeyOf,
} from '../../../shared/orders/greenhouse-partner';
import { idsFromProfileUrl, isGreenhouseCompletionUrl } from '../../../shared/orders/greenhouse-partner.schemas';
import { orderIdFor, type OrderRecord } from '../../../shared/orders/records';
import { BACKEND_SCREEN, orderingConnection, partnerDependencies } from '../../helpers/partner-calls';

const connection = orderingConnection({ orders: { greenhouse: { tests: [BACKEND_SCREEN] } } });
const KEY = issuePartnerKey('acme-greenhouse');
const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

function partner() {
  const { orders, queued, deps: base, pause } = partnerDependencies(connection, { greenhousePartnerKey: KEY });
  const lines: { message: string; attributes?: Record<string, unknown> }[] = [];
  let counted = 0;
  const deps: GreenhousePartnerDependencies = {
    ...base,
    logger: {
      info: (message, attributes) => void lines.push({ message, attributes }),
      warn: (message, attributes) => void lines.push({ message, attributes }),
      error: (message, attributes) => void lines.push({ message, attributes }),
    },
    countResponseError: () => void counted++,
  };
  const call = (name: PartnerCall, init: { method?: string; key?: string; body?: unknown; query?: string } = {}) =>
    handleGreenhousePartner(
      {
        call: name,
        method: init.method ?? (name === 'send_test' || name === 'response_error' ? 'POST' : 'GET'),
        headers: { authorization: basic(init.key ?? KEY) },
        query: new URLSearchParams(init.query ?? ''),
        rawBody: Buffer.from(init.body === undefined ? '' : JSON.stringify(init.body)),
      },
      deps,
    );
  return { orders, queued, lines, call, pause, counted: () => counted };
}

/** A `send_test` as Greenhouse sends it: nested candidate, nulls for what is absent, and a field added later. */
const sendTest = (overrides: Record<string, unknown> = {}) => ({
  partner_test_id: 'backend-screen',
  candidate: {
    first_name: 'Ana',
    last_name: 'Ruiz',
    preferred_name: null,
    resume_url: null,
    phone_number: null,
    email: 'Ana.Ruiz@Example.com',
    greenhouse_profile_url: 'https://app.greenhouse.io/people/17681532?application_id=26234709',
    pronouns: null,
  },
  sent_by: 'recruiter@example.com',
  url: 'https://app.greenhouse.io/integrations/testing_partners/take_home_tests/12345',
  a_field_greenhouse_added: { nested: true },
  ...overrides,
});

describe('Greenhouse Assessment Partner endpoints', () => {
  it('reads the key from Basic auth with an empty password, and refuses anything else', () => {
    expect(partnerKeyOf(basic(KEY))).toBe(KEY);
    expect(partnerKeyOf(`Basic ${Buffer.from(`${KEY}:secret`).toString('base64')}`)).toBeUndefined();
    expect(partnerKeyOf(`Bearer ${KEY}`)).toBeUndefined();
    expect(KEY.length).toBeLessThan(171);
  });

  it('answers 401 to an unknown, wrong or foreign key before it reads the body', async () => {
    const { call, orders } = partner();
    for (const key of ['nobody.abc', `${KEY}x`, issuePartnerKey('other-connection'), ''])
      expect(await call('send_test', { key, body: 'not even JSON' })).toMatchObject({ status: 401 });
    expect(orders.orders.size).toBe(0);
  });

  it("lists the connection's tests", async () => {
    expect(await partner().call('list_tests')).toEqual({
      status: 200,
      body: [{ partner_test_id: 'backend-screen', partner_test_name: 'Backend screen' }],
    });
  });

  it('refuses a send_test while the connection is turned off, saying why; its tests are still listed', async () => {
    const { call, orders, queued, pause } = partner();
    pause();
    const answer = await call('send_test', { body: sendTest() });
    expect(answer).toMatchObject({ status: 403, body: { errors: [expect.stringContaining('paused')] } });
    expect([orders.orders.size, queued.length]).toEqual([0, 0]);
    expect((await call('list_tests')).status).toBe(200);
  });

  it('records a send_test once and answers the same id to a repeat, queueing it until its work begins', async () => {
    const { call, orders, queued } = partner();
    const first = await call('send_test', { body: sendTest() });
    const again = await call('send_test', { body: sendTest() });
    expect(first.status).toBe(200);
    expect(again).toEqual(first);
    expect(orders.orders.size).toBe(1);
    const [order] = orders.orders.values();
    expect(order).toMatchObject({
      source: 'greenhouse',
      state: 'received',
      candidateEmail: 'ana.ruiz@example.com',
      atsCandidateId: '17681532',
      atsApplicationId: '26234709',
      completionUrl: 'https://app.greenhouse.io/integrations/testing_partners/take_home_tests/12345',
    });
    expect(first.body).toEqual({ partner_interview_id: order?.orderId });
    // Both sends queued it while it waits: the worker's steps make the interview and the e-mail once.
    expect(queued.map((o) => o.orderId)).toEqual([order?.orderId, order?.orderId]);
    expect(await call('send_test', { body: sendTest({ partner_test_id: 'unknown' }) })).toMatchObject({ status: 404 });
  });

  it('makes a new order of a send_test with a new url, same candidate and test; the first as it was', async () => {
    const { call, orders, queued } = partner();
    const first = await call('send_test', { body: sendTest() });
    const firstOrder = structuredClone([...orders.orders.values()][0]);
    const url = 'https://app.greenhouse.io/integrations/testing_partners/take_home_tests/67890';
    const second = await call('send_test', { body: sendTest({ url }) });
    expect(second.status).toBe(200);
    const secondId = (second.body as { partner_interview_id: string }).partner_interview_id;
    expect(secondId).not.toBe((first.body as { partner_interview_id: string }).partner_interview_id);
    expect(orders.orders.size).toBe(2);
    expect([...orders.orders.values()].find((o) => o.orderId === secondId)).toMatchObject({ completionUrl: url });
    expect([...orders.orders.values()].find((o) => o.orderId === firstOrder?.orderId)).toEqual(firstOrder);
    expect(queued.map((o) => o.orderId)).toEqual([firstOrder?.orderId, secondId]);
  });

  it('answers a send_test of an order keyed before the url was, with that order, for the same url', async () => {
    const { call, orders } = partner();
    const body = sendTest();
    const key = [body.partner_test_id, body.candidate.greenhouse_profile_url, body.candidate.email.toLowerCase()];
    const legacyId = orderIdFor('greenhouse', connection?.id ?? '', key);
    await orders.recordOrder({
      connectionId: connection?.id ?? '',
      orderId: legacyId,
      source: 'greenhouse',
      testId: body.partner_test_id,
      state: 'invited',
      candidateEmail: body.candidate.email.toLowerCase(),
      completionUrl: body.url,
      steps: {},
      createdAt: 1,
      updatedAt: 1,
    });
    expect(await call('send_test', { body })).toEqual({ status: 200, body: { partner_interview_id: legacyId } });
    expect(orders.orders.size).toBe(1);
  });

  it('refuses a malformed send_test with 400 naming the field, and records nothing', async () => {
    const { call, orders } = partner();
    const noEmail = sendTest({ candidate: { ...sendTest().candidate, email: null } });
    expect(await call('send_test', { body: noEmail })).toEqual({
      status: 400,
      body: { errors: [expect.stringMatching(/^candidate\.email: /)] },
    });
    // The completion PATCH carries Greenhouse's credential: only Greenhouse's hosts over https (or the connection's
    // own Greenhouse origin) are taken, never an address the caller chose.
    for (const url of [
      'http://plain.example.com/x',
      'https://attacker.example/collect',
      'https://169.254.169.254/latest',
      'https://app.greenhouse.io:8443/x',
      'http://localhost:9001/x',
    ])
      expect(await call('send_test', { body: sendTest({ url }) })).toMatchObject({
        status: 400,
        body: { errors: [expect.stringMatching(/^url: /)] },
      });
    expect(orders.orders.size).toBe(0);
  });

  it('answers test_status from the record: complete only with a public profile link', async () => {
    const { call, orders } = partner();
    const sent = await call('send_test', { body: sendTest() });
    const id = (sent.body as { partner_interview_id: string }).partner_interview_id;
    expect(await call('test_status', { query: `partner_interview_id=${id}` })).toMatchObject({
      status: 200,
      body: { partner_status: 'received', partner_profile_url: null },
    });
    const order = orders.orders.get(`acme-greenhouse#${id}`) as OrderRecord;
    Object.assign(order, {
      state: 'completed',
      profileUrl: 'https://reports.example.com/r1',
      score: 82,
      reportId: 'r1',
    });
    expect(await call('test_status', { query: `partner_interview_id=${id}` })).toEqual({
      status: 200,
      body: {
        partner_status: 'complete',
        partner_profile_url: 'https://reports.example.com/r1',
        partner_score: 82,
        metadata: { report_id: 'r1', test: 'backend-screen' },
      },
    });
    expect(await call('test_status', { query: 'partner_interview_id=ord_unknown' })).toMatchObject({ status: 404 });
  });

  it('logs and counts a response_error, and accepts it', async () => {
    const { call, lines, counted } = partner();
    const body = {
      api_call: 'test_status',
      errors: ["partner_status is 'complete' but partner_profile url is missing"],
    };
    expect(await call('response_error', { body })).toEqual({ status: 200, body: { status: 200 } });
    expect(counted()).toBe(1);
    expect(lines.at(-1)).toMatchObject({ attributes: { apiCall: 'test_status', errorCount: 1, errors: body.errors } });
  });

  it("takes a completion URL on Greenhouse's hosts, or on the origin the connection reaches its Greenhouse at", () => {
    const harvest = 'https://harvest.greenhouse.io';
    expect(isGreenhouseCompletionUrl('https://app.greenhouse.io/integrations/testing_partners/1', harvest)).toBe(true);
    expect(isGreenhouseCompletionUrl('https://app.eu.greenhouse.io/x', harvest)).toBe(true);
    expect(isGreenhouseCompletionUrl('https://greenhouse.io.example.com/x', harvest)).toBe(false);
    expect(isGreenhouseCompletionUrl('http://app.greenhouse.io/x', harvest)).toBe(false);
    expect(isGreenhouseCompletionUrl('not a url', harvest)).toBe(false);
    expect(isGreenhouseCompletionUrl('http://127.0.0.1:4020/x', 'http://127.0.0.1:4020')).toBe(true);
    expect(isGreenhouseCompletionUrl('http://127.0.0.1:4021/x', 'http://127.0.0.1:4020')).toBe(false);
  });

  it('reads the ATS ids of a profile URL defensively', () => {
    expect(idsFromProfileUrl('https://app.greenhouse.io/people/1?application_id=2')).toEqual({
      atsCandidateId: '1',
      atsApplicationId: '2',
    });
    expect(idsFromProfileUrl('not a url')).toEqual({});
    expect(idsFromProfileUrl('https://x.example.com/people/abc?application_id=1;drop')).toEqual({});
  });
});
