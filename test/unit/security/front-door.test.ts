import { createHmac } from 'node:crypto';
import * as v from 'valibot';
import { describe, expect, it, vi } from 'vitest';
import { webhookConnection } from '../../../functions/_runtime/webhook-connection';
import { createAtsAdapter } from '../../../shared/ats';
import { boundStageEnteredEvent } from '../../../shared/ats/bounds';
import {
  connectionSecretsSchema,
  parseConnections,
  SecretsError,
  stageIdForJob,
  type AtsKind,
} from '../../../shared/config';
import { SesMailer } from '../../../shared/mail/ses.mailer';
import { maskEmails, scrub } from '../../../shared/observability/logger';
import { formatReportNote, handleReportCreated, handleStageEntered } from '../../../shared/pipeline';
import { matchTriggers } from '../../../shared/pipeline/trigger-matching';
import { deliveryIdOf, singleEmailAddress } from '../../../shared/validation';
import { connectionDocument } from '../../helpers/connections';
import { dependencies, fakeContext, fakeStore, readyToInvite } from '../../helpers/pipeline-fakes';
import {
  applicationRecord,
  NOW,
  reportFactory,
  reportCreatedMessage,
  stageEnteredMessage,
} from '../../helpers/pipeline-records';

const SECRET = 'whsec_front_door_0123456789';
const adapterFor = (ats: AtsKind, overrides: Record<string, unknown> = {}) =>
  createAtsAdapter(parseConnections(connectionDocument({ ats, id: `acme-${ats}`, ...overrides }))[0]!, {
    interviewApiKey: 'k',
    interviewWebhookToken: 't'.repeat(32),
    atsWebhookSecret: SECRET,
    atsApiKey: 'key',
    atsClientId: 'id',
    atsClientSecret: 'secret',
  });
const hex = (data: Buffer | string) => createHmac('sha256', SECRET).update(data).digest('hex');
const base64 = (data: Buffer | string) => createHmac('sha256', SECRET).update(data).digest('base64');

describe('Finding 1: Lever replays are keyed on what was signed', () => {
  const adapter = adapterFor('lever');
  const now = 1_795_268_400_123;
  const body = (token: string, triggeredAt: number | string, event = 'candidateStageChange') =>
    Buffer.from(
      JSON.stringify({
        triggeredAt,
        token,
        event,
        signature: hex(`${token}${triggeredAt}`),
        data: { opportunityId: 'opp-1', toStageId: 'stage-1' },
      }),
    );

  it('refuses triggeredAt as a digit string, so "token0" + "ms" cannot become "token" + "0ms"', () => {
    const original = adapter.verifyWebhook({ headers: {}, rawBody: body('b3f5c0d1e2a340', now) }, now);
    expect(original.valid).toBe(true);
    // The same signed string, split differently: the signature is still valid for it.
    const shifted = adapter.verifyWebhook({ headers: {}, rawBody: body('b3f5c0d1e2a34', `0${now}`) }, now);
    expect(shifted).toMatchObject({ valid: false, reason: expect.stringContaining('triggeredAt') });
  });

  it('gives one replay key per signed string, whatever the unsigned event says', () => {
    const stage = adapter.verifyWebhook({ headers: {}, rawBody: body('tok-1', now) }, now);
    const deleted = adapter.verifyWebhook({ headers: {}, rawBody: body('tok-1', now, 'candidateDeleted') }, now);
    const other = adapter.verifyWebhook({ headers: {}, rawBody: body('tok-2', now) }, now);
    expect(stage.valid && deleted.valid && other.valid).toBe(true);
    const key = (result: typeof stage) => (result.valid ? result.replayKey : undefined);
    expect(key(stage)).toBe(key(deleted));
    expect(key(stage)).not.toBe(key(other));
    expect(key(stage)).not.toContain('tok-1');
  });
});

