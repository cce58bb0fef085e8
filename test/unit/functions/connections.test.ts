import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionContext, resetConnectionCaches } from '../../../functions/_runtime/connections';
import { connectionDocument } from '../../helpers/connections';
import type { Pacer } from '../../../shared/ats/pacer';

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
  window: process.env.BATCHING_WINDOW_SECONDS,
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
    ['BATCHING_WINDOW_SECONDS', saved.window],
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

  it("paces with the function's batching window: a message goes back early enough for it", async () => {
    process.env.EVENTS_TABLE = 'events';
    const earlyMs = async (window: string | undefined) => {
      if (window === undefined) delete process.env.BATCHING_WINDOW_SECONDS;
      else process.env.BATCHING_WINDOW_SECONDS = window;
      resetConnectionCaches();
      return ((await connectionContext('acme-greenhouse'))?.pacer as Pacer | undefined)?.returnEarlyMs;
    };
    const [none, invite, writeback] = [await earlyMs(undefined), await earlyMs('1'), await earlyMs('5')];
    expect(invite).toBe(none);
    expect((writeback as number) - (invite as number)).toBe(4_000);
  });
});
