import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAtsAdapter } from '../../../shared/ats';
import { parseConnections } from '../../../shared/config';
import { connectionDocument } from '../../helpers/connections';
import { loadFixture } from '../../helpers/fixtures';
import { stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// Ashby's lifecycle signals (ats-routes 2026-11c): a move into an Archived-type stage (status Archived, archiveReason
// with reasonType), candidateHire, and an applicationUpdate back to Active; related deliveries share webhookActionId.
const SECRET = 'whsec_test_0123456789';
const FIXTURES = 'contract/ats/fixtures';
type Delivery = { action: string; webhookActionId?: string; data: { application: Record<string, unknown> } };

function ashby(answer: (call: StubCall) => StubAnswer = () => ({ status: 404, json: {} })) {
  const stub = stubFetch(answer);
  const connection = parseConnections(
    connectionDocument({ id: 'acme-ashby', ats: 'ashby', atsBaseUrl: 'https://api.ashbyhq.com' }),
  )[0]!;
  const secrets = { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), atsApiKey: 'key' };
  const adapter = createAtsAdapter(connection, { ...secrets, atsWebhookSecret: SECRET }, { fetch: stub.fetch });
  return { adapter, calls: stub.calls };
}

const parse = (document: unknown) => {
  const rawBody = Buffer.from(JSON.stringify(document));
  const { adapter } = ashby();
  const headers = { 'ashby-signature': `sha256=${createHmac('sha256', SECRET).update(rawBody).digest('hex')}` };
  expect(adapter.verifyWebhook({ headers, rawBody }, Date.now())).toEqual({ valid: true });
  return adapter.parseWebhook({ headers, rawBody });
};

const archived = () => loadFixture<Delivery>(`${FIXTURES}/ashby-candidate-stage-change-archived.json`);
const hired = () => loadFixture<Delivery>(`${FIXTURES}/ashby-candidate-hire.json`);
const as = (action: string, document: Delivery): Delivery => ({ ...document, action });
const withStatus = (document: Delivery, status: string | undefined): Delivery => ({
  ...document,
  data: { application: { ...document.data.application, status } },
});

describe('Ashby lifecycle webhooks', () => {
  it('reads a move into an Archived-type stage as the application leaving, never as a stage entry', () => {
    expect(parse(archived())).toEqual({
      kind: 'application-changed',
      event: {
        deliveryId: '7b1e0c55-aaaa-4d2e-9c1a-000000000001:left',
        atsApplicationId: '5e1c4a2b-0001',
        change: 'left',
      },
    });
  });

  it('gives the related applicationUpdate of one action the same delivery id, and a retry the same again', () => {
    const first = parse(archived());
    expect(parse(as('applicationUpdate', archived()))).toEqual(first);
    expect(parse(archived())).toEqual(first);
  });

  it.each([
    ['candidateHire', hired()],
    ['applicationUpdate', as('applicationUpdate', hired())],
    ['candidateStageChange', as('candidateStageChange', hired())],
  ])('reads %s of a hired application as the application leaving', (_action, document) => {
    expect(parse(document)).toEqual({
      kind: 'application-changed',
      event: {
        deliveryId: '7b1e0c55-bbbb-4d2e-9c1a-000000000002:left',
        atsApplicationId: '5e1c4a2b-0001',
        change: 'left',
      },
    });
  });

  it('reads an applicationUpdate back to Active as a possible return, apart from the stage entry of its action', () => {
    const update = withStatus(as('applicationUpdate', archived()), 'Active');
    expect(parse(update)).toEqual({
      kind: 'application-changed',
      event: {
        deliveryId: '7b1e0c55-aaaa-4d2e-9c1a-000000000001:returned',
        atsApplicationId: '5e1c4a2b-0001',
        change: 'returned',
      },
    });
    const entry = parse(withStatus(archived(), 'Active'));
    expect(entry).toMatchObject({
      kind: 'stage-entered',
      event: { deliveryId: '7b1e0c55-aaaa-4d2e-9c1a-000000000001' },
    });
  });

  it('derives one delivery id per delivery where a body carries no webhookActionId', () => {
    const { webhookActionId: _dropped, ...bare } = archived();
    const first = parse(bare);
    expect(first).toMatchObject({
      kind: 'application-changed',
      event: { deliveryId: expect.stringMatching(/^derived:/) },
    });
    expect(parse(bare)).toEqual(first);
    expect(parse({ ...bare, action: 'applicationUpdate' })).not.toEqual(first);
  });

  it('ignores an applicationUpdate of a lead or of no status, and refuses one without an application id', () => {
    expect(parse(withStatus(as('applicationUpdate', archived()), 'Lead'))).toEqual({
      kind: 'ignored',
      reason: 'application is Lead',
    });
    expect(parse(withStatus(as('applicationUpdate', archived()), undefined))).toMatchObject({ kind: 'ignored' });
    expect(parse({ action: 'candidateHire', data: { application: {} } })).toMatchObject({ kind: 'invalid' });
  });
});

