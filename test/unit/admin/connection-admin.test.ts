import { describe, expect, it } from 'vitest';
import { type ConnectionAdminStore, handleAdminRequest, mergePatch } from '../../../shared/admin/connection-admin';
import { connectionDocument } from '../../helpers/connections';
import { memoryConnectionStore as memoryStore } from '../../helpers/console';

const document = () => connectionDocument().connections[0] as Record<string, unknown>;
const ask = (store: ConnectionAdminStore, method: string, path: string[], body?: unknown, query = {}) =>
  handleAdminRequest(
    { method, path, query, body, principal: 'arn:aws:iam::1:role/ops' },
    { store, secretsPrefix: 'connector/' },
  );

describe('Use case: the admin API on connections', () => {
  it('creates (201), refuses a replace without the version read (409), replaces at it, audits each', async () => {
    const store = memoryStore();
    expect((await ask(store, 'PUT', ['acme-greenhouse'], { connection: document() })).status).toBe(201);
    const again = await ask(store, 'PUT', ['acme-greenhouse'], { connection: document() });
    expect(again.status).toBe(409);
    const replaced = await ask(store, 'PUT', ['acme-greenhouse'], {
      connection: { ...document(), webhookFreshnessMinutes: 20 },
      version: 1,
    });
    expect(replaced).toMatchObject({ status: 200, body: { version: 2 } });
    expect(store.audits.map((a) => [a.action, a.changed, a.principal])).toEqual([
      ['create', ['*'], 'arn:aws:iam::1:role/ops'],
      ['replace', ['webhookFreshnessMinutes'], 'arn:aws:iam::1:role/ops'],
    ]);
  });

  it('answers 400 naming the field: the schema, the id in the path, the secrets prefix', async () => {
    const store = memoryStore();
    const bad = await ask(store, 'PUT', ['acme-greenhouse'], {
      connection: { ...document(), triggers: [{ id: 'x', stage: {} }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toMatch(/^connection\.triggers\.0/);
    const otherId = await ask(store, 'PUT', ['other'], { connection: document() });
    expect(otherId.body).toMatchObject({ field: 'connection.id' });
    const outside = await ask(store, 'PUT', ['acme-greenhouse'], { connection: { ...document(), secretRef: 'x/y' } });
    expect(outside.body).toMatchObject({ field: 'connection.secretRef' });
    const { writeBack, ...rest } = document();
    const typo = await ask(store, 'PUT', ['acme-greenhouse'], { connection: { ...rest, writeback: writeBack } });
    expect([typo.status, typo.body]).toEqual([
      400,
      expect.objectContaining({
        field: 'connection.writeback',
        error: 'connection.writeback: unknown field (did you mean writeBack?)',
      }),
    ]);
    expect(
      (await ask(store, 'PUT', ['acme-greenhouse'], { connection: document(), version: 'one' })).body,
    ).toMatchObject({
      field: 'version',
    });
    expect(await store.read('acme-greenhouse')).toBeUndefined();
  });

  it('patches by JSON merge patch at a version; disables and enables; deletes only with the version', async () => {
    const store = memoryStore();
    await ask(store, 'PUT', ['acme-greenhouse'], { connection: document() });
    const patched = await ask(store, 'PATCH', ['acme-greenhouse'], {
      patch: { webhookFreshnessMinutes: 15 },
      version: 1,
    });
    expect(patched.body).toMatchObject({ version: 2, connection: { webhookFreshnessMinutes: 15 } });
    // The same change again writes nothing (no version, no audit), and from a stale version is still refused.
    const audits = store.audits.length;
    const same = { patch: { webhookFreshnessMinutes: 15 } };
    expect((await ask(store, 'PATCH', ['acme-greenhouse'], { ...same, version: 2 })).body).toMatchObject({
      version: 2,
    });
    expect((await ask(store, 'PATCH', ['acme-greenhouse'], { ...same, version: 1 })).status).toBe(409);
    expect(store.audits).toHaveLength(audits);
    expect((await ask(store, 'POST', ['acme-greenhouse', 'disable'], {})).body).toMatchObject({ enabled: false });
    expect((await ask(store, 'POST', ['acme-greenhouse', 'enable'], { version: 3 })).body).toMatchObject({
      enabled: true,
      version: 4,
    });
    expect((await ask(store, 'DELETE', ['acme-greenhouse'])).status).toBe(400);
    expect((await ask(store, 'DELETE', ['acme-greenhouse'], undefined, { version: '4' })).status).toBe(200);
    expect((await ask(store, 'GET', ['acme-greenhouse'])).status).toBe(404);
  });

  it('refuses to replace at a version read of a connection deleted since: 409, never made again', async () => {
    const store = memoryStore();
    await ask(store, 'PUT', ['acme-greenhouse'], { connection: document() });
    expect((await ask(store, 'DELETE', ['acme-greenhouse'], undefined, { version: '1' })).status).toBe(200);
    const stale = await ask(store, 'PUT', ['acme-greenhouse'], { connection: document(), version: 1 });
    expect(stale).toMatchObject({ status: 409 });
    expect((await ask(store, 'GET', ['acme-greenhouse'])).status).toBe(404);
    // Without a version it is a creation, as asked.
    expect((await ask(store, 'PUT', ['acme-greenhouse'], { connection: document() })).status).toBe(201);
  });

  it('lists in pages of the limit asked (100 at most); 404 and 405 for what it does not serve', async () => {
    const store = memoryStore();
    for (const id of ['a-1', 'a-2', 'a-3']) await ask(store, 'PUT', [id], { connection: { ...document(), id } });
    const first = await ask(store, 'GET', [], undefined, { limit: '2' });
    expect(first.body.connections).toHaveLength(2);
    const second = await ask(store, 'GET', [], undefined, { limit: '2', cursor: first.body.cursor });
    expect((second.body.connections as { id: string }[]).map((c) => c.id)).toEqual(['a-3']);
    // A cursor no page gave is the caller's mistake, named (the table would refuse it as a key: a 500).
    for (const cursor of ['!', 'A', Buffer.from('a b').toString('base64url')])
      expect(await ask(store, 'GET', [], undefined, { cursor })).toMatchObject({
        status: 400,
        body: { field: 'cursor' },
      });
    expect((await ask(store, 'GET', ['a-1', 'nonsense'])).status).toBe(404);
    expect((await ask(store, 'GET', ['a b'])).status).toBe(404);
    expect((await ask(store, 'POST', [])).status).toBe(405);
  });

  it('rotates the keys the connector issues into the secret, answering their names only', async () => {
    const store = memoryStore();
    await ask(store, 'PUT', ['acme-greenhouse'], { connection: document() });
    const values = new Map<string, Record<string, unknown>>([
      ['connector/acme-greenhouse', { interviewWebhookToken: 'old-token-0123456789', atsApiKey: 'kept' }],
    ]);
    const secrets = {
      read: async (ref: string) => values.get(ref),
      write: async (ref: string, value: Record<string, unknown>) => void values.set(ref, value),
    };
    const answer = await handleAdminRequest(
      { method: 'POST', path: ['acme-greenhouse', 'rotate-keys'], query: {}, body: {}, principal: 'arn:ops' },
      { store, secrets },
    );
    expect(answer.status).toBe(200);
    const secret = values.get('connector/acme-greenhouse') as Record<string, string>;
    expect(secret.interviewWebhookToken).not.toBe('old-token-0123456789');
    expect(secret.atsApiKey).toBe('kept');
    expect(answer.body.rotated).toContain('interviewWebhookToken');
    for (const value of Object.values(secret)) expect(JSON.stringify(answer.body)).not.toContain(value);
    expect(store.audits.at(-1)).toMatchObject({ action: 'rotate-keys', principal: 'arn:ops' });
  });

  it('records a rotation on the version that stands when another change lands meanwhile: 200, not 409', async () => {
    const store = memoryStore();
    await ask(store, 'PUT', ['acme-greenhouse'], { connection: document() });
    const values = new Map<string, Record<string, unknown>>([['connector/acme-greenhouse', { atsApiKey: 'kept' }]]);
    const secrets = {
      read: async (ref: string) => values.get(ref),
      // Another operator's patch lands between the secret's write and the change log's.
      write: async (ref: string, value: Record<string, unknown>) => {
        values.set(ref, value);
        await ask(store, 'PATCH', ['acme-greenhouse'], { patch: { webhookFreshnessMinutes: 25 }, version: 1 });
      },
    };
    const answer = await handleAdminRequest(
      { method: 'POST', path: ['acme-greenhouse', 'rotate-keys'], query: {}, body: {}, principal: 'arn:ops' },
      { store, secrets },
    );
    expect(answer).toMatchObject({ status: 200, body: { version: 3, rotated: ['interviewWebhookToken'] } });
    expect(store.audits.map((a) => [a.action, a.version])).toEqual([
      ['create', 1],
      ['patch', 2],
      ['rotate-keys', 3],
    ]);
    expect((await store.read('acme-greenhouse'))?.document).toMatchObject({ webhookFreshnessMinutes: 25 });
  });

  it('answers 200 with a warning, never 409, when other changes win every try to record the rotation', async () => {
    const store = memoryStore();
    await ask(store, 'PUT', ['acme-greenhouse'], { connection: document() });
    const values = new Map<string, Record<string, unknown>>([['connector/acme-greenhouse', { atsApiKey: 'kept' }]]);
    const secrets = { read: async (ref: string) => values.get(ref), write: async () => undefined };
    // Another change lands before each of the rotation's writes to the change log.
    const write = store.write.bind(store);
    const racing: typeof store = Object.assign(Object.create(store), {
      write: async (...args: Parameters<typeof store.write>) => {
        const stood = (await store.read('acme-greenhouse')) as NonNullable<Awaited<ReturnType<typeof store.read>>>;
        const patch = { principal: 'arn:other', action: 'patch' as const, expectedVersion: stood.version };
        await write('acme-greenhouse', { document: stood.document, enabled: stood.enabled, changed: [] }, patch, stood);
        return write(...args);
      },
    });
    const answer = await handleAdminRequest(
      { method: 'POST', path: ['acme-greenhouse', 'rotate-keys'], query: {}, body: {}, principal: 'arn:ops' },
      { store: racing, secrets },
    );
    expect(answer).toMatchObject({ status: 200, body: { rotated: ['interviewWebhookToken'] } });
    expect(String(answer.body.warning)).toContain('the change log could not record it');
    expect(store.audits.filter((a) => a.action === 'rotate-keys')).toEqual([]);
    // Nor when the change log's table fails outright (throttled, unreachable): the keys are rotated.
    const down: typeof store = Object.assign(Object.create(store), {
      write: async () => {
        throw new Error('ProvisionedThroughputExceededException');
      },
    });
    const again = await handleAdminRequest(
      { method: 'POST', path: ['acme-greenhouse', 'rotate-keys'], query: {}, body: {}, principal: 'arn:ops' },
      { store: down, secrets },
    );
    expect(again).toMatchObject({ status: 200, body: { warning: expect.stringContaining('could not record it') } });
  });

  it.each(['__proto__', 'constructor'])(
    'never takes %s in a patch for the prototype: nothing is smuggled',
    async (key) => {
      // As JSON.parse makes it: an own key, which a plain assignment would take for the prototype.
      const patch = JSON.parse(`{"secretRef": null, "${key}": {"secretRef": "connector/elsewhere"}}`);
      const merged = mergePatch({ id: 'a', secretRef: 'connector/a' }, patch) as Record<string, unknown>;
      expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
      expect(merged.secretRef).toBeUndefined();
      expect(Object.keys(merged)).toEqual(['id', key]);
      // Through the API (whose body parse drops the key): a required field removed is refused, nothing stored.
      const store = memoryStore();
      await ask(store, 'PUT', ['acme-greenhouse'], { connection: document() });
      expect((await ask(store, 'PATCH', ['acme-greenhouse'], { patch, version: 1 })).body).toMatchObject({
        field: 'connection.secretRef',
      });
      expect(await store.read('acme-greenhouse')).toMatchObject({ version: 1 });
    },
  );

  it.each([
    [{ a: 1, b: { c: 2, d: 3 } }, { b: { c: null, e: 4 } }, { a: 1, b: { d: 3, e: 4 } }],
    [{ a: [1, 2] }, { a: [3] }, { a: [3] }],
    [{ a: 1 }, { a: null }, {}],
  ])('merges %j with the patch %j into %j (RFC 7396)', (target, patch, result) => {
    expect(mergePatch(target, patch)).toEqual(result);
  });
});
