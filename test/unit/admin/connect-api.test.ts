import { describe, expect, it, vi } from 'vitest';
import { type ConnectDependencies, handleConnectRequest } from '../../../shared/admin/connect-api';
import { linkHash } from '../../../shared/admin/console-api';
import { ATS_ERROR_CODES, AtsError } from '../../../shared/ats/errors';
import type { Connection, StoredConnection } from '../../../shared/config';
import type { ConnectLink } from '../../../shared/mapping/activity.records';
import { VersionConflictError } from '../../../shared/mapping/connections.records';
import { connectionDocument, workableFields } from '../../helpers/connections';
import { consoleFakes, operatorsAudit } from '../../helpers/console';
import { NOW } from '../../helpers/pipeline-records';

const API_URL = 'https://connector.example.com/';
/** The customer's ATS refusing, as an adapter throws it. */
const refused = (message: string, status = 401) =>
  new AtsError(status === 429 ? ATS_ERROR_CODES.rateLimited : ATS_ERROR_CODES.unauthorized, message, { status });
const WEBHOOK_KEY = 'greenhouse-webhook-key-0123456789';
const ashbyFields = {
  id: 'acme-ashby',
  ats: 'ashby',
  atsBaseUrl: 'https://api.ashbyhq.com',
  secretRef: 'connector/acme-ashby',
};
const komboFields = {
  id: 'acme-personio',
  ats: 'kombo',
  atsBaseUrl: 'https://api.kombo.dev/v1',
  atsIntegrationId: 'personio:acme-unified',
  secretRef: 'connector/acme-personio',
};
const deepDive = {
  id: 'deep-dive',
  stage: { name: 'Tech Screen' },
  interview: { questions: [{ question: 'Walk us through a design.', time: 3, type: 'audio' }] },
};
/** The document's interview and a second one, on another stage. */
const twoTriggers = () => [
  ...((connectionDocument().connections[0]?.triggers ?? []) as { id: string; stage: unknown }[]),
  deepDive,
];

/** A connect page's world: one connection (greenhouse unless told), its secret, and a live link to it. */
async function connectWorld(
  options: {
    connection?: Record<string, unknown>;
    secret?: Record<string, unknown>;
    probe?: () => Promise<string>;
  } = {},
) {
  const document = { ...connectionDocument().connections[0], ...options.connection } as {
    id: string;
    secretRef: string;
  };
  const fakes = consoleFakes({ secrets: { [document.secretRef]: { interviewApiKey: 'iv-key', ...options.secret } } });
  await fakes.seed(options.connection);
  const probed: Connection[] = [];
  const deps: ConnectDependencies = {
    ...fakes.deps,
    apiUrl: API_URL,
    probe: async (connection) => {
      probed.push(connection);
      return (options.probe ?? (async () => 'read 3 jobs'))();
    },
    registerWebhooks: async () => [{ status: 'pass', what: 'webhook registered' }],
  };
  const token = 'customer-token-0123456789abcdef';
  fakes.activity.links.set(linkHash(token), {
    connectionId: document.id,
    createdBy: 'cognito:ops-kim',
    createdAt: NOW - 86_400_000,
    validUntil: NOW + 86_400_000,
  });
  const call = (method: string, path: string[], body?: unknown, query: Record<string, string> = {}) =>
    handleConnectRequest({ method, token, path, query, body }, deps);
  const secret = () => fakes.secrets.values.get(document.secretRef) as Record<string, unknown>;
  return { ...fakes, deps, token, call, probed, secret, document };
}

