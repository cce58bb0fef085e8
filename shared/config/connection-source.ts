import * as v from 'valibot';
import { connectionSchema, type Connection, SLUG_PATTERN } from './connection.schema';
import { ConfigError } from './errors';
import { BoundedMap } from './bounded-map';
import { describeFirstIssue } from '../validation';

/** A connection as it is stored: its document (the connections file's entry), a version and whether it is on. */
export interface StoredConnection {
  id: string;
  /** The connection's document as written; validated when read (./connection.schema.ts). */
  document: unknown;
  /** Starts at 1 and grows by one with every change: a write naming an older one is refused (409). */
  version: number;
  /** A disabled connection's webhooks are answered and nothing is enqueued; its queued work is parked. */
  enabled: boolean;
  updatedAt: number;
  updatedBy: string;
  /**
   * When the connection was made (epoch ms; one made before this was kept: its first write since), kept through
   * every change: a connection deleted and made again under its id has another, so what was issued for the one
   * deleted (a connect link) does not reach it.
   */
  createdAt?: number | undefined;
  /**
   * The SHA-256 of the connection as the deployed connections file last held it: a deploy whose file holds it the
   * same leaves the connection as the console or the admin API changed it since.
   */
  fileDigest?: string | undefined;
}

/** Where a function reads the one connection it serves: its table (shared/mapping/connections.records.ts). */
export interface ConnectionReader {
  read(id: string): Promise<StoredConnection | undefined>;
}

/** A connection a function serves, validated. */
export interface ServedConnection {
  connection: Connection;
  version: number;
  enabled: boolean;
}

/** How long a function keeps a connection it read; the admin API's changes reach every function within it. */
export const CONNECTION_CACHE = {
  defaultSeconds: 30,
  /** A change made through the admin API is in effect everywhere within a minute, whatever the setting. */
  maxSeconds: 60,
  /** Connections one environment keeps at most (the one least recently read is dropped first). */
  maxEntries: 5_000,
} as const;

/** How long an id with no connection is taken as unknown. */
const MISS_CACHE_MS = 1_000;

/** The cache time from a setting (`CONNECTION_CACHE_SECONDS`): 0 to 60 s, the default when unset or not a number. */
export function connectionCacheMs(setting: string | undefined): number {
  const seconds = setting === undefined || setting === '' ? Number.NaN : Number(setting);
  if (!Number.isFinite(seconds)) return CONNECTION_CACHE.defaultSeconds * 1000;
  return Math.min(CONNECTION_CACHE.maxSeconds, Math.max(0, seconds)) * 1000;
}

/** Validates a stored connection: a ConfigError names the connection and the field. */
export function servedConnection(stored: StoredConnection): ServedConnection {
  const parsed = v.safeParse(connectionSchema, stored.document);
  if (!parsed.success)
    throw new ConfigError(`connection ${stored.id} is invalid: ${describeFirstIssue(parsed.issues).message}`);
  if (parsed.output.id !== stored.id)
    throw new ConfigError(`connection ${stored.id} is invalid: its document names id ${parsed.output.id}`);
  return { connection: parsed.output, version: stored.version, enabled: stored.enabled };
}

/**
 * The connections one function environment serves: each read by id the first time it is asked for, then kept for
 * the cache time. An unknown id is kept a second at most: a burst of webhooks for it reads once a second, and a
 * customer's first webhook after their connection was created is served at once (unless its id was asked for in the
 * second before the creation: that webhook is answered 404, and the ATS's redelivery is served). Concurrent asks share
 * one read.
 */
export class CachedConnections {
  /** Past CONNECTION_CACHE.maxEntries the one least recently read goes (./bounded-map.ts). */
  private readonly entries = new BoundedMap<
    string,
    { at: number; known: boolean; value: Promise<ServedConnection | undefined> }
  >(CONNECTION_CACHE.maxEntries);
  private readonly now: () => number;

  public constructor(private readonly options: { reader: ConnectionReader; cacheMs: number; now?: () => number }) {
    this.now = options.now ?? Date.now;
  }

  /** A connection read elsewhere (the reconciler's page of the table): kept as if this cache had read it. */
  public remember(stored: StoredConnection): void {
    this.entries.set(stored.id, { at: this.now(), known: true, value: Promise.resolve(servedConnection(stored)) });
  }

  public get(id: string): Promise<ServedConnection | undefined> {
    // An id no connection can have is none, without a read (a webhook's path is anyone's to write).
    if (!SLUG_PATTERN.test(id)) return Promise.resolve(undefined);
    const cached = this.entries.get(id);
    if (cached && this.now() - cached.at < (cached.known ? this.options.cacheMs : MISS_CACHE_MS)) return cached.value;
    const entry = { at: this.now(), known: true, value: Promise.resolve<ServedConnection | undefined>(undefined) };
    entry.value = this.options.reader.read(id).then((stored) => {
      entry.known = stored !== undefined;
      return stored ? servedConnection(stored) : undefined;
    });
    const { value } = entry;
    this.entries.set(id, entry);
    // A failed read is not kept: the next ask reads again.
    value.catch(() => this.entries.get(id)?.value === value && this.entries.delete(id));
    return value;
  }
}
