import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GreenhouseAdapter } from '../../../shared/ats/greenhouse/greenhouse.adapter';
import type { InboundWebhook } from '../../../shared/ats/port';
import { parseConnections } from '../../../shared/config';
import { loadRawFixture } from '../../helpers/fixtures';
import { connectionDocument } from '../../helpers/connections';
import { stageEnteredMessage } from '../../helpers/pipeline-records';

const SECRET = 'whsec_greenhouse_test_secret';
const adapter = new GreenhouseAdapter({
  connection: parseConnections(connectionDocument())[0]!,
  secrets: { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), atsWebhookSecret: SECRET },
});
/** Greenhouse's scheme has no timestamp: the time the port passes changes nothing. */
const verify = (request: InboundWebhook) => adapter.verifyWebhook(request, Date.now());
const raw = (name: string) => loadRawFixture(`contract/greenhouse/fixtures/${name}`);
/** Greenhouse's scheme, computed here on its own: `Signature: sha256 <hex HMAC-SHA256 of the raw body>`. */
const sign = (body: Buffer | string, secret = SECRET) =>
  `sha256 ${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('Contract: Greenhouse webhooks (webhooks/_introduction.md, _candidate_events.md)', () => {
  it('verifies the signature over the raw, unicode-escaped bytes', () => {
    const body = raw('candidate-stage-change.json');
    expect(body.toString()).toContain('\\u003c');
    expect(verify({ headers: { signature: sign(body) }, rawBody: body })).toEqual({ valid: true });
    expect(
      verify({
        headers: { signature: sign(body).toUpperCase().replace('SHA256', 'sha256') },
        rawBody: body,
      }),
    ).toEqual({ valid: true });
  });

  it.each([
    ['another secret', (body: Buffer) => sign(body, 'other-secret')],
    ['the re-serialised JSON', (body: Buffer) => sign(JSON.stringify(JSON.parse(body.toString())))],
    ['the "sha256=" form of other ATSs', (body: Buffer) => sign(body).replace('sha256 ', 'sha256=')],
    ['a truncated digest', (body: Buffer) => sign(body).slice(0, -2)],
    ['another algorithm name', (body: Buffer) => sign(body).replace('sha256', 'sha1')],
    ['no digest', () => 'sha256'],
  ])('refuses a signature made with %s', (_name, signature) => {
    const body = raw('candidate-stage-change.json');
    expect(verify({ headers: { signature: signature(body) }, rawBody: body }).valid).toBe(false);
  });

  it('refuses a delivery without a signature, and a tampered body', () => {
    const body = raw('candidate-stage-change.json');
    expect(verify({ headers: {}, rawBody: body })).toEqual({
      valid: false,
      reason: 'no Signature header',
    });
    const tampered = Buffer.from(body.toString().replace('"ana@example.com"', '"eve@example.com"'));
    expect(verify({ headers: { signature: sign(body) }, rawBody: tampered })).toEqual({
      valid: false,
      reason: 'signature does not match',
    });
  });

  it('reads a stage change into the neutral event, preferring the personal e-mail', () => {
    const result = adapter.parseWebhook({
      headers: { 'greenhouse-event-id': 'evt-123' },
      rawBody: raw('candidate-stage-change.json'),
    });
    // The fixture is application 4401 of job 3301 entering stage 9001, the event the use-case tests start from.
    const { event } = stageEnteredMessage({
      deliveryId: 'evt-123',
      jobName: 'Backend Engineer <Platform>',
      candidate: { name: 'Ana Ruiz', email: 'ana@example.com' },
    });
    expect(result).toEqual({ kind: 'stage-entered', event });
  });

  it('reads delete_candidate (the documented payload) as a deletion of the person and their applications', () => {
    const body = Buffer.from(
      JSON.stringify({
        action: 'delete_candidate',
        payload: {
          person: {
            id: 37031511,
            first_name: 'Jack',
            last_name: 'Sparrow',
            deleted_application_ids: [46196263, 46196258],
          },
        },
      }),
    );
    expect(adapter.parseWebhook({ headers: { 'greenhouse-event-id': 'evt-del' }, rawBody: body })).toEqual({
      kind: 'candidate-deleted',
      event: { deliveryId: 'evt-del', atsCandidateId: '37031511', atsApplicationIds: ['46196263', '46196258'] },
    });
  });

  it('reads past one unreadable item of a list: an e-mail without a value, a job or a deleted id malformed', () => {
    const document = JSON.parse(raw('candidate-stage-change.json').toString('utf8'));
    const application = document.payload.application;
    application.candidate.email_addresses = [{ type: 'work' }, ...application.candidate.email_addresses];
    application.jobs = [...application.jobs, { name: 'no id' }];
    const changed = adapter.parseWebhook({
      headers: { 'greenhouse-event-id': 'evt-123' },
      rawBody: Buffer.from(JSON.stringify(document)),
    });
    const { event } = stageEnteredMessage({
      deliveryId: 'evt-123',
      jobName: 'Backend Engineer <Platform>',
      candidate: { name: 'Ana Ruiz', email: 'ana@example.com' },
    });
    expect(changed).toEqual({ kind: 'stage-entered', event });
    const person = { id: 37031511, deleted_application_ids: [46196263, { id: 'x' }, 46196258] };
    const deleted = Buffer.from(JSON.stringify({ action: 'delete_candidate', payload: { person } }));
    expect(adapter.parseWebhook({ headers: { 'greenhouse-event-id': 'evt-del' }, rawBody: deleted })).toMatchObject({
      kind: 'candidate-deleted',
      event: { atsApplicationIds: ['46196263', '46196258'] },
    });
  });

  it('derives a delivery id from the body when the header is missing', () => {
    const body = raw('candidate-stage-change.json');
    const a = adapter.parseWebhook({ headers: {}, rawBody: body });
    const b = adapter.parseWebhook({ headers: {}, rawBody: body });
    expect(a.kind === 'stage-entered' && a.event.deliveryId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(a).toEqual(b);
  });

  it.each([
    ['ping.json', { kind: 'ping' }],
    ['prospect-stage-change.json', { kind: 'ignored', reason: 'a prospect without a job' }],
  ])('reads %s', (name, expected) => {
    expect(adapter.parseWebhook({ headers: {}, rawBody: raw(name) })).toEqual(expected);
  });

  it.each([
    [
      '{"action":"candidate_stage_change","payload":{"application":' +
        '{"id":1,"status":"rejected","candidate":{"id":2},"jobs":[{"id":3}]}}}',
      'ignored',
    ],
    ['{"action":"delete_candidate","payload":{}}', 'invalid'],
    ['{"action":"application_updated","payload":{}}', 'ignored'],
    ['not json', 'invalid'],
    ['{"payload":{}}', 'invalid'],
    ['{"action":"candidate_stage_change","payload":{"application":{"id":1,"candidate":{}}}}', 'invalid'],
  ])('reads %s as %s', (body, kind) => {
    expect(adapter.parseWebhook({ headers: {}, rawBody: Buffer.from(body) }).kind).toBe(kind);
  });
});
