import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAtsAdapter } from '../../../shared/ats';
import { createSetupAdapter } from '../../../shared/ats/setup-adapter';
import { parseConnections, type ConnectionSecrets } from '../../../shared/config';
import { connectionDocument } from '../../helpers/connections';
import { loadFixture } from '../../helpers/fixtures';
import { route, stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// Lever's lifecycle webhooks and reads (ats-routes.json, Lever `webhooks`; ats-routes.md, "What is new (2026-11c)"),
// driven through a real adapter with a fetch that answers in the documented shapes.

const TOKENS = {
  candidateStageChange: 'stage-token-0123456789',
  candidateArchiveChange: 'archive-token-0123456789',
  candidateHired: 'hired-token-0123456789',
  candidateDeleted: 'delete-token-0123456789',
};
const base: ConnectionSecrets = { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32) };
const noRetry = { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 }, sleep: async () => undefined };
const json = (status: number, body: unknown): StubAnswer => ({ status, json: body });
const notFound = (call: StubCall): StubAnswer => json(404, { code: 'ResourceNotFound', message: route(call) });
const fixture = (name: string) => loadFixture<Record<string, unknown>>(`contract/ats/fixtures/${name}`);

function lever(answer: (call: StubCall) => StubAnswer = notFound, secrets: Partial<ConnectionSecrets> = {}) {
  const stub = stubFetch(answer);
  const connection = parseConnections(
    connectionDocument({ id: 'acme-lever', ats: 'lever', atsBaseUrl: 'https://api.lever.co', atsUserId: 'u-1' }),
  )[0]!;
  const all = { ...base, atsApiKey: 'key', atsWebhookSecrets: TOKENS, ...secrets };
  const adapter = createAtsAdapter(connection, all, { fetch: stub.fetch, ...noRetry });
  // What the doctor registers: the adapter with its setup part, on the same answers.
  const setup = createSetupAdapter(connection, all, { fetch: stub.fetch, ...noRetry });
  return { adapter, setup, calls: stub.calls };
}

/** A fixture signed as Lever signs it (`token + triggeredAt`), with `secret`, delivered now. */
function signed(name: string, secret?: string, change: (document: Record<string, unknown>) => void = () => {}) {
  const document = fixture(name);
  change(document);
  document.triggeredAt = Date.now();
  const key = secret ?? TOKENS[document.event as keyof typeof TOKENS];
  document.signature = createHmac('sha256', key).update(`${document.token}${document.triggeredAt}`).digest('hex');
  return { headers: {}, rawBody: Buffer.from(JSON.stringify(document)) };
}

const target = { atsApplicationId: '250d8f03-0002', atsCandidateId: '7a1c9d2e-0001', atsJobId: 'posting-backend-01' };

describe('Class: LeverAdapter, lifecycle webhooks', () => {
  it.each([
    ['lever-candidate-archive-change.json', '5e0b1f3a9c2d4e7f8a6b0c1d2e3f4a5b', 'left'],
    ['lever-candidate-unarchived.json', '7d2c4b6a8e0f41a3b5c7d9e1f3a5b7c9', 'returned'],
    ['lever-candidate-hired.json', '9a8b7c6d5e4f40312a3b4c5d6e7f8091', 'left'],
  ])('%s verifies with its own webhook token and parses to an application change', (name, token, change) => {
    const { adapter } = lever();
    const delivery = signed(name);
    expect(adapter.verifyWebhook(delivery, Date.now())).toMatchObject({ valid: true });
    expect(adapter.parseWebhook(delivery)).toEqual({
      kind: 'application-changed',
      event: { deliveryId: token, atsApplicationId: '250d8f03-0002', change },
    });
  });

  it.each([
    ['lever-candidate-archive-change.json', TOKENS.candidateStageChange],
    ['lever-candidate-hired.json', TOKENS.candidateArchiveChange],
  ])("%s signed with another webhook's token is refused", (name, otherToken) => {
    const { adapter } = lever();
    expect(adapter.verifyWebhook(signed(name, otherToken), Date.now())).toMatchObject({ valid: false });
  });

  it('refuses an archive change when the connection holds no token for that webhook', () => {
    const { adapter } = lever(notFound, { atsWebhookSecrets: { candidateStageChange: TOKENS.candidateStageChange } });
    const result = adapter.verifyWebhook(signed('lever-candidate-archive-change.json'), Date.now());
    expect(result).toEqual({
      valid: false,
      reason: 'the connection has no signature token for candidateArchiveChange webhooks',
    });
  });

  it('reads an absent toArchived as unarchived, and a delivery naming no opportunity as a test', () => {
    const { adapter } = lever();
    const absent = signed('lever-candidate-unarchived.json', undefined, (d) => {
      delete (d.data as Record<string, unknown>).toArchived;
    });
    expect(adapter.parseWebhook(absent)).toMatchObject({ kind: 'application-changed', event: { change: 'returned' } });
    const test = signed('lever-candidate-hired.json', undefined, (d) => {
      d.data = {};
    });
    expect(adapter.parseWebhook(test)).toEqual({
      kind: 'ignored',
      reason: 'a candidateHired test delivery (no opportunity)',
    });
  });

  it('refuses an archive change whose opportunity id is missing, naming the field', () => {
    const { adapter } = lever();
    const broken = signed('lever-candidate-archive-change.json', undefined, (d) => {
      d.data = { candidateId: '7a1c9d2e-0001', toArchived: null };
    });
    const result = adapter.parseWebhook(broken);
    expect(result.kind).toBe('invalid');
    expect(result.kind === 'invalid' && result.message).toContain('opportunityId');
  });

  it('asks for the archive and hire webhooks besides the stage change and the deletion', () => {
    expect(lever().setup.webhookEvents).toEqual([
      'candidateStageChange',
      'candidateArchiveChange',
      'candidateHired',
      'candidateDeleted',
    ]);
  });
});

