import { readFileSync, statSync } from 'node:fs';
import * as v from 'valibot';
import { connectionSecretsSchema, type ConnectionSecrets } from './connection.schema';
import { SecretsError } from './errors';
import { describeFirstIssue } from '../validation';
import { errorMessage } from '../errors';
import { BoundedMap, SECRETS_KEPT } from './bounded-map';

export interface SecretsProvider {
  getConnectionSecrets(secretRef: string): Promise<ConnectionSecrets>;
}

/** Secrets are cached for minutes, so a rotation reaches warm functions without a redeploy. */
export const SECRETS_CACHE_MS = 5 * 60_000;

function parseSecrets(secretRef: string, value: unknown): ConnectionSecrets {
  const parsed = v.safeParse(connectionSecretsSchema, value);
  if (parsed.success) return parsed.output;
  // The message names the field, never the value.
  throw new SecretsError('secret-invalid', `secret ${secretRef}: ${describeFirstIssue(parsed.issues).message}`);
}

/** Wraps a loader with a time-based cache. */
export function cachedSecrets(
  load: (secretRef: string) => Promise<unknown>,
  now: () => number = Date.now,
  ttlMs = SECRETS_CACHE_MS,
): SecretsProvider {
  const cache = new BoundedMap<string, { value: ConnectionSecrets; expiresAt: number }>(SECRETS_KEPT);
  // Callers that miss the cache at the same moment (a batch's records) share one load.
  const loading = new Map<string, Promise<ConnectionSecrets>>();
  return {
    async getConnectionSecrets(secretRef) {
      const hit = cache.get(secretRef);
      if (hit && hit.expiresAt > now()) return hit.value;
      const pending = loading.get(secretRef);
      if (pending) return pending;
      const loaded = (async () => {
        const value = parseSecrets(secretRef, await load(secretRef));
        cache.set(secretRef, { value, expiresAt: now() + ttlMs });
        return value;
      })().finally(() => loading.delete(secretRef));
      loading.set(secretRef, loaded);
      return loaded;
    },
  };
}

/**
 * One machine: an untracked JSON file `{ "<secretRef>": { ...secrets } }` (written by `npm start`). A change to
 * the file (the doctor recording a webhook's secret) is read at the next call, not after the cache's minutes.
 */
export function fileSecretsProvider(path: string): SecretsProvider {
  let cache: { provider: SecretsProvider; modified: number } | undefined;
  const modified = (): number => {
    try {
      return statSync(path).mtimeMs;
    } catch {
      return 0;
    }
  };
  return {
    getConnectionSecrets(secretRef) {
      const now = modified();
      if (!cache || cache.modified !== now) cache = { provider: fileSecretsLoader(path), modified: now };
      return cache.provider.getConnectionSecrets(secretRef);
    },
  };
}

function fileSecretsLoader(path: string): SecretsProvider {
  // Parsed once for every secret of this version of the file (a new version gets a new loader).
  let parsed: Record<string, unknown> | undefined;
  return cachedSecrets(async (secretRef) => {
    let document: Record<string, unknown>;
    try {
      parsed ??= JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      document = parsed;
    } catch (error) {
      throw new SecretsError('secret-unavailable', `cannot read the secrets file ${path}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    if (!Object.hasOwn(document, secretRef))
      throw new SecretsError('secret-not-found', `secret ${secretRef} is not in ${path}`);
    return document[secretRef];
  });
}