describe('Ashby readStanding and moveToStage (application.info)', () => {
  const target = { atsApplicationId: '5e1c4a2b-0001', atsCandidateId: 'a9d2c3f4-0002', atsJobId: '4071538b-0005' };
  const answering = (results: Record<string, unknown>) =>
    ashby((call) =>
      call.url.pathname === '/application.info'
        ? { status: 200, json: { success: true, results } }
        : { status: 200, json: { success: true, results: {} } },
    );
  const info = loadFixture<{ results: Record<string, unknown> }>(`${FIXTURES}/ashby-application-info-archived.json`);
  const active = loadFixture<{ results: Record<string, unknown> }>(`${FIXTURES}/ashby-application-info.json`);

  it.each([
    ['RejectedByOrg', { active: false, exit: 'rejected', reason: 'Not enough experience' }],
    ['Other', { active: false, exit: 'rejected', reason: 'Not enough experience' }],
    ['RejectedByCandidate', { active: false, exit: 'withdrawn', reason: 'Not enough experience' }],
  ])('maps an Archived application whose reason type is %s', async (reasonType, standing) => {
    const reason = { ...(info.results.archiveReason as object), reasonType };
    const { adapter, calls } = answering({ ...info.results, archiveReason: reason });
    expect(await adapter.readStanding(target)).toEqual(standing);
    expect(calls.map((c) => [c.url.pathname, c.body])).toEqual([
      ['/application.info', { applicationId: target.atsApplicationId }],
    ]);
  });

  it('maps Hired to hired, and Active or Lead to its current stage', async () => {
    expect(await answering({ ...active.results, status: 'Hired' }).adapter.readStanding(target)).toEqual({
      active: false,
      exit: 'hired',
      reason: undefined,
    });
    for (const status of ['Active', 'Lead'])
      expect(await answering({ ...active.results, status }).adapter.readStanding(target)).toEqual({
        active: true,
        stageId: '3ae2b801-0003',
        stageName: 'AI Interview',
      });
  });

  it('refuses an answer with no status or an unknown one', async () => {
    const { status: _status, ...bare } = active.results;
    await expect(answering(bare).adapter.readStanding(target)).rejects.toMatchObject({
      code: 'ats-malformed-response',
    });
    await expect(answering({ ...active.results, status: 'Gone' }).adapter.readStanding(target)).rejects.toThrow();
  });

  it('answers a left application unmoved with its exit and its current stage, with no move call', async () => {
    const { adapter, calls } = answering(info.results);
    expect(await adapter.moveToStage(target, { id: '3ae2b801-hm' })).toEqual({
      moved: false,
      stageId: '3ae2b801-0009',
      exit: 'rejected',
    });
    expect(calls.map((c) => c.url.pathname)).toEqual(['/application.info']);
  });

  it('leaves an application moved on since the invitation where it is, and moves one still in that stage', async () => {
    const { adapter, calls } = answering(active.results);
    const seen = { ...target, fromStageId: '3ae2b801-0001', fromStage: { id: '3ae2b801-0001' } };
    expect(await adapter.moveToStage(seen, { id: '3ae2b801-hm' })).toEqual({
      moved: false,
      stageId: '3ae2b801-0003',
      skipped: 'not-moved:moved-on',
    });
    expect(calls.map((c) => c.url.pathname)).toEqual(['/application.info']);
    const still = { ...target, fromStageId: '3ae2b801-0003', fromStage: { id: '3ae2b801-0003' } };
    const moved = await adapter.moveToStage(still, { id: '3ae2b801-hm' });
    expect(moved).toEqual({ moved: true, stageId: '3ae2b801-hm' });
    expect(calls.map((c) => c.url.pathname).at(-1)).toBe('/application.changeStage');
  });
});

describe('Ashby setStatusTag with no tag', () => {
  it('removes the status tags the candidate holds and adds none', async () => {
    const { adapter, calls } = ashby((call) =>
      call.url.pathname === '/candidate.info'
        ? {
            status: 200,
            json: {
              success: true,
              results: {
                id: 'c',
                tags: [
                  { id: 't1', title: 'AI interview: invited' },
                  { id: 't2', title: 'Team' },
                ],
              },
            },
          }
        : { status: 200, json: { success: true, results: {} } },
    );
    const target = { atsApplicationId: 'a', atsCandidateId: 'c', atsJobId: 'j' };
    await adapter.setStatusTag!(target, undefined, ['AI interview: invited', 'AI interview: expired']);
    expect(calls.map((c) => [c.url.pathname, c.body])).toEqual([
      ['/candidate.info', { id: 'c' }],
      ['/candidate.removeTag', { candidateId: 'c', tagId: 't1' }],
    ]);
  });

  it('lists the new event types for the doctor and --register-webhooks', () => {
    const { adapter } = ashby();
    expect((adapter as unknown as { webhookEvents: string[] }).webhookEvents).toEqual(
      expect.arrayContaining(['candidateStageChange', 'candidateHire', 'applicationUpdate']),
    );
  });
});
