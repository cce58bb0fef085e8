import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAtsAdapter } from '../../../shared/ats';
import { parseConnections, type AtsKind } from '../../../shared/config';
import { loadFixture, loadRawFixture } from '../../helpers/fixtures';
import { connectionDocument } from '../../helpers/connections';

const SECRET = 'whsec_test_0123456789';
const NOW = 1795268400123 + 60_000;
const adapterFor = (ats: AtsKind) =>
  createAtsAdapter(parseConnections(connectionDocument({ ats, id: `acme-${ats}` }))[0]!, {
    interviewApiKey: 'k',
    interviewWebhookToken: 't'.repeat(32),
    atsWebhookSecret: SECRET,
    atsApiKey: 'key',
  });
const hmac = (data: Buffer | string, secret = SECRET) => createHmac('sha256', secret).update(data);

describe('Contract: Ashby webhooks (developers.ashbyhq.com: authenticating-webhooks, related-webhooks)', () => {
  const adapter = adapterFor('ashby');
  const body = loadRawFixture('contract/ats/fixtures/ashby-candidate-stage-change.json');

  it('verifies Ashby-Signature: sha256=<hex> over the raw body, and nothing else', () => {
    expect(
      adapter.verifyWebhook(
        { headers: { 'ashby-signature': `sha256=${hmac(body).digest('hex')}` }, rawBody: body },
        NOW,
      ),
    ).toEqual({ valid: true });
    for (const header of [
      `sha256 ${hmac(body).digest('hex')}`,
      `sha256=${hmac(body, 'other').digest('hex')}`,
      hmac(body).digest('hex'),
      undefined,
    ]) {
      expect(adapter.verifyWebhook({ headers: { 'ashby-signature': header }, rawBody: body }, NOW).valid).toBe(false);
    }
  });

  it('reads candidateStageChange, derives a stable delivery key, and reads the applicationUpdate as a hint', () => {
    const first = adapter.parseWebhook({ headers: {}, rawBody: body });
    expect(first).toMatchObject({
      kind: 'stage-entered',
      event: {
        atsJobId: '4071538b-0005',
        jobName: 'Backend Engineer',
        atsApplicationId: '5e1c4a2b-0001',
        atsCandidateId: 'a9d2c3f4-0002',
        stage: { id: '3ae2b801-0003', name: 'AI Interview' },
        candidate: { name: 'Ana Ruiz', email: 'ana@example.com' },
      },
    });
    expect(adapter.parseWebhook({ headers: {}, rawBody: body })).toEqual(first);
    const later = Buffer.from(body.toString().replace('2026-03-04T09:12:00Z', '2026-03-05T10:00:00Z'));
    expect(
      (adapter.parseWebhook({ headers: {}, rawBody: later }) as { event: { deliveryId: string } }).event.deliveryId,
    ).not.toBe((first as { event: { deliveryId: string } }).event.deliveryId);
    const fanOut = Buffer.from(body.toString().replace('"candidateStageChange"', '"applicationUpdate"'));
    // An Active application's update is a hint that a candidate who left may be back: the worker reads before acting.
    expect(adapter.parseWebhook({ headers: {}, rawBody: fanOut })).toMatchObject({
      kind: 'application-changed',
      event: { atsApplicationId: '5e1c4a2b-0001', change: 'returned' },
    });
    expect(adapter.parseWebhook({ headers: {}, rawBody: Buffer.from('{"action":"ping","data":{}}') })).toEqual({
      kind: 'ping',
    });
  });
});

