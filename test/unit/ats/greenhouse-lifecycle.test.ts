import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AtsAdapter, ApplicationRef } from '../../../shared/ats/port';
import { loadFixture, loadRawFixture } from '../../helpers/fixtures';
import { route, stubbedGreenhouse, stubFetch, type StubAnswer } from '../../helpers/stub-fetch';

// Greenhouse's lifecycle webhooks (webhooks/_candidate_events.md: reject_candidate, unreject_candidate,
// hire_candidate, unhire_candidate) and its pre-reminder read, `GET /v3/applications?ids=<id>` (its `status`:
// in_process, rejected, hired; ats-facts Corrections 2026-11 and 2026-11b).

const SECRET = 'whsec_test_0123456789';
const fixture = (name: string) => loadRawFixture(`contract/ats/fixtures/greenhouse-${name}.json`);
const sign = (body: Buffer) => `sha256 ${createHmac('sha256', SECRET).update(body).digest('hex')}`;
const delivered = (body: Buffer, eventId?: string) => ({
  headers: { signature: sign(body), ...(eventId ? { 'greenhouse-event-id': eventId } : {}) },
  rawBody: body,
});
const json = (status: number, body: unknown): StubAnswer => ({ status, json: body });
const target: ApplicationRef = {
  atsApplicationId: '265293',
  atsCandidateId: '265788',
  atsJobId: '3301',
  fromStageId: '9001',
};

/** A Greenhouse whose one application reads as `row` (a v3 record), and a token for whoever asks. */
function greenhouseWith(row: Record<string, unknown>) {
  const stub = stubFetch((call) => {
    if (call.url.pathname === '/token')
      return json(200, { access_token: 'tok', token_type: 'Bearer', expires_at: new Date(Date.now() + 3.6e6) });
    if (call.method === 'GET' && call.url.pathname === '/v3/applications')
      return json(200, call.url.searchParams.get('ids') === '265293' ? [row] : []);
    if (call.method === 'POST' && call.url.pathname === '/v3/applications/265293/move') return { status: 204 };
    return json(404, { message: `no route ${route(call)}` });
  });
  return { adapter: stubbedGreenhouse(stub.fetch) as AtsAdapter, calls: stub.calls };
}

const v3Row = (fields: Record<string, unknown>) => ({
  id: 265293,
  candidate_id: 265788,
  job_id: 3301,
  job_interview_stage_id: 9001,
  stage_name: 'AI Interview',
  status: 'in_process',
  prospect: false,
  rejected_at: null,
  ...fields,
});