describe('Use case: a customer connects their ATS through a one-time link', () => {
  describe('the link', () => {
    it.each([
      ['unknown', (world: { token: string }) => `${world.token}-other`, {}],
      ['expired', (world: { token: string }) => world.token, { validUntil: NOW }],
      ['used', (world: { token: string }) => world.token, { usedAt: NOW - 1 }],
    ])('answers 404 to an %s link and reads nothing else', async (_what, tokenOf, change) => {
      const world = await connectWorld();
      const hash = linkHash(world.token);
      world.activity.links.set(hash, { ...(world.activity.links.get(hash) as ConnectLink), ...change });
      const read = vi.spyOn(world.store, 'read');
      const probe = vi.spyOn(world.deps, 'probe');
      for (const [method, path, body] of [
        ['GET', [], undefined],
        ['POST', ['credentials'], { atsClientId: 'id', atsClientSecret: 'secret', atsWebhookSecret: WEBHOOK_KEY }],
        ['POST', ['trigger'], { triggerId: 'ai-screen', stageName: 'Phone Screen' }],
        ['POST', ['finish'], {}],
      ] as const) {
        const answer = await handleConnectRequest(
          { method, token: tokenOf(world), path: [...path], query: {}, body },
          world.deps,
        );
        expect(answer.status).toBe(404);
      }
      expect(read).not.toHaveBeenCalled();
      expect(probe).not.toHaveBeenCalled();
      expect(world.secrets.calls).toEqual({ reads: 0, writes: 0 });
      expect(world.store.audits).toHaveLength(1);
    });

    it('answers 404 when the connection was deleted since the link was made', async () => {
      const world = await connectWorld();
      const current = await world.store.read('acme-greenhouse');
      if (current) await world.store.remove(current, { principal: 'ops', action: 'delete', expectedVersion: 1 });
      expect((await world.call('GET', [])).status).toBe(404);
    });

    it('answers 404 to a link of a connection deleted and made again under the same id since', async () => {
      const world = await connectWorld();
      const hash = linkHash(world.token);
      // Made when the connection was at version 3; the one there now was made again, at version 1.
      world.activity.links.set(hash, { ...(world.activity.links.get(hash) as ConnectLink), connectionVersion: 3 });
      expect((await world.store.read('acme-greenhouse'))?.version).toBe(1);
      expect((await world.call('GET', [])).status).toBe(404);
      expect(world.secrets.calls.writes).toBe(0);
      // The same link at the version it was made at works.
      world.activity.links.set(hash, { ...(world.activity.links.get(hash) as ConnectLink), connectionVersion: 1 });
      expect((await world.call('GET', [])).status).toBe(200);
    });

    it('answers 404 to a link of a connection deleted and made again at the version the link was made at', async () => {
      const world = await connectWorld();
      const hash = linkHash(world.token);
      const store = world.deps.admin.store;
      const made = (await store.read('acme-greenhouse')) as StoredConnection;
      const link = { ...(world.activity.links.get(hash) as ConnectLink), connectionVersion: 1 };
      world.activity.links.set(hash, { ...link, connectionCreatedAt: made.createdAt });
      expect((await world.call('GET', [])).status).toBe(200);
      // Deleted, and made again under its id: version 1 again, made at another time.
      await store.remove(made, { principal: 'ops', action: 'delete', expectedVersion: 1 });
      const changed = ['*'];
      await store.write(
        made.id,
        { document: made.document, enabled: true, changed },
        { principal: 'ops', action: 'create' },
      );
      expect((await store.read('acme-greenhouse'))?.version).toBe(1);
      expect((await world.call('GET', [])).status).toBe(404);
    });

    const saved = { atsClientId: 'gh-client', atsClientSecret: 'gh-secret' };

    it('is spent by finishing: a second finish, and any other call after it, answers 404', async () => {
      const world = await connectWorld({ secret: saved });
      expect(await world.call('POST', ['finish'])).toEqual({
        status: 200,
        body: { connectionId: 'acme-greenhouse', finished: true },
      });
      expect(world.activity.links.get(linkHash(world.token))?.usedAt).toBe(NOW);
      expect((await world.call('POST', ['finish'])).status).toBe(404);
      expect((await world.call('GET', [])).status).toBe(404);
    });

    it('keeps the link when the ATS refuses the saved credentials: 409 naming why; the link still works', async () => {
      const world = await connectWorld({
        secret: saved,
        probe: async () => {
          throw refused('GET /v3/applications: 401 invalid_client');
        },
      });
      const answer = await world.call('POST', ['finish']);
      expect(answer.status).toBe(409);
      expect(answer.body.error).toContain('greenhouse: GET /v3/applications: 401 invalid_client');
      expect(world.activity.links.get(linkHash(world.token))?.usedAt).toBeUndefined();
      expect((await world.call('GET', [])).status).toBe(200);
    });

    it('keeps the link when no credentials were saved yet, asking for them, without trying the ATS', async () => {
      const world = await connectWorld();
      const refused = await world.call('POST', ['finish']);
      expect(refused).toEqual({
        status: 409,
        body: { error: 'Save your ATS credentials in step 1 first, then finish' },
      });
      expect(world.probed).toEqual([]);
      expect((await world.call('GET', [])).status).toBe(200);
    });

    it('answers 404 to a finish that another tab made first', async () => {
      const world = await connectWorld({ secret: saved });
      vi.spyOn(world.activity, 'useLink').mockResolvedValueOnce(false);
      expect((await world.call('POST', ['finish'])).status).toBe(404);
    });

    it.each([
      ['GET', ['credentials']],
      ['POST', ['credentials', 'more']],
      ['DELETE', []],
      ['GET', ['elsewhere']],
    ])('answers 404 to %s %j', async (method, path) => {
      const world = await connectWorld();
      expect((await world.call(method, path)).status).toBe(404);
    });
  });

  describe('the summary', () => {
    it("gives Greenhouse's by-hand steps with the webhook URL, and no placeholder or secret's name", async () => {
      const world = await connectWorld({ connection: { triggers: twoTriggers() } });
      const answer = await world.call('GET', []);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        connectionId: 'acme-greenhouse',
        ats: 'greenhouse',
        expiresAt: NOW + 86_400_000,
        credentials: ['atsClientId', 'atsClientSecret'],
        triggers: [
          { id: 'ai-screen', stage: { name: 'AI Interview' }, questions: 1 },
          { id: 'deep-dive', stage: { name: 'Tech Screen' }, questions: 1 },
        ],
        webhook: { url: 'https://connector.example.com/webhooks/ats/acme-greenhouse', registration: 'by-hand' },
      });
      const steps = (answer.body.webhook as { steps: string[] }).steps;
      expect(steps.join('\n')).toContain('https://connector.example.com/webhooks/ats/acme-greenhouse');
      expect(steps.join('\n')).not.toMatch(/\{\w+\}/);
      expect(steps.join('\n')).not.toContain('connector/acme-greenhouse');
      // Each step a whole sentence (a numbered list shows each as an item).
      for (const step of steps) expect(step).toMatch(/^[A-Z].*\.$/);
      expect(answer.body.webhook).not.toHaveProperty('secretSaved');
    });

    it('says a Greenhouse key is saved already when the page is opened again, and never shows it', async () => {
      const world = await connectWorld({ secret: { atsWebhookSecret: WEBHOOK_KEY } });
      const answer = await world.call('GET', []);
      expect(answer.body.webhook).toMatchObject({ registration: 'by-hand', secretSaved: true });
      expect(JSON.stringify(answer.body)).not.toContain(WEBHOOK_KEY);
    });

    it.each([
      ['ashby', ashbyFields, ['atsApiKey']],
      ['workable', workableFields(), ['atsApiKey']],
    ])('registers %s webhooks through its API', async (ats, connection, credentials) => {
      const world = await connectWorld({ connection });
      const answer = await world.call('GET', []);
      expect(answer.body).toMatchObject({ ats, credentials, webhook: { registration: 'api' } });
      expect((answer.body.webhook as { steps: string[] }).steps.join(' ')).toContain(ats);
    });
  });

  describe('an ATS behind Kombo', () => {
    it("offers nothing to register, and never replaces the Kombo account's signing secret", async () => {
      const secret = { atsApiKey: 'kombo-key-4242', atsWebhookSecret: 'kombo-account-secret' };
      const world = await connectWorld({ connection: komboFields });
      const answer = await world.call('GET', []);
      expect(answer.body).toMatchObject({ ats: 'kombo', credentials: [], webhook: { registration: 'none' } });
      expect((answer.body.webhook as { steps: string[] }).steps.join(' ')).toContain('through Kombo');
      // Without the account's secret yet (the operator puts it there), none is made up either.
      await world.call('POST', ['credentials'], {});
      expect(world.secret().atsWebhookSecret).toBeUndefined();
      world.secrets.values.set('connector/acme-personio', { ...world.secret(), ...secret });
      await world.call('POST', ['credentials'], {});
      expect(world.secret()).toMatchObject(secret);
    });
  });

  describe('the credentials', () => {
    it.each([
      ['ashby', {}, 'atsApiKey'],
      ['ashby', { atsApiKey: '   ' }, 'atsApiKey'],
      ['greenhouse', { atsClientSecret: 's', atsWebhookSecret: WEBHOOK_KEY }, 'atsClientId'],
      ['greenhouse', { atsClientId: 'i', atsWebhookSecret: WEBHOOK_KEY }, 'atsClientSecret'],
      ['greenhouse', { atsClientId: 'i', atsClientSecret: 's' }, 'atsWebhookSecret'],
      ['greenhouse', { atsClientId: 'i', atsClientSecret: 's', atsWebhookSecret: 'x'.repeat(23) }, 'atsWebhookSecret'],
      // Only Greenhouse's webhook key is the customer's: the others' signing secrets are never replaced from here.
      ['ashby', { atsApiKey: 'k', atsWebhookSecret: WEBHOOK_KEY }, 'atsWebhookSecret'],
      ['kombo', { atsWebhookSecret: WEBHOOK_KEY }, 'atsWebhookSecret'],
    ])('answers 400 to %s credentials %j, naming %s, and saves nothing', async (ats, body, field) => {
      const fields: Record<string, Record<string, unknown>> = { ashby: ashbyFields, kombo: komboFields };
      const world = await connectWorld({ connection: fields[ats] ?? {} });
      const answer = await world.call('POST', ['credentials'], body);
      expect(answer).toMatchObject({ status: 400, body: { field } });
      expect(answer.body.error).toContain(field);
      expect(world.secrets.calls.writes).toBe(0);
      expect(world.probed).toEqual([]);
    });

    it('saves them into the secret beside its other fields, tries them, and never answers them back', async () => {
      const world = await connectWorld({ secret: { atsClientId: 'old-client-id', interviewWebhookToken: 'tok-0' } });
      const given = {
        atsClientId: 'gh-client-id-5150',
        atsClientSecret: 'gh-client-secret-8675309',
        atsWebhookSecret: WEBHOOK_KEY,
      };
      const answer = await world.call('POST', ['credentials'], given);
      expect(answer).toEqual({ status: 200, body: { saved: true, works: true, what: 'read 3 jobs' } });
      expect(world.secret()).toEqual({ interviewApiKey: 'iv-key', interviewWebhookToken: 'tok-0', ...given });
      expect(world.probed.map((c) => c.id)).toEqual(['acme-greenhouse']);
      const json = JSON.stringify(answer);
      for (const value of [...Object.values(given), 'iv-key', 'tok-0']) expect(json).not.toContain(value);
    });

    it.each([
      ['ashby', ashbyFields],
      ['workable', workableFields()],
    ])('makes %s a webhook signing secret when its secret has none, and keeps one it has', async (_ats, connection) => {
      const world = await connectWorld({ connection });
      const answer = await world.call('POST', ['credentials'], { atsApiKey: 'api-key-42424242' });
      const made = world.secret().atsWebhookSecret;
      expect(made).toMatch(/^[0-9a-f]{64}$/);
      expect(world.secret().atsApiKey).toBe('api-key-42424242');
      expect(JSON.stringify(answer)).not.toContain(made as string);
      expect(JSON.stringify(answer)).not.toContain('api-key-42424242');
      await world.call('POST', ['credentials'], { atsApiKey: 'api-key-2' });
      expect(world.secret()).toMatchObject({ atsApiKey: 'api-key-2', atsWebhookSecret: made });
    });

    it('keeps credentials that work when new ones are refused, and says so; none that work: the new ones', async () => {
      const keys: string[] = [];
      let world: Awaited<ReturnType<typeof connectWorld>> | undefined;
      world = await connectWorld({
        connection: ashbyFields,
        secret: { atsApiKey: 'good-key-0001' },
        probe: async () => {
          const key = String(world?.secret().atsApiKey);
          keys.push(key);
          if (!key.startsWith('good')) throw refused('401 invalid API key');
          return 'read 3 jobs';
        },
      });
      const typo = await world.call('POST', ['credentials'], { atsApiKey: 'goof-key-0001' });
      expect(typo.body).toEqual({
        saved: false,
        works: false,
        error: 'ashby: 401 invalid API key; the credentials saved before are kept: they work',
      });
      expect(world.secret().atsApiKey).toBe('good-key-0001');
      expect(keys).toEqual(['goof-key-0001', 'good-key-0001']);
      // Saved ones that no longer work either: the latest typed are kept, to be fixed.
      world.secrets.values.set('connector/acme-ashby', { ...world.secret(), atsApiKey: 'stale-key' });
      const again = await world.call('POST', ['credentials'], { atsApiKey: 'typo-key-2' });
      expect(again.body).toMatchObject({ saved: true, works: false });
      expect(world.secret().atsApiKey).toBe('typo-key-2');
    });

    it('keeps a key rotated while the credentials were tried: the save and its undo write only theirs', async () => {
      let world: Awaited<ReturnType<typeof connectWorld>> | undefined;
      let rotated = false;
      world = await connectWorld({
        connection: ashbyFields,
        secret: { atsApiKey: 'good-key-0001', interviewWebhookToken: 'token-before' },
        probe: async () => {
          const secret = world?.secret() ?? {};
          // An operator rotates the interview webhook's token while the ATS is first asked (rotate-keys), once.
          if (!rotated)
            world?.secrets.values.set('connector/acme-ashby', { ...secret, interviewWebhookToken: 'token-rotated' });
          rotated = true;
          if (!String(secret.atsApiKey).startsWith('good')) throw refused('401 invalid API key');
          return 'read 3 jobs';
        },
      });
      const typo = await world.call('POST', ['credentials'], { atsApiKey: 'goof-key-0001' });
      expect(typo.body).toMatchObject({ saved: false, works: false });
      expect(world.secret()).toMatchObject({ atsApiKey: 'good-key-0001', interviewWebhookToken: 'token-rotated' });
    });

    it("keeps Greenhouse's saved webhook key when credentials are saved again without a new one", async () => {
      const world = await connectWorld({ secret: { atsWebhookSecret: WEBHOOK_KEY } });
      const answer = await world.call('POST', ['credentials'], { atsClientId: 'id-2', atsClientSecret: 'secret-2' });
      expect(answer).toMatchObject({ status: 200, body: { saved: true, works: true } });
      expect(world.secret()).toMatchObject({ atsClientId: 'id-2', atsWebhookSecret: WEBHOOK_KEY });
    });

    it('answers saved but not working (200) when the ATS refuses them, naming the ATS', async () => {
      const world = await connectWorld({
        connection: ashbyFields,
        probe: () => Promise.reject(refused('401 invalid API key')),
      });
      const answer = await world.call('POST', ['credentials'], { atsApiKey: 'wrong-key-31337' });
      expect(answer).toEqual({
        status: 200,
        body: { saved: true, works: false, error: 'ashby: 401 invalid API key' },
      });
      expect(world.secret().atsApiKey).toBe('wrong-key-31337');
    });
  });

  describe('the trigger', () => {
    it("sets the chosen interview's stage at the version read, as the link's principal", async () => {
      const world = await connectWorld({ connection: { triggers: twoTriggers() } });
      const write = vi.spyOn(world.store, 'write');
      const answer = await world.call('POST', ['trigger'], { triggerId: 'deep-dive', stageName: ' Phone Screen ' });
      expect(answer).toEqual({
        status: 200,
        body: { connectionId: 'acme-greenhouse', version: 2, triggerId: 'deep-dive', stageName: 'Phone Screen' },
      });
      expect(write.mock.calls[0]?.[2]).toEqual({
        principal: 'connect-link:acme-greenhouse',
        action: 'patch',
        expectedVersion: 1,
      });
      const stored = (await world.store.read('acme-greenhouse'))?.document as {
        triggers: { id: string; stage: unknown }[];
      };
      expect(stored.triggers.map((t) => [t.id, t.stage])).toEqual([
        ['ai-screen', { name: 'AI Interview' }],
        ['deep-dive', { name: 'Phone Screen' }],
      ]);
      expect(world.store.audits.at(-1)).toMatchObject({
        changed: ['triggers'],
        principal: 'connect-link:acme-greenhouse',
      });
    });

    it('lets a version conflict through (409) when an operator changed the connection meanwhile', async () => {
      const world = await connectWorld();
      const read = world.store.read.bind(world.store);
      vi.spyOn(world.store, 'read').mockImplementationOnce(async (id, consistent) => {
        const seen = await read(id, consistent);
        const change = { principal: 'cognito:ops-kim', action: 'disable' as const, expectedVersion: 1 };
        await world.store.write(id, { document: seen?.document, enabled: false, changed: ['enabled'] }, change, seen);
        return seen;
      });
      const answer = world.call('POST', ['trigger'], { triggerId: 'ai-screen', stageName: 'Phone Screen' });
      await expect(answer).rejects.toBeInstanceOf(VersionConflictError);
      await expect(answer).rejects.toMatchObject({ current: 2 });
      expect((await world.store.read('acme-greenhouse'))?.enabled).toBe(false);
    });

    it.each([
      [{ triggerId: 'no-such-interview', stageName: 'Phone Screen' }, 'triggerId'],
      [{ triggerId: 'ai-screen', stageName: '  ' }, 'stageName'],
      [{ stageName: 'Phone Screen' }, 'triggerId'],
    ])('answers 400 to %j naming %s, and writes nothing', async (body, field) => {
      const world = await connectWorld();
      const answer = await world.call('POST', ['trigger'], body);
      expect(answer).toMatchObject({ status: 400, body: { field } });
      expect(world.store.audits).toHaveLength(1);
    });
  });

  describe('the rest of the page', () => {
    it("registers the webhooks and runs the doctor, keeping its result under the link's principal", async () => {
      const world = await connectWorld();
      expect(await world.call('POST', ['webhooks'])).toEqual({
        status: 200,
        body: { lines: [{ status: 'pass', what: 'webhook registered' }] },
      });
      const doctor = await world.call('POST', ['doctor']);
      expect(doctor).toMatchObject({ status: 200, body: { principal: 'connect-link:acme-greenhouse' } });
      expect(world.activity.doctorResults.get('acme-greenhouse')?.principal).toBe('connect-link:acme-greenhouse');
    });

    it("shows the customer their own checks whole, and the provider's side as one line without its fixes", async () => {
      const world = await connectWorld();
      world.deps.doctor = async () => [
        { status: 'pass', what: 'greenhouse credentials work' },
        { status: 'fail', what: 'no webhook', fix: 'register it' },
        { status: 'fail', what: 'no stage webhook', fix: 'run npm run doctor -- --connection c --register-webhooks' },
        { status: 'fail', what: 'interview-service webhook', fix: 'interviewWebhookToken of secret s', provider: true },
        { status: 'info', what: 'SES sender not checked on one machine (run with --aws)', provider: true },
      ];
      const doctor = await world.call('POST', ['doctor']);
      expect(doctor.body.lines).toEqual([
        { status: 'pass', what: 'greenhouse credentials work' },
        { status: 'fail', what: 'no webhook', fix: 'register it' },
        // The operator's command is the page's button for the customer.
        { status: 'fail', what: 'no stage webhook', fix: 'press "Register the webhooks" in step 3' },
        { status: 'fail', what: "1 of your provider's checks failed: they see which in their console" },
      ]);
      // The operator's console keeps every line.
      expect(world.activity.doctorResults.get('acme-greenhouse')?.lines).toHaveLength(5);
    });

    it("names no secret of the provider's in the lines the customer reads: registering, or the checks", async () => {
      const world = await connectWorld();
      const ref = world.document.secretRef;
      const lines = [
        { status: 'pass' as const, what: `webhook registered; its signing secret recorded in ${ref}` },
        {
          status: 'fail' as const,
          what: `secret ${ref} cannot be read`,
          fix: 'AccessDenied for role/ops (Secrets Manager)',
        },
      ];
      const deps = { ...world.deps, registerWebhooks: async () => lines, doctor: async () => lines };
      const ask = (path: string[]) =>
        handleConnectRequest({ method: 'POST', token: world.token, path, query: {}, body: undefined }, deps);
      for (const answer of [await ask(['webhooks']), await ask(['doctor'])]) {
        expect(answer.status).toBe(200);
        const text = JSON.stringify(answer.body.lines);
        expect(text).not.toContain(ref);
        expect(text).not.toMatch(/AccessDenied|Secrets Manager|role\/ops/);
        expect(text).toContain("your provider's secret");
      }
    });

    it("answers 502 with the ATS's message when registering fails", async () => {
      const world = await connectWorld();
      const deps = { ...world.deps, registerWebhooks: () => Promise.reject(refused('429 slow down', 429)) };
      const answer = await handleConnectRequest(
        { method: 'POST', token: world.token, path: ['webhooks'], query: {}, body: undefined },
        deps,
      );
      expect(answer).toEqual({ status: 502, body: { error: 'greenhouse: 429 slow down' } });
    });

    it('tells the customer their provider sees why, not its detail, which the operator reads', async () => {
      const world = await connectWorld({ connection: ashbyFields });
      const unreadable = new Error('secret connector/acme-ashby cannot be read: AccessDenied (role/ops)');
      const deps = {
        ...world.deps,
        stages: () => Promise.reject(unreadable),
        probe: () => Promise.reject(unreadable),
        registerWebhooks: () => Promise.reject(unreadable),
      };
      const ask = (method: string, path: string[], body?: unknown) =>
        handleConnectRequest({ method, token: world.token, path, query: {}, body }, deps);
      const answers = [
        await ask('GET', ['stages']),
        await ask('POST', ['webhooks']),
        await ask('POST', ['credentials'], { atsApiKey: 'key-0001' }),
        await ask('POST', ['finish']),
      ];
      expect(answers.map((a) => a.status)).toEqual([502, 502, 200, 409]);
      for (const answer of answers) {
        expect(JSON.stringify(answer.body)).toContain("on your provider's side");
        expect(JSON.stringify(answer.body)).not.toMatch(/connector\/acme-ashby|AccessDenied/);
      }
      const audit = operatorsAudit(world.activity.entries);
      for (const what of ['reading the stages', 'registering webhooks', 'trying the credentials', 'finishing'])
        expect(audit).toContain(`acme-ashby: connect link: ${what} failed: ${unreadable.message}`);
      // Anything else that fails on the way (the store, a bug) is the provider's side too.
      const broken = { ...world.deps, registerWebhooks: undefined as never };
      const failed = await handleConnectRequest(
        { method: 'POST', token: world.token, path: ['webhooks'], query: {}, body: undefined },
        { ...broken, activity: { ...world.deps.activity, addTimeline: () => Promise.reject(new Error('throttled')) } },
      );
      expect(failed).toMatchObject({ status: 502, body: { error: expect.stringContaining("provider's side") } });
    });

    it("puts each step in the operators' audit, naming fields and outcomes, never a value", async () => {
      const world = await connectWorld({ connection: ashbyFields });
      await world.call('POST', ['credentials'], { atsApiKey: 'key-0001-secret' });
      await world.call('POST', ['webhooks']);
      await world.call('POST', ['finish']);
      expect(operatorsAudit(world.activity.entries)).toEqual([
        'acme-ashby: connect link: saved atsApiKey, atsWebhookSecret; the ATS takes them',
        'acme-ashby: connect link: registered the webhooks (0 failed)',
        'acme-ashby: connect link: finished, and spent',
      ]);
      expect(JSON.stringify(world.activity.entries)).not.toContain('key-0001-secret');
      expect(JSON.stringify(world.activity.entries)).not.toContain(String(world.secret().atsWebhookSecret));
    });
  });
});