describe('Class: LeverAdapter, standing and moves of an archived opportunity', () => {
  /** Lever holding the opportunity as `opportunity`, moving it when asked. */
  const serving = (opportunity: string) =>
    lever((call) => {
      if (route(call) === 'GET /v1/opportunities/250d8f03-0002') return json(200, fixture(opportunity));
      if (route(call) === 'PUT /v1/opportunities/250d8f03-0002/stage?perform_as=u-1')
        return json(200, fixture(opportunity));
      return notFound(call);
    });

  it.each([
    [
      'in the pipeline as active, in its stage',
      'lever-opportunity.json',
      { active: true, stageId: 'c1b2-ai-interview', stageName: undefined },
    ],
    [
      'archived as archived, with its archive reason id',
      'lever-opportunity-archived.json',
      { active: false, exit: 'archived', reason: '63dd55b2-a99f-4e7b-985f-22c7bf80ab42' },
    ],
  ])('reads an opportunity %s, with one read', async (_what, opportunity, standing) => {
    const { adapter, calls } = serving(opportunity);
    expect(await adapter.readStanding(target)).toEqual(standing);
    expect(calls.map(route)).toEqual(['GET /v1/opportunities/250d8f03-0002']);
  });

  it.each([
    [
      'an archived opportunity unmoved, with its exit, and never moves it',
      'lever-opportunity-archived.json',
      { moved: false, stageId: 'c1b2-ai-interview', exit: 'archived' },
      ['GET /v1/opportunities/250d8f03-0002'],
    ],
    [
      'an opportunity in the pipeline: it moves',
      'lever-opportunity.json',
      { moved: true, stageId: 'd3e4-hm-review' },
      ['GET /v1/opportunities/250d8f03-0002', 'PUT /v1/opportunities/250d8f03-0002/stage?perform_as=u-1'],
    ],
  ])('answers a move of %s', async (_what, opportunity, result, routes) => {
    const { adapter, calls } = serving(opportunity);
    expect(await adapter.moveToStage(target, { id: 'd3e4-hm-review' })).toEqual(result);
    expect(calls.map(route)).toEqual(routes);
  });

  it('leaves an opportunity moved on since the invitation where it is: a retry never takes it back', async () => {
    const { adapter, calls } = serving('lever-opportunity.json');
    const seen = { ...target, fromStageId: 'applicant-new', fromStage: { id: 'applicant-new' } };
    expect(await adapter.moveToStage(seen, { id: 'd3e4-hm-review' })).toEqual({
      moved: false,
      stageId: 'c1b2-ai-interview',
      skipped: 'not-moved:moved-on',
    });
    expect(calls.map(route)).toEqual(['GET /v1/opportunities/250d8f03-0002']);
    const still = { ...target, fromStageId: 'c1b2-ai-interview', fromStage: { id: 'c1b2-ai-interview' } };
    expect(await adapter.moveToStage(still, { id: 'd3e4-hm-review' })).toEqual({
      moved: true,
      stageId: 'd3e4-hm-review',
    });
  });

  it('refuses an opportunity read whose archive reason is not a string', async () => {
    const { adapter } = lever(() =>
      json(200, { data: { id: '250d8f03-0002', stage: 'c1b2-ai-interview', archived: { reason: 42 } } }),
    );
    await expect(adapter.readStanding(target)).rejects.toMatchObject({ code: 'ats-malformed-response' });
  });
});

describe('Class: LeverAdapter, status tags', () => {
  const tagging = () => lever((call) => (call.method === 'POST' ? json(200, { data: {} }) : notFound(call)));

  it('with no tag, removes the others and adds nothing', async () => {
    const { adapter, calls } = tagging();
    await adapter.setStatusTag?.(target, undefined, ['AI interview: invited']);
    expect(calls.map((c) => [route(c), c.body])).toEqual([
      ['POST /v1/opportunities/250d8f03-0002/removeTags?perform_as=u-1', { tags: ['AI interview: invited'] }],
    ]);
  });

  it('with a tag, removes the others, then adds it', async () => {
    const { adapter, calls } = tagging();
    await adapter.setStatusTag?.(target, 'AI interview: cancelled', ['AI interview: invited']);
    expect(calls.map(route)).toEqual([
      'POST /v1/opportunities/250d8f03-0002/removeTags?perform_as=u-1',
      'POST /v1/opportunities/250d8f03-0002/addTags?perform_as=u-1',
    ]);
  });
});