describe('Greenhouse lifecycle webhooks', () => {
  const { adapter } = greenhouseWith(v3Row({}));

  it.each([
    ['reject-candidate', 'left'],
    ['unreject-candidate', 'returned'],
    ['unhire-candidate', 'returned'],
  ] as const)('verifies %s and reads it as the application %s', (name, change) => {
    const body = fixture(name);
    expect(adapter.verifyWebhook(delivered(body), Date.now())).toEqual({ valid: true });
    expect(adapter.parseWebhook(delivered(body, 'evt-1'))).toEqual({
      kind: 'application-changed',
      event: { deliveryId: 'evt-1', atsApplicationId: '265293', change },
    });
  });

  it('reads hire_candidate (no status, no stage in the documented sample) as the application leaving', () => {
    const body = fixture('hire-candidate');
    expect(adapter.verifyWebhook(delivered(body), Date.now())).toEqual({ valid: true });
    expect(adapter.parseWebhook(delivered(body, 'evt-2'))).toEqual({
      kind: 'application-changed',
      event: { deliveryId: 'evt-2', atsApplicationId: '46194062', change: 'left' },
    });
  });

  it('reads delete_application (one application removed, ats-routes.json) as the application leaving', () => {
    // The documented fields: payload.application{id,candidate_id,job_id,rejected_at,rejected_by_user_id}.
    const application = { id: 71980812, candidate_id: 60614624, job_id: 4690, rejected_at: null };
    const body = Buffer.from(JSON.stringify({ action: 'delete_application', payload: { application } }));
    expect(adapter.verifyWebhook(delivered(body), Date.now())).toEqual({ valid: true });
    expect(adapter.parseWebhook(delivered(body, 'evt-3'))).toEqual({
      kind: 'application-changed',
      event: { deliveryId: 'evt-3', atsApplicationId: '71980812', change: 'left' },
    });
  });

  it('reads a withdrawal (reason type "They rejected us") as the application leaving, like a rejection', () => {
    const document = loadFixture<{ payload: { application: { rejection_reason: { type: { name: string } } } } }>(
      'contract/ats/fixtures/greenhouse-reject-candidate.json',
    );
    document.payload.application.rejection_reason.type.name = 'They rejected us';
    const result = adapter.parseWebhook(delivered(Buffer.from(JSON.stringify(document)), 'evt-3'));
    expect(result).toMatchObject({ kind: 'application-changed', event: { change: 'left' } });
  });

  it('gives a retry of one delivery without Greenhouse-Event-ID the same delivery id, another delivery another', () => {
    const reject = fixture('reject-candidate');
    const first = adapter.parseWebhook(delivered(reject));
    const retry = adapter.parseWebhook(delivered(reject));
    const other = adapter.parseWebhook(delivered(fixture('unreject-candidate')));
    if (first.kind !== 'application-changed' || retry.kind !== 'application-changed')
      throw new Error('not read as a change');
    expect(first.event.deliveryId).toBe(retry.event.deliveryId);
    expect(other).toMatchObject({ kind: 'application-changed' });
    if (other.kind === 'application-changed') expect(other.event.deliveryId).not.toBe(first.event.deliveryId);
  });

  it('refuses a lifecycle event without an application id, and never reads a left stage change as an entry', () => {
    const empty = Buffer.from('{"action":"reject_candidate","payload":{"application":{}}}');
    expect(adapter.parseWebhook(delivered(empty)).kind).toBe('invalid');
    for (const status of ['rejected', 'hired']) {
      const body = Buffer.from(
        loadRawFixture('contract/greenhouse/fixtures/candidate-stage-change.json')
          .toString()
          .replace('"status":"active"', `"status":"${status}"`),
      );
      expect(adapter.parseWebhook(delivered(body))).toEqual({ kind: 'ignored', reason: `application is ${status}` });
    }
  });

  it('lists the lifecycle events among the webhooks the customer makes in Dev Center', () => {
    const setup = stubbedGreenhouse(stubFetch(() => json(404, {})).fetch) as unknown as { webhookEvents: string[] };
    expect(setup.webhookEvents).toEqual(
      expect.arrayContaining([
        'candidate_stage_change',
        'reject_candidate',
        'unreject_candidate',
        'hire_candidate',
        'unhire_candidate',
        'delete_application',
      ]),
    );
  });
});

