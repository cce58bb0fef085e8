import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { emulatorEnvironment, startEmulators, type Emulators } from '../../../infra/local/emulators';
import { createTables } from '../../../infra/local/provision';
import { importConnections } from '../../../shared/mapping/connections.import';
import { DynamoConnectionStore } from '../../../shared/mapping/connections.records';

/** A connection as a file holds it; `stage` tells one version from another. */
const connection = (id: string, stage: string) => ({ id, ats: 'greenhouse', triggers: [{ stage: { name: stage } }] });

describe('Repositories: importConnections at deploy (DynamoDB Local)', () => {
  let emulators: Emulators;
  let store: DynamoConnectionStore;
  beforeAll(async () => {
    emulators = await startEmulators({}, inject('emulators'));
    const env = emulatorEnvironment(emulators.endpoints);
    const client = new DynamoDBClient({
      endpoint: emulators.endpoints.dynamodb,
      region: env.AWS_REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const tables = await createTables(client, `import-test-${randomBytes(4).toString('hex')}`);
    store = new DynamoConnectionStore({
      tables: { connections: tables.connections, audit: tables.connectionAudit },
      client,
    });
  });
  afterAll(async () => {
    await emulators?.stop();
  });

  const deploy = (documents: { id: string }[]) => importConnections(store, documents, { principal: 'cdk-deploy' });
  /** A change made in the console (the admin API's write at the version read). */
  const editInConsole = async (id: string, stage: string) => {
    const current = await store.read(id, true);
    const edit = { document: connection(id, stage), enabled: true, changed: ['triggers'] };
    await store.write(id, edit, { principal: 'console:ops@example.com', action: 'patch' }, current);
  };
  const stageOf = async (id: string) =>
    ((await store.read(id, true))?.document as ReturnType<typeof connection> | undefined)?.triggers[0]?.stage.name;

  it("keeps a connection's console changes through deploys that leave its part of the file as it was", async () => {
    expect(await deploy([connection('a', 'AI Interview'), connection('b', 'AI Interview')])).toMatchObject({
      created: ['a', 'b'],
    });
    await editInConsole('a', 'Phone Screen');
    // The same file again, then a file changed for another customer only: a's change stays.
    expect(await deploy([connection('a', 'AI Interview'), connection('b', 'AI Interview')])).toMatchObject({
      keptEdits: ['a'],
      unchanged: ['b'],
      updated: [],
    });
    expect(await deploy([connection('a', 'AI Interview'), connection('b', 'Tech Screen')])).toMatchObject({
      keptEdits: ['a'],
      updated: ['b'],
    });
    expect(await stageOf('a')).toBe('Phone Screen');
    expect(await stageOf('b')).toBe('Tech Screen');
    // A file that changes a's part wins for a: the operator changed it there on purpose.
    expect(await deploy([connection('a', 'Final Round'), connection('b', 'Tech Screen')])).toMatchObject({
      updated: ['a'],
      unchanged: ['b'],
    });
    expect(await stageOf('a')).toBe('Final Round');
  });

  it('keeps when a connection was made through its changes; one deleted and made again has another', async () => {
    await deploy([connection('made', 'AI Interview')]);
    const made = await store.read('made', true);
    expect(made?.createdAt).toEqual(expect.any(Number));
    await editInConsole('made', 'Phone Screen');
    expect((await store.read('made', true))?.createdAt).toBe(made?.createdAt);
    const current = await store.read('made', true);
    await store.remove(current as NonNullable<typeof current>, { principal: 'ops', action: 'delete' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Made again by the file once it changes its copy (the same copy leaves it deleted, below).
    await deploy([connection('made', 'Tech Screen')]);
    const again = await store.read('made', true);
    expect(again?.version).toBe(1);
    expect(again?.createdAt).toBeGreaterThan(made?.createdAt as number);
  });

  it('leaves one deleted in the console deleted while the file holds it as it was; a change makes it', async () => {
    await deploy([connection('gone', 'AI Interview'), connection('other', 'AI Interview')]);
    const current = await store.read('gone', true);
    await store.remove(current as NonNullable<typeof current>, { principal: 'console:ops', action: 'delete' });
    // A deploy for another customer: the deleted one is not made again.
    expect(await deploy([connection('gone', 'AI Interview'), connection('other', 'Tech Screen')])).toMatchObject({
      keptDeleted: ['gone'],
      updated: ['other'],
      created: [],
    });
    expect(await store.read('gone', true)).toBeUndefined();
    // The operator changes its copy in the file: made again, as asked.
    expect(await deploy([connection('gone', 'Phone Screen')])).toMatchObject({ created: ['gone'] });
    // Deleted by a prune (the file dropped it), then back in the file as it was: made again.
    await importConnections(store, [], { principal: 'cdk-deploy', prune: true });
    expect(await deploy([connection('gone', 'Phone Screen')])).toMatchObject({ created: ['gone'] });
  });

  it('records the digest of one imported before digests were kept: its next console change stays', async () => {
    const legacy = connection('c', 'AI Interview');
    await store.write('c', { document: legacy, enabled: true, changed: ['*'] }, { principal: 'old', action: 'import' });
    expect((await store.read('c', true))?.fileDigest).toBeUndefined();
    expect(await deploy([legacy])).toMatchObject({ unchanged: ['c'] });
    expect((await store.read('c', true))?.fileDigest).toMatch(/^[0-9a-f]{64}$/);
    await editInConsole('c', 'Phone Screen');
    expect(await deploy([legacy])).toMatchObject({ keptEdits: ['c'] });
    expect(await stageOf('c')).toBe('Phone Screen');
  });

  it('imports many connections at once, said in the file order; a redeploy writes only the one changed', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `many-${String(i).padStart(2, '0')}`);
    const file = ids.map((id, i) => connection(id, i % 2 ? 'Phone Screen' : 'AI Interview'));
    const first = await deploy(file);
    expect(first.created).toEqual(ids);
    const again = await deploy([...file.slice(0, 20), connection('many-20', 'Offer'), ...file.slice(21)]);
    expect(again.updated).toEqual(['many-20']);
    expect(again.unchanged).toEqual(ids.filter((id) => id !== 'many-20'));
    expect(await stageOf('many-20')).toBe('Offer');
  });
});
