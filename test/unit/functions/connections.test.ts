import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetConnectionCaches, webhookContext } from '../../../functions/_runtime/connections';
import { connectionContext } from '../../../functions/_runtime/work-context';
import { connectionDocument } from '../../helpers/connections';
import { Turns } from '../../../shared/pacing';

const dir = mkdtempSync(join(tmpdir(), 'connector-contexts-'));
const secretsFile = join(dir, 'secrets.json');
const secretsOf = (clientSecret: string) => ({
  'connector/acme-greenhouse': {
    interviewApiKey: 'interview-key',
    interviewWebhookToken: 'x'.repeat(32),
    atsWebhookSecret: 'w'.repeat(32),
    atsClientId: 'client-id',
    atsClientSecret: clientSecret,
  },
});
const saved = {
  connections: process.env.CONNECTIONS_FILE,
  secrets: process.env.SECRETS_FILE,
  events: process.env.EVENTS_TABLE,
};

beforeAll(() => {
  writeFileSync(join(dir, 'connections.json'), JSON.stringify(connectionDocument()));
  writeFileSync(secretsFile, JSON.stringify(secretsOf('first')));
  process.env.CONNECTIONS_FILE = join(dir, 'connections.json');
  process.env.SECRETS_FILE = secretsFile;
  resetConnectionCaches();
});
afterAll(() => {
  for (const [name, value] of [
    ['CONNECTIONS_FILE', saved.connections],
    ['SECRETS_FILE', saved.secrets],
    ['EVENTS_TABLE', saved.events],
  ] as const)
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  resetConnectionCaches();
  rmSync(dir, { recursive: true, force: true });
});

describe('Function: connectionContext', () => {
  it('keeps the context (its ATS client and pacing) while the secrets are the same; rebuilds it when not', async () => {
    const [first, second] = await Promise.all([
      connectionContext('acme-greenhouse'),
      connectionContext('acme-greenhouse'),
    ]);
    expect(first).toBeDefined();
    expect(second).toBe(first);
    // The file is written again with the same secrets: they are read anew, and the context stays.
    writeFileSync(secretsFile, JSON.stringify(secretsOf('first')));
    utimesSync(secretsFile, new Date(), new Date(Date.now() + 5_000));
    expect(await connectionContext('acme-greenhouse')).toBe(first);
    // A rotated secret: a new context with it.
    writeFileSync(secretsFile, JSON.stringify(secretsOf('rotated')));
    utimesSync(secretsFile, new Date(), new Date(Date.now() + 10_000));
    const rotated = await connectionContext('acme-greenhouse');
    expect(rotated).not.toBe(first);
    expect(rotated?.secrets.atsClientSecret).toBe('rotated');
  });

  it("paces a worker's context where the schedule's table is named; a webhook's context has no pacing", async () => {
    delete process.env.EVENTS_TABLE;
    resetConnectionCaches();
    expect((await connectionContext('acme-greenhouse'))?.turns).toBeUndefined();
    process.env.EVENTS_TABLE = 'events';
    resetConnectionCaches();
    const worker = await connectionContext('acme-greenhouse');
    expect(worker?.turns).toBeInstanceOf(Turns);
    expect(worker?.interviews).toBeDefined();
    const webhook = await webhookContext('acme-greenhouse');
    expect(Object.keys(webhook ?? {}).sort()).toEqual(['ats', 'connection', 'secrets']);
    expect(await webhookContext('acme-nobody')).toBeUndefined();
  });
});
