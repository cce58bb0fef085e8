import { describe, expect, it } from 'vitest';
import {
  CONNECT_LINK_DAYS,
  type ConsoleDependencies,
  handleConsoleRequest,
  linkHash,
  maskEmail,
} from '../../../shared/admin/console-api';
import { dayOf, type TimelineEntry } from '../../../shared/mapping/activity.records';
import { VersionConflictError } from '../../../shared/mapping/connections.records';
import { workableFields } from '../../helpers/connections';
import { consoleFakes, deadLetter, operatorsAudit } from '../../helpers/console';
import { applicationRecord, NOW } from '../../helpers/pipeline-records';

const OPERATOR = 'cognito:ops-kim';
const DAY_MS = 86_400_000;

const ask = (
  deps: ConsoleDependencies,
  method: string,
  path: string[],
  request: { body?: unknown; query?: Record<string, string> } = {},
) => handleConsoleRequest({ method, path, query: request.query ?? {}, body: request.body, principal: OPERATOR }, deps);

const failure = (atsApplicationId: string, at: number, kind: TimelineEntry['kind'], code?: string): TimelineEntry => ({
  connectionId: 'acme-greenhouse',
  atsApplicationId,
  at,
  kind,
  detail: `${kind} ${code ?? ''}`,
  code,
});