describe('Finding 2: the log scrubber is linear and skips lines the level drops', () => {
  // The fastest of several runs: what the work costs, with as little of a busy machine's other work as can be had.
  const timeMask = (text: string) =>
    Math.min(
      ...Array.from({ length: 9 }, () => {
        const started = performance.now();
        maskEmails(text);
        return performance.now() - started;
      }),
    );

  it('masks 512 KB in about 16 times what 32 KB takes, not 256 times (a run of letters with no @)', () => {
    timeMask('a'.repeat(32_000));
    // Inputs large enough that a run takes many milliseconds: the timer's grain and a busy machine's pauses stay small.
    const small = timeMask('a'.repeat(32_000));
    const large = timeMask('a'.repeat(512_000));
    // Linear is 16x; the quadratic pattern this replaced was 256x. The bound leaves room for a busy machine.
    expect(large / Math.max(small, 0.05)).toBeLessThan(64);
  });

  it('cuts a long string before scrubbing it and still masks what it keeps', () => {
    const scrubbed = scrub({ detail: `ana@example.com ${'x'.repeat(100_000)}` }) as { detail: string };
    expect(scrubbed.detail.length).toBeLessThan(2_100);
    expect(scrubbed.detail).toMatch(/^\[email\] x+…\[\d+ more characters\]$/);
  });
});

describe('Finding 3: every id is bounded at the door', () => {
  it('keeps a safe delivery id and hashes one that is too long or odd, never refusing it', () => {
    expect(deliveryIdOf('3f1c9d1e-7a2b', Buffer.from('{}'))).toBe('3f1c9d1e-7a2b');
    for (const raw of ['x'.repeat(3_000), 'has spaces', 'ünïcode']) {
      const id = deliveryIdOf(raw, Buffer.from('{}'));
      expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(id).toBe(deliveryIdOf(raw, Buffer.from('other body')));
    }
    expect(deliveryIdOf(undefined, Buffer.from('a'))).not.toBe(deliveryIdOf(undefined, Buffer.from('b')));
  });

  it('bounds names and e-mail so a queued message stays small whatever the webhook carried', () => {
    const event = boundStageEnteredEvent(
      {
        deliveryId: 'd'.repeat(2_100),
        atsJobId: '3301',
        jobName: `Engineer\r\nBcc: x@y.com${'j'.repeat(500_000)}`,
        atsApplicationId: '1',
        atsCandidateId: '2',
        stage: { id: '9', name: 's'.repeat(300_000) },
        candidate: { name: 'n'.repeat(400_000), email: `${'e'.repeat(300)}@example.com` },
      },
      Buffer.from('{}'),
    );
    expect(JSON.stringify(event).length).toBeLessThan(1_000);
    expect(event.jobName).not.toMatch(/[\r\n]/);
    expect(event.candidate.email).toBeUndefined();
    expect(event.deliveryId).toMatch(/^sha256:/);
  });
});

describe('Finding 5: fields that reach people are clean', () => {
  it.each([
    ['ana@example.com', 'ana@example.com'],
    [' ana.ruiz+jobs@example.co.uk ', 'ana.ruiz+jobs@example.co.uk'],
    ['a@x.com, b@y.com', undefined],
    ['"V" <v@x.com>', undefined],
    ['a@x.com\r\nBcc: b@y.com', undefined],
    ['no-at-sign', undefined],
    [`${'a'.repeat(250)}@x.com`, undefined],
  ])('takes %j as %j', (raw, expected) => {
    expect(singleEmailAddress(raw)).toBe(expected);
  });

  it('sends the invite with the job and candidate names on one line, never a header or an extra line', async () => {
    const send = vi.fn().mockResolvedValue({ MessageId: 'm-1' });
    const mailer = new SesMailer({ defaultFrom: 'interviews@example.com', client: { send } as never });
    await mailer.sendInvite({
      to: 'ana@example.com',
      candidateName: 'Ana\r\nBcc: victim@example.com',
      jobName: 'Engineer\nBcc: victim@example.com\u2028<b>x</b>',
      inviteUrl: 'https://i.example.com/1',
      language: 'en',
    });
    const input = send.mock.calls[0]![0].input;
    expect(input.Destination.ToAddresses).toEqual(['ana@example.com']);
    expect(input.Content.Simple.Subject.Data).toBe('Your interview for Engineer Bcc: victim@example.com <b>x</b>');
    expect(input.Content.Simple.Body.Text.Data.split('\n')[0]).toBe('Hello Ana Bcc: victim@example.com,');
  });

  it('skips the e-mail for an address that is not one mailbox, and still posts the note with the link', async () => {
    const store = fakeStore();
    const { context, ats } = fakeContext();
    const deps = readyToInvite(store, context);
    const message = stageEnteredMessage({
      jobName: undefined,
      candidate: { name: 'Ana', email: 'ana@example.com, victim@example.com' },
    });
    const [result] = await handleStageEntered(message, deps);
    expect(result).toMatchObject({ outcome: 'invited' });
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    // The invitation's note with the link, then one telling the recruiter why no e-mail went out.
    expect(ats.postNote).toHaveBeenCalledTimes(2);
    expect(ats.postNote.mock.calls[0]?.[1].body).toContain('Interview link');
    expect(ats.postNote.mock.calls[1]?.[1].body).toContain('no usable e-mail address');
    expect(ats.postNote.mock.calls[1]?.[1].body).not.toContain('victim@example.com');
    expect(deps.logger.warn).toHaveBeenCalledWith(
      expect.stringContaining('not one mailbox'),
      expect.not.objectContaining({ email: expect.anything() }),
    );
  });
});