describe('Greenhouse readStanding and moveToStage (GET /v3/applications?ids=)', () => {
  it.each([
    ['an open application', v3Row({}), { active: true, stageId: '9001', stageName: 'AI Interview' }],
    [
      'a rejected one',
      v3Row({ status: 'rejected', rejected_at: '2026-11-03T10:00:00Z' }),
      { active: false, exit: 'rejected' },
    ],
    ['a hired one', v3Row({ status: 'hired' }), { active: false, exit: 'hired' }],
    [
      'a rejection whose record carries the reason',
      v3Row({
        status: 'rejected',
        rejection_reason: { id: 14, name: 'Too Junior', type: { id: 3, name: 'Wrong skill set' } },
      }),
      { active: false, exit: 'rejected', reason: 'Too Junior' },
    ],
    [
      'a withdrawal whose record carries the reason type',
      v3Row({
        status: 'rejected',
        rejection_reason: { id: 15, name: 'Took another offer', type: { id: 2, name: 'They rejected us' } },
      }),
      { active: false, exit: 'withdrawn', reason: 'Took another offer' },
    ],
    [
      'a rejection reason of another shape',
      v3Row({ status: 'rejected', rejection_reason: 14 }),
      { active: false, exit: 'rejected' },
    ],
  ])('reads %s in one call', async (_name, row, standing) => {
    const { adapter, calls } = greenhouseWith(row);
    expect(await adapter.readStanding(target)).toEqual(standing);
    expect(calls.filter((c) => c.url.pathname !== '/token').map(route)).toEqual(['GET /v3/applications?ids=265293']);
  });

  it('throws not-found for an application Greenhouse does not list', async () => {
    const { adapter } = greenhouseWith(v3Row({}));
    await expect(adapter.readStanding({ ...target, atsApplicationId: '1' })).rejects.toMatchObject({
      code: 'ats-not-found',
    });
  });

  it('answers a row listed for it but not as documented as malformed, never as the application gone', async () => {
    const { adapter } = greenhouseWith({ ...v3Row({}), status: 42 });
    await expect(adapter.readStanding(target)).rejects.toMatchObject({ code: 'ats-malformed-response' });
  });

  it.each([
    ['rejected', 'rejected'],
    ['hired', 'hired'],
  ])('never moves a %s application: answered unmoved with its exit, no move call', async (status, exit) => {
    const { adapter, calls } = greenhouseWith(v3Row({ status }));
    expect(await adapter.moveToStage(target, { id: '9002' })).toEqual({ moved: false, stageId: '9001', exit });
    expect(calls.some((c) => c.method === 'POST' && c.url.pathname.endsWith('/move'))).toBe(false);
  });

  it('still moves an open application', async () => {
    const { adapter, calls } = greenhouseWith(v3Row({}));
    expect(await adapter.moveToStage(target, { id: '9002' })).toEqual({ moved: true, stageId: '9002' });
    expect(calls.map(route)).toContain('POST /v3/applications/265293/move');
  });

  it('leaves an application a recruiter moved on since the invitation where it is: no move call', async () => {
    const { adapter, calls } = greenhouseWith(v3Row({ job_interview_stage_id: 9005, stage_name: 'Offer' }));
    const movedOn = { moved: false, stageId: '9005', skipped: 'not-moved:moved-on' };
    const seen = { ...target, fromStage: { name: 'AI Interview' } };
    expect(await adapter.moveToStage(seen, { id: '9002' })).toEqual(movedOn);
    expect(calls.some((c) => c.method === 'POST' && c.url.pathname.endsWith('/move'))).toBe(false);
  });

  it('moves an application still in the stage its trigger names, though its id there reads otherwise', async () => {
    // The webhook's current_stage.id and v3's job_interview_stage_id are not documented as one id: the name decides.
    const { adapter, calls } = greenhouseWith(v3Row({}));
    const seen = { ...target, fromStageId: '77001', fromStage: { name: 'AI Interview' } };
    expect(await adapter.moveToStage(seen, { id: '9002' })).toEqual({ moved: true, stageId: '9002' });
    expect(calls.map(route)).toContain('POST /v3/applications/265293/move');
  });

  it('takes a 422 from a move a recruiter beat (moved on between the read and the move) as moved on', async () => {
    let stage = 9001;
    const stub = stubFetch((call) => {
      if (call.url.pathname === '/token')
        return json(200, { access_token: 'tok', token_type: 'Bearer', expires_at: new Date(Date.now() + 3.6e6) });
      if (call.method === 'GET') return json(200, [v3Row({ job_interview_stage_id: stage })]);
      stage = 9005;
      return json(422, { message: 'from_stage_id is not the current stage' });
    });
    const adapter = stubbedGreenhouse(stub.fetch) as AtsAdapter;
    const movedOn = { moved: false, stageId: '9005', skipped: 'not-moved:moved-on' };
    expect(await adapter.moveToStage({ ...target, fromStage: { id: '9001' } }, { id: '9002' })).toEqual(movedOn);
    expect(stub.calls.filter((c) => c.method === 'POST' && c.url.pathname.endsWith('/move'))).toHaveLength(1);
  });
});

describe('Greenhouse setStatusTag without a status (a candidate who left)', () => {
  it("removes the other statuses' rows by their own ids and adds nothing", async () => {
    const stub = stubFetch((call) => {
      if (call.url.pathname === '/token')
        return json(200, { access_token: 'tok', token_type: 'Bearer', expires_at: new Date(Date.now() + 3.6e6) });
      if (call.method === 'GET' && call.url.pathname === '/v3/applied_candidate_tags')
        return json(200, [
          { id: 501, candidate_id: 265788, candidate_tag_id: 11 },
          { id: 502, candidate_id: 265788, candidate_tag_id: 21 },
        ]);
      if (call.method === 'GET' && call.url.pathname === '/v3/candidate_tags')
        return json(200, [
          { id: 11, name: 'Referral' },
          { id: 21, name: 'AI interview: invited' },
        ]);
      if (call.method === 'DELETE' && call.url.pathname === '/v3/applied_candidate_tags/502') return { status: 204 };
      return json(404, { message: `no route ${route(call)}` });
    });
    const adapter = stubbedGreenhouse(stub.fetch) as AtsAdapter;
    await adapter.setStatusTag?.(target, undefined, ['AI interview: invited', 'AI interview: completed']);
    const writes = stub.calls.filter((c) => c.method !== 'GET' && c.url.pathname !== '/token').map(route);
    expect(writes).toEqual(['DELETE /v3/applied_candidate_tags/502']);
  });
});