describe('Use case: the console API', () => {
  describe('the connections page', () => {
    it("shows each connection's counts today, its doctor's passes and fails, a rate limit while it lasts", async () => {
      const fakes = consoleFakes();
      await fakes.seed();
      await fakes.seed(workableFields());
      fakes.activity.dayRows.push(
        {
          connectionId: 'acme-greenhouse',
          day: dayOf(NOW),
          counts: { Invited: 3, Failed: 1 },
          lastWebhookAt: NOW - 60_000,
          lastWriteBackAt: NOW - 120_000,
        },
        { connectionId: 'acme-workable', day: dayOf(NOW - DAY_MS), counts: { Invited: 9 } },
      );
      fakes.activity.doctorResults.set('acme-greenhouse', {
        connectionId: 'acme-greenhouse',
        at: NOW - 5_000,
        principal: OPERATOR,
        lines: [
          { status: 'pass', what: 'a' },
          { status: 'pass', what: 'b' },
          { status: 'fail', what: 'c' },
          { status: 'info', what: 'd' },
        ],
      });
      fakes.backlogs.set('acme-greenhouse', NOW + 90_000);
      fakes.backlogs.set('acme-workable', NOW - 1);
      fakes.deadLetters.held.report.push(deadLetter(), deadLetter({ messageId: 'm-2' }));

      const answer = await ask(fakes.deps, 'GET', ['overview']);

      expect(answer.status).toBe(200);
      const [greenhouse, workable] = answer.body.connections as Record<string, unknown>[];
      expect(greenhouse).toMatchObject({
        id: 'acme-greenhouse',
        ats: 'greenhouse',
        today: { Invited: 3, Failed: 1 },
        lastWebhookAt: NOW - 60_000,
        lastWriteBackAt: NOW - 120_000,
        doctor: { at: NOW - 5_000, passed: 2, failed: 1 },
        rateLimitedUntil: NOW + 90_000,
      });
      // Yesterday's counts are not today's; a rate limit that has passed is not shown.
      expect(workable).toMatchObject({ id: 'acme-workable', today: {} });
      expect(workable?.doctor).toBeUndefined();
      expect(workable?.rateLimitedUntil).toBeUndefined();
      expect(answer.body.deadLetters).toEqual({ stage: 0, report: 2 });
    });

    it('still shows the page when a connection’s rate limit cannot be read', async () => {
      const fakes = consoleFakes();
      await fakes.seed();
      const deps = { ...fakes.deps, backlogUntil: () => Promise.reject(new Error('throttled')) };
      const answer = await ask(deps, 'GET', ['overview']);
      expect(answer.status).toBe(200);
      expect((answer.body.connections as Record<string, unknown>[])[0]?.rateLimitedUntil).toBeUndefined();
    });

    it("runs the doctor and keeps its result under the operator's name for the connection's page", async () => {
      const fakes = consoleFakes();
      await fakes.seed();
      const run = await ask(fakes.deps, 'POST', ['connections', 'acme-greenhouse', 'doctor']);
      expect(run).toMatchObject({ status: 200, body: { connectionId: 'acme-greenhouse', principal: OPERATOR } });
      const kept = await ask(fakes.deps, 'GET', ['connections', 'acme-greenhouse', 'doctor']);
      expect(kept.body.doctor).toEqual(run.body);
      expect((await ask(fakes.deps, 'POST', ['connections', 'nobody', 'doctor'])).status).toBe(404);
    });
  });

  describe("a candidate's page", () => {
    const kim = applicationRecord({
      candidateEmail: 'kim@example.com',
      leaseOwner: 'worker-7',
      leaseUntil: NOW + 30_000,
      candidateInviteUrl: 'https://interviews.example.com/i/kim-private-link',
    });

    it('masks the e-mail and never shows the lease or the invitation link', async () => {
      const fakes = consoleFakes({ applications: [kim] });
      const answer = await ask(fakes.deps, 'GET', ['candidates', 'acme-greenhouse', '4401']);
      expect(answer.status).toBe(200);
      const [application] = answer.body.applications as Record<string, unknown>[];
      expect(application).toMatchObject({ atsApplicationId: '4401', candidateEmail: 'k•••@example.com' });
      expect(application).not.toHaveProperty('leaseOwner');
      expect(application).not.toHaveProperty('leaseUntil');
      expect(application).not.toHaveProperty('candidateInviteUrl');
      const json = JSON.stringify(answer.body);
      expect(json).not.toContain('kim@example.com');
      expect(json).not.toContain('kim-private-link');
      expect(fakes.activity.entries).toEqual([]);
    });

    it('shows the e-mail when asked, and records who saw it on the timeline and in the audit', async () => {
      const fakes = consoleFakes({ applications: [kim] });
      const answer = await ask(fakes.deps, 'GET', ['candidates', 'acme-greenhouse', '4401'], {
        query: { reveal: 'email' },
      });
      expect((answer.body.applications as Record<string, unknown>[])[0]?.candidateEmail).toBe('kim@example.com');
      const onTimeline = await fakes.activity.timeline('acme-greenhouse', '4401');
      expect(onTimeline).toEqual([expect.objectContaining({ kind: 'operator', at: NOW })]);
      expect(onTimeline[0]?.detail).toContain(OPERATOR);
      const [audited] = operatorsAudit(fakes.activity.entries);
      expect(audited).toContain(OPERATOR);
      expect(audited).toContain('4401');
      expect(audited).not.toContain('kim@example.com');
    });

    it('answers 404 when the application has neither records nor a timeline; a timeline alone is shown', async () => {
      const fakes = consoleFakes({ applications: [kim] });
      expect((await ask(fakes.deps, 'GET', ['candidates', 'acme-greenhouse', '9999'])).status).toBe(404);
      expect((await ask(fakes.deps, 'GET', ['candidates', 'acme-workable', '4401'])).status).toBe(404);
      await fakes.activity.addTimeline([failure('5501', NOW - 10, 'webhook')]);
      const timelineOnly = await ask(fakes.deps, 'GET', ['candidates', 'acme-greenhouse', '5501']);
      expect(timelineOnly).toMatchObject({ status: 200, body: { applications: [], timeline: [{ kind: 'webhook' }] } });
    });

    it.each([
      ['kim@example.com', 'k•••@example.com'],
      ['a@b.co', 'a•••@b.co'],
      ['@example.com', '•••'],
      ['not-an-address', '•••'],
    ])('masks %s as %s', (email, masked) => {
      expect(maskEmail(email)).toBe(masked);
    });
  });

  describe('the failures page', () => {
    it('groups the dead letters by kind and their last failure on the timeline, largest group first', async () => {
      const fakes = consoleFakes({
        deadLetters: {
          stage: [
            deadLetter({ messageId: 'lonely', atsApplicationId: '4403' }),
            deadLetter({ messageId: 'a', atsApplicationId: '4401' }),
            deadLetter({ messageId: 'b', atsApplicationId: '4402' }),
            deadLetter({ messageId: 'stray', kind: 'not a message of the connector', atsApplicationId: undefined }),
          ],
          report: [deadLetter({ messageId: 'r', kind: 'report-created', atsApplicationId: '4401' })],
        },
      });
      await fakes.activity.addTimeline([
        failure('4401', NOW - 30, 'attempt-failed', 'ats-429'),
        failure('4401', NOW - 20, 'dead-lettered', 'ats-500'),
        failure('4401', NOW - 10, 'webhook', 'not-a-failure'),
        failure('4402', NOW - 20, 'dead-lettered', 'ats-500'),
        failure('4403', NOW - 20, 'deferred', 'rate-limited'),
      ]);

      const answer = await ask(fakes.deps, 'GET', ['failures']);

      type Groups = { count: number; groups: { kind: string; reason: string; messages: { messageId: string }[] }[] };
      const queues = answer.body.deadLetters as Record<string, Groups>;
      const summary = (q: Groups) => q.groups.map((g) => [g.kind, g.reason, g.messages.map((m) => m.messageId)]);
      expect(queues.stage?.count).toBe(4);
      expect(summary(queues.stage as Groups)).toEqual([
        ['stage-entered', 'ats-500', ['a', 'b']],
        ['stage-entered', 'no failure recorded', ['lonely']],
        ['not a message of the connector', 'no application named', ['stray']],
      ]);
      expect(summary(queues.report as Groups)).toEqual([['report-created', 'ats-500', ['r']]]);
    });

    it('shows the operators’ audit newest first', async () => {
      const fakes = consoleFakes();
      const audit = (at: number, detail: string): TimelineEntry => ({
        connectionId: '(operators)',
        atsApplicationId: '(audit)',
        at,
        kind: 'operator',
        detail,
      });
      await fakes.activity.addTimeline([audit(NOW - 2, 'first'), audit(NOW - 1, 'second')]);
      const answer = await ask(fakes.deps, 'GET', ['failures']);
      expect((answer.body.audit as TimelineEntry[]).map((e) => e.detail)).toEqual(['second', 'first']);
    });

    it('refuses a redrive (409, with the count now) when the queue holds other than the preview showed', async () => {
      const fakes = consoleFakes({ deadLetters: { stage: [deadLetter(), deadLetter({ messageId: 'm-2' })] } });
      const refused = await ask(fakes.deps, 'POST', ['failures', 'redrive'], { body: { queue: 'stage', expected: 3 } });
      expect(refused).toMatchObject({ status: 409, body: { count: 2 } });
      expect(operatorsAudit(fakes.activity.entries)).toEqual([]);

      const started = await ask(fakes.deps, 'POST', ['failures', 'redrive'], { body: { queue: 'stage', expected: 2 } });
      expect(started).toEqual({ status: 202, body: { queue: 'stage', moving: 2 } });
      expect(operatorsAudit(fakes.activity.entries)).toEqual([`${OPERATOR} redrove 2 message(s) of the stage DLQ`]);
    });

    it.each([
      [{ queue: 'orders', expected: 1 }, 'queue'],
      [{ queue: 'stage' }, 'expected'],
      [{ queue: 'stage', expected: 0 }, 'expected'],
    ])('answers 400 to the redrive %j, naming %s', async (body, field) => {
      const fakes = consoleFakes({ deadLetters: { stage: [deadLetter()] } });
      const answer = await ask(fakes.deps, 'POST', ['failures', 'redrive'], { body });
      expect(answer).toMatchObject({ status: 400, body: { field } });
      expect(fakes.deadLetters.calls.redrive).toEqual([]);
    });

    it('previews a redrive with the count; answers 400 naming the queue when it is not stage or report', async () => {
      const fakes = consoleFakes({ deadLetters: { report: [deadLetter()] } });
      const preview = await ask(fakes.deps, 'GET', ['failures', 'redrive'], { query: { queue: 'report' } });
      expect(preview).toMatchObject({ status: 200, body: { queue: 'report', count: 1 } });
      for (const query of [{ queue: 'dlq' }, {}] as Record<string, string>[])
        expect(await ask(fakes.deps, 'GET', ['failures', 'redrive'], { query })).toMatchObject({
          status: 400,
          body: { field: 'queue' },
        });
    });

    it('retries one message (audited), and answers 404 when it is not in the queue', async () => {
      const fakes = consoleFakes({ deadLetters: { stage: [deadLetter({ messageId: 'm-9' })] } });
      const missing = await ask(fakes.deps, 'POST', ['failures', 'retry'], {
        body: { queue: 'stage', messageId: 'gone' },
      });
      expect(missing.status).toBe(404);
      expect(operatorsAudit(fakes.activity.entries)).toEqual([]);
      const retried = await ask(fakes.deps, 'POST', ['failures', 'retry'], {
        body: { queue: 'stage', messageId: 'm-9' },
      });
      expect(retried).toEqual({ status: 200, body: { queue: 'stage', messageId: 'm-9', retried: true } });
      expect(fakes.deadLetters.calls.retry).toEqual([
        ['stage', 'gone'],
        ['stage', 'm-9'],
      ]);
      expect(operatorsAudit(fakes.activity.entries)).toEqual([`${OPERATOR} retried message m-9 of the stage DLQ`]);
    });
  });

  describe("a customer's connect link", () => {
    const connectLink = (deps: ConsoleDependencies, body?: unknown) =>
      ask(deps, 'POST', ['connections', 'acme-greenhouse', 'connect-link'], { body });

    it('answers 400 naming interviewApiKey when the secret has no interview key and none is given', async () => {
      const fakes = consoleFakes({ secrets: { 'connector/acme-greenhouse': { atsClientId: 'kept' } } });
      await fakes.seed();
      const answer = await connectLink(fakes.deps, {});
      expect(answer).toMatchObject({ status: 400, body: { field: 'interviewApiKey' } });
      expect(fakes.secrets.calls.writes).toBe(0);
      expect(fakes.activity.links.size).toBe(0);
    });

    it('answers a token once; only its hash is stored, with a link valid for 7 days', async () => {
      const fakes = consoleFakes({ secrets: { 'connector/acme-greenhouse': { atsClientId: 'kept' } } });
      await fakes.seed();
      const answer = await connectLink(fakes.deps, { interviewApiKey: 'iv-key-1' });

      expect(answer.status).toBe(201);
      const token = answer.body.token as string;
      expect(token.length).toBeGreaterThanOrEqual(32);
      expect(answer.body.path).toBe(`#/connect/${token}`);
      expect([...fakes.activity.links.keys()]).toEqual([linkHash(token)]);
      const validUntil = NOW + CONNECT_LINK_DAYS * DAY_MS;
      expect(fakes.activity.links.get(linkHash(token))).toEqual({
        connectionId: 'acme-greenhouse',
        createdBy: OPERATOR,
        createdAt: NOW,
        validUntil,
        // The connection's version and when it was made: a connection deleted and made again under its id is not
        // the link's.
        connectionVersion: 1,
        connectionCreatedAt: (await fakes.deps.admin.store.read('acme-greenhouse'))?.createdAt,
      });
      expect(fakes.activity.links.get(linkHash(token))?.connectionCreatedAt).toEqual(expect.any(Number));
      expect(validUntil - NOW).toBe(7 * DAY_MS);
      expect(answer.body.expiresAt).toBe(validUntil);
      expect(JSON.stringify(fakes.activity.entries)).not.toContain(token);
      // The audit names what went into the secret, never a value.
      expect(operatorsAudit(fakes.activity.entries)).toEqual([
        `acme-greenhouse: connect link made by ${OPERATOR}, with interviewApiKey and interviewWebhookToken saved in ` +
          'connector/acme-greenhouse',
      ]);
      const secret = fakes.secrets.values.get('connector/acme-greenhouse') as Record<string, unknown>;
      expect(JSON.stringify(fakes.activity.entries)).not.toContain(secret.interviewWebhookToken as string);
      expect(secret).toMatchObject({ atsClientId: 'kept', interviewApiKey: 'iv-key-1' });
      expect(secret.interviewWebhookToken).toMatch(/^[0-9a-f]{48}$/);
      expect(JSON.stringify(answer.body)).not.toContain('iv-key-1');
    });

    it("keeps the secret's interview key and webhook token when it has them; two links have two tokens", async () => {
      const kept = { interviewApiKey: 'iv-key-0', interviewWebhookToken: 'token-kept-0123456789' };
      const fakes = consoleFakes({ secrets: { 'connector/acme-greenhouse': { ...kept } } });
      await fakes.seed();
      const first = await connectLink(fakes.deps);
      const second = await connectLink(fakes.deps, {});
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(first.body.token).not.toBe(second.body.token);
      expect(fakes.secrets.values.get('connector/acme-greenhouse')).toEqual(kept);
      // One live link a connection: the second spends the first, and says so.
      expect([first.body.revoked, second.body.revoked]).toEqual([false, true]);
      const now = (fakes.deps.now ?? Date.now)();
      expect(await fakes.activity.link(linkHash(first.body.token as string), now)).toBeUndefined();
      expect(await fakes.activity.link(linkHash(second.body.token as string), now)).toBeDefined();
      expect(operatorsAudit(fakes.activity.entries).at(-1)).toContain('the one before it no longer works');
    });

    it('answers 404 for a connection that does not exist, before touching its secret', async () => {
      const fakes = consoleFakes();
      expect((await connectLink(fakes.deps, { interviewApiKey: 'k' })).status).toBe(404);
      expect(fakes.secrets.calls).toEqual({ reads: 0, writes: 0 });
    });
  });

  describe('the stage picker', () => {
    it("lists the ATS's jobs and the stages of the first job unless one is asked for", async () => {
      const asked: (string | undefined)[] = [];
      const fakes = consoleFakes({
        stageSource: {
          listJobs: async () => [
            { id: '3301', name: 'Engineer' },
            { id: '3302', name: 'Designer' },
          ],
          listStages: async (job) => {
            asked.push(job);
            return [{ id: `s-${job}`, name: 'AI Interview' }];
          },
        },
      });
      await fakes.seed();
      const first = await ask(fakes.deps, 'GET', ['connections', 'acme-greenhouse', 'stages']);
      expect(first.body).toMatchObject({ job: '3301', stages: [{ id: 's-3301' }] });
      const chosen = await ask(fakes.deps, 'GET', ['connections', 'acme-greenhouse', 'stages'], {
        query: { job: '3302' },
      });
      expect(chosen.body).toMatchObject({ job: '3302', stages: [{ id: 's-3302' }] });
      expect(asked).toEqual(['3301', '3302']);
    });

    it('answers 502 naming the ATS when it refuses', async () => {
      const fakes = consoleFakes({
        stageSource: {
          listJobs: async () => {
            throw new Error('401 Unauthorized');
          },
          listStages: async () => [],
        },
      });
      await fakes.seed();
      const answer = await ask(fakes.deps, 'GET', ['connections', 'acme-greenhouse', 'stages']);
      expect(answer).toEqual({ status: 502, body: { error: 'greenhouse: 401 Unauthorized' } });
    });
  });

  describe('routes and errors', () => {
    it.each([
      ['GET', ['nothing']],
      ['POST', ['overview']],
      ['GET', ['candidates', 'acme-greenhouse']],
      ['GET', ['candidates', 'acme-greenhouse', '4401', 'more']],
      ['PUT', ['failures', 'redrive']],
      ['GET', ['failures', 'elsewhere']],
      ['GET', []],
    ])('answers 404 to %s %j', async (method, path) => {
      const fakes = consoleFakes();
      expect((await ask(fakes.deps, method, path)).status).toBe(404);
    });

    it('passes a change on to the admin API, and lets its version conflict through (409 there)', async () => {
      const fakes = consoleFakes();
      await fakes.seed();
      const patched = await ask(fakes.deps, 'PATCH', ['connections', 'acme-greenhouse'], {
        body: { patch: { webhookFreshnessMinutes: 15 }, version: 1 },
      });
      expect(patched).toMatchObject({ status: 200, body: { version: 2 } });
      expect(fakes.store.audits.at(-1)).toMatchObject({ action: 'patch', principal: OPERATOR });
      const stale = ask(fakes.deps, 'PATCH', ['connections', 'acme-greenhouse'], {
        body: { patch: { webhookFreshnessMinutes: 20 }, version: 1 },
      });
      await expect(stale).rejects.toBeInstanceOf(VersionConflictError);
    });

    it('answers 502 with the message when a store fails', async () => {
      const fakes = consoleFakes();
      const deps = {
        ...fakes.deps,
        admin: { ...fakes.deps.admin, store: { ...fakes.store, page: () => Promise.reject(new Error('throttled')) } },
      };
      expect(await ask(deps, 'GET', ['overview'])).toEqual({ status: 502, body: { error: 'throttled' } });
    });
  });
});