describe('Finding 6: report text cannot forge the note, and only https links are linked', () => {
  const decision = { advance: false, explanation: 'Flagged for review: AI match score 40 is below 75.' };

  it('quotes and flattens feedback, so no line of the note comes from the report', () => {
    const note = formatReportNote(
      reportFactory({
        ai_match_score: 40,
        custom_question_evaluation: [
          {
            question_text: 'Why us?\nAI match score: 100 / 100',
            ai_evaluation: {
              rating: 'Good',
              feedback: 'Great.\nAI match score: 100 / 100\nAdvanced automatically: AI match score 100 ≥ 75',
            },
          },
        ] as never,
      }),
      decision,
    );
    const lines = note.split('\n');
    expect(lines.filter((line) => line.startsWith('AI match score'))).toEqual(['AI match score: 40 / 100']);
    expect(lines.some((line) => line.startsWith('Advanced automatically'))).toBe(false);
    expect(note).toContain('“Great. AI match score: 100 / 100 Advanced automatically: AI match score 100 ≥ 75”');
  });

  it.each([
    'javascript:alert(1)',
    'data:text/html,<script>x</script>',
    'http://files.example.com/r.pdf',
    'https://x.example.com/a b',
  ])('does not link %s in the note or in the ATS', async (url) => {
    const note = formatReportNote(reportFactory({ report_url: url, interview_recording_player_url: url }), decision);
    expect(note).not.toContain(url);
    const store = fakeStore();
    const { context, ats, interviews } = fakeContext();
    const attachReportLink = vi.fn().mockResolvedValue(undefined);
    Object.assign(ats, { attachReportLink });
    interviews.listReports.mockResolvedValue([reportFactory({ report_url: url })]);
    store.findApplicationByInterview.mockResolvedValue(applicationRecord());
    store.claimWriteBack.mockResolvedValue({ kind: 'claimed', record: applicationRecord({ state: 'completed' }) });
    await handleReportCreated(reportCreatedMessage({ enqueueId: 'e' }), dependencies(store, context));
    expect(ats.postNote).toHaveBeenCalledTimes(1);
    expect(attachReportLink).not.toHaveBeenCalled();
  });
});

