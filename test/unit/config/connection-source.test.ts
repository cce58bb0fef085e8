import { describe, expect, it } from 'vitest';
import {
  CachedConnections,
  connectionCacheMs,
  type ConnectionReader,
  type StoredConnection,
} from '../../../shared/config';
import { connectionDocument } from '../../helpers/connections';

const stored = (version = 1, enabled = true): StoredConnection => ({
  id: 'acme-greenhouse',
  document: connectionDocument().connections[0],
  version,
  enabled,
  updatedAt: 1_795_000_000_000,
  updatedBy: 'arn:aws:iam::123456789012:role/operator',
});

/** A reader counting its reads, answering what `current` holds. */
function countingReader(current: { value: StoredConnection | undefined; fail?: boolean }) {
  const reader = {
    reads: 0,
    async read(): Promise<StoredConnection | undefined> {
      reader.reads++;
      if (current.fail) throw new Error('DynamoDB did not answer');
      return current.value;
    },
  } satisfies ConnectionReader & { reads: number };
  return reader;
}

describe('Class: CachedConnections', () => {
  it('reads a connection once within the cache time, and again after it', async () => {
    const clock = { now: 1_795_000_000_000 };
    const current = { value: stored() };
    const reader = countingReader(current);
    const cache = new CachedConnections({ reader, cacheMs: 30_000, now: () => clock.now });
    const [a, b] = await Promise.all([cache.get('acme-greenhouse'), cache.get('acme-greenhouse')]);
    expect(a?.connection.id).toBe('acme-greenhouse');
    expect(b).toBe(a);
    expect(reader.reads).toBe(1);
    current.value = stored(2, false);
    clock.now += 29_000;
    expect((await cache.get('acme-greenhouse'))?.enabled).toBe(true);
    clock.now += 1_000;
    expect(await cache.get('acme-greenhouse')).toMatchObject({ version: 2, enabled: false });
    expect(reader.reads).toBe(2);
  });

  it('keeps an unknown id a second only, so a connection just created is served at once', async () => {
    const clock = { now: 1_795_000_000_000 };
    const current: { value: StoredConnection | undefined } = { value: undefined };
    const reader = countingReader(current);
    const cache = new CachedConnections({ reader, cacheMs: 30_000, now: () => clock.now });
    expect(await cache.get('acme-greenhouse')).toBeUndefined();
    expect(await cache.get('acme-greenhouse')).toBeUndefined();
    expect(reader.reads).toBe(1);
    current.value = stored();
    clock.now += 1_000;
    expect((await cache.get('acme-greenhouse'))?.version).toBe(1);
  });

  it('keeps no failed read: the next ask reads again', async () => {
    const current = { value: stored(), fail: true };
    const reader = countingReader(current);
    const cache = new CachedConnections({ reader, cacheMs: 30_000 });
    await expect(cache.get('acme-greenhouse')).rejects.toThrow('DynamoDB did not answer');
    current.fail = false;
    expect((await cache.get('acme-greenhouse'))?.version).toBe(1);
    expect(reader.reads).toBe(2);
  });

  it('refuses a stored connection that is invalid, naming the connection and the field', async () => {
    const bad = stored();
    bad.document = { ...(bad.document as object), triggers: [{ id: 'x', stage: {} }] };
    const cache = new CachedConnections({ reader: countingReader({ value: bad }), cacheMs: 0 });
    await expect(cache.get('acme-greenhouse')).rejects.toThrow(/connection acme-greenhouse is invalid: triggers/);
  });

  it.each([
    [undefined, 30_000],
    ['', 30_000],
    ['not a number', 30_000],
    ['5', 5_000],
    ['0', 0],
    ['-3', 0],
    ['600', 60_000],
  ])('takes CONNECTION_CACHE_SECONDS=%s as %i ms (60 s at most)', (setting, ms) => {
    expect(connectionCacheMs(setting)).toBe(ms);
  });
});