describe('Contract: Lever webhooks (signature over token + triggeredAt)', () => {
  const adapter = adapterFor('lever');
  const signedBody = (overrides: Record<string, unknown> = {}, secret = SECRET) => {
    const document = {
      ...loadFixture('contract/ats/fixtures/lever-candidate-stage-change.json'),
      ...overrides,
    } as Record<string, unknown>;
    document.signature = hmac(`${document.token}${document.triggeredAt}`, secret).digest('hex');
    return Buffer.from(JSON.stringify(document));
  };

  it('verifies the body signature and returns what was signed, hashed, as the replay key', () => {
    const signed = createHash('sha256').update('b3f5c0d1e2a34b5c1795268400123').digest('hex');
    expect(adapter.verifyWebhook({ headers: {}, rawBody: signedBody() }, NOW)).toEqual({
      valid: true,
      replayKey: `lever-signed:${signed}`,
      replayTtlSeconds: 1200,
    });
  });

  it.each([
    ['another signature token', () => signedBody({}, 'other'), 'signature does not match'],
    ['a triggeredAt 11 minutes old', () => signedBody({ triggeredAt: NOW - 11 * 60_000 }), 'stale'],
    ['a triggeredAt from the future', () => signedBody({ triggeredAt: NOW + 11 * 60_000 }), 'stale'],
    [
      'no signature',
      () =>
        Buffer.from(
          JSON.stringify({
            ...loadFixture('contract/ats/fixtures/lever-candidate-stage-change.json'),
            signature: undefined,
          }),
        ),
      'no signed fields',
    ],
  ])('refuses %s', (_name, body, reason) => {
    const result = adapter.verifyWebhook({ headers: {}, rawBody: body() }, NOW);
    expect(result.valid).toBe(false);
    expect(result.valid === false && result.reason).toContain(reason);
  });

  it('accepts a tampered body whose signed fields are intact: which is why the worker re-reads the opportunity', () => {
    const tampered = signedBody({ data: { opportunityId: 'someone-else', toStageId: 'offer' } });
    expect(adapter.verifyWebhook({ headers: {}, rawBody: tampered }, NOW).valid).toBe(true);
  });

  it('reads ids only: no job, no name, no e-mail until confirmed', () => {
    expect(adapter.parseWebhook({ headers: {}, rawBody: signedBody() })).toEqual({
      kind: 'stage-entered',
      event: {
        deliveryId: 'b3f5c0d1e2a34b5c',
        atsApplicationId: '250d8f03-aaaa',
        atsCandidateId: '7a1c0b2d-bbbb',
        stage: { id: 'c1b2-ai-interview' },
        candidate: {},
      },
    });
    expect(adapter.parseWebhook({ headers: {}, rawBody: signedBody({ event: 'candidateHired' }) })).toMatchObject({
      kind: 'application-changed',
      event: { atsApplicationId: '250d8f03-aaaa', change: 'left' },
    });
  });
});

describe('Contract: Workable webhooks (X-Workable-Signature)', () => {
  const adapter = adapterFor('workable');
  const body = loadRawFixture('contract/ats/fixtures/workable-candidate-moved.json');

  it('accepts the signature in hex and in base64, the two encodings the docs leave open', () => {
    expect(
      adapter.verifyWebhook({ headers: { 'x-workable-signature': hmac(body).digest('hex') }, rawBody: body }, NOW),
    ).toEqual({ valid: true });
    expect(
      adapter.verifyWebhook({ headers: { 'x-workable-signature': hmac(body).digest('base64') }, rawBody: body }, NOW),
    ).toEqual({ valid: true });
    expect(
      adapter.verifyWebhook(
        { headers: { 'x-workable-signature': hmac(body, 'other').digest('hex') }, rawBody: body },
        NOW,
      ).valid,
    ).toBe(false);
    expect(adapter.verifyWebhook({ headers: {}, rawBody: body }, NOW).valid).toBe(false);
  });

  it('reads candidate_moved with the stage name, and a disqualification as the candidate leaving', () => {
    expect(adapter.parseWebhook({ headers: {}, rawBody: body })).toEqual({
      kind: 'stage-entered',
      event: {
        deliveryId: '7f3a9c1e-6b2d-4e8f-9a0b-1c2d3e4f5a6b',
        atsJobId: 'GROOV005',
        jobName: 'Backend Engineer',
        atsApplicationId: '3fc9a8',
        atsCandidateId: '3fc9a8',
        stage: { name: 'AI Interview' },
        candidate: { name: 'Ana Ruiz', email: 'ana@example.com' },
      },
    });
    const disqualified = Buffer.from(body.toString().replace('"disqualified":false', '"disqualified":true'));
    // A disqualification is the candidate leaving the process, never a stage entry.
    expect(adapter.parseWebhook({ headers: {}, rawBody: disqualified })).toMatchObject({
      kind: 'application-changed',
      event: { atsApplicationId: '3fc9a8', change: 'left' },
    });
    expect(
      adapter.parseWebhook({ headers: {}, rawBody: Buffer.from('{"event_type":"candidate_created","data":{}}') }).kind,
    ).toBe('ignored');
  });
});