describe('Finding 8: signatures are exact', () => {
  const body = Buffer.from('{"action":"ping","payload":{}}');
  const cases: [AtsKind, Record<string, string>][] = [
    ['greenhouse', { signature: `sha256 ${hex(body)}0` }],
    ['greenhouse', { signature: `sha256 ${hex(body)} junk` }],
    ['greenhouse', { signature: `sha256  ${hex(body)}` }],
    ['ashby', { 'ashby-signature': `sha256=${hex(body)}0` }],
    ['workable', { 'x-workable-signature': `${hex(body)}0` }],
    // Base64 whose last character differs only in bits the decoder drops: non-canonical, same bytes.
    ['workable', { 'x-workable-signature': base64(body).replace(/(.)=$/, (_m, c: string) => `${nudge(c)}=`) }],
  ];
  it.each(cases)('%s refuses %j', (kind, headers) => {
    expect(adapterFor(kind).verifyWebhook({ headers, rawBody: body }, NOW)).toMatchObject({ valid: false });
  });

  it.each([
    ['greenhouse', { signature: `sha256 ${hex(body)}` }],
    ['ashby', { 'ashby-signature': `sha256=${hex(body)}` }],
    ['workable', { 'x-workable-signature': hex(body) }],
    ['workable', { 'x-workable-signature': base64(body) }],
  ] as [AtsKind, Record<string, string>][])('%s accepts the exact digest %j', (kind, headers) => {
    expect(adapterFor(kind).verifyWebhook({ headers, rawBody: body }, NOW)).toEqual({ valid: true });
  });

  it('lever refuses a digest with one extra hex character', () => {
    const token = 'tok';
    const rawBody = Buffer.from(
      JSON.stringify({ triggeredAt: NOW, token, event: 'x', signature: `${hex(`${token}${NOW}`)}0` }),
    );
    expect(adapterFor('lever').verifyWebhook({ headers: {}, rawBody }, NOW)).toMatchObject({ valid: false });
  });
});

/** The base64 character one up in the alphabet: for the digest's last character, only dropped bits change. */
function nudge(character: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  return alphabet[(alphabet.indexOf(character) + 1) % 64] as string;
}

describe('Finding 9: webhook secrets are long enough, and an unreadable one answers 503 with an ERROR line', () => {
  it.each([' ', 'a', ' '.repeat(20), 'short-secret'])('refuses atsWebhookSecret %j', (secret) => {
    const parsed = v.safeParse(connectionSecretsSchema, {
      interviewApiKey: 'k',
      interviewWebhookToken: 't'.repeat(32),
      atsWebhookSecret: secret,
    });
    expect(parsed.success).toBe(false);
  });

  it('answers 503 and logs an ERROR naming the connection when its secret cannot be read', async () => {
    const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const loaded = await webhookConnection('acme-greenhouse', logger, async () => {
      throw new SecretsError('secret-unavailable', 'Secrets Manager did not answer');
    });
    expect(loaded).toMatchObject({ ok: false, response: { statusCode: 503 } });
    expect(logger.error).toHaveBeenCalledWith(
      expect.any(String),
      expect.objectContaining({ connectionId: 'acme-greenhouse', code: 'secret-unavailable' }),
    );
  });
});

describe('Finding 10: lookups keyed by an outside id read own properties only', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])('job id %s names no stage', (jobId) => {
    expect(stageIdForJob({ idsByJob: { '3301': 'stage-a' } }, jobId)).toBeUndefined();
    const connection = parseConnections(
      connectionDocument({
        triggers: [
          {
            id: 't',
            jobs: 'all',
            stage: { idsByJob: { '3301': 'stage-a' } },
            interview: { questions: [{ question: 'Q?', time: 3, type: 'audio' }] },
          },
        ],
      }),
    )[0]!;
    expect(
      matchTriggers(connection, { atsJobId: jobId, stage: { id: 'function Object() { [native code] }' } }),
    ).toEqual([]);
  });

  it('ashby does not move an application of job "constructor" to an inherited function as a stage', async () => {
    // application.info answers with the current stage; every list is empty.
    const fetch = vi.fn(async (url: string, _init?: RequestInit) =>
      Response.json({
        success: true,
        results: String(url).endsWith('/application.info')
          ? { id: 'a', currentInterviewStage: { id: 'current', interviewPlanId: 'plan' } }
          : [],
        moreDataAvailable: false,
      }),
    );
    const adapter = createAtsAdapter(
      parseConnections(connectionDocument({ ats: 'ashby', id: 'acme-ashby' }))[0]!,
      { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), atsWebhookSecret: SECRET, atsApiKey: 'key' },
      { fetch: fetch as unknown as typeof globalThis.fetch },
    );
    await adapter
      .moveToStage(
        { atsApplicationId: 'a', atsCandidateId: 'c', atsJobId: 'constructor' },
        { idsByJob: { '3301': 'next' } },
      )
      .catch(() => undefined);
    const moves = fetch.mock.calls.filter(([url]) => String(url).endsWith('/application.changeStage'));
    expect(moves).toEqual([]);
  });
});
