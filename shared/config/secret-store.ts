import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import {
  CreateSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';

/** Where a connection's secret is read from and, when the doctor records a webhook's secret, written back to. */
export interface SecretStore {
  /** The secret's JSON value; undefined when there is no such secret. Throws when it cannot be read. */
  read(secretRef: string): Promise<unknown>;
  write(secretRef: string, value: Record<string, unknown>): Promise<void>;
  /** Where the secrets are, for the doctor's messages. */
  readonly where: string;
}

/** One machine: the untracked secrets file `npm start` writes (`{ "<secretRef>": {…} }`). */
export function fileSecretStore(path: string): SecretStore {
  const load = (): Record<string, unknown> =>
    existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>) : {};
  return {
    where: path,
    read: async (secretRef) => {
      const document = load();
      return Object.hasOwn(document, secretRef) ? document[secretRef] : undefined;
    },
    write: async (secretRef, value) => {
      const document = load();
      document[secretRef] = value;
      // Written whole and renamed into place: a function reading it never sees half a file.
      writeFileSync(`${path}.tmp`, JSON.stringify(document, null, 2), { mode: 0o600 });
      renameSync(`${path}.tmp`, path);
    },
  };
}

/**
 * AWS: one JSON secret per connection in Secrets Manager, named by its `secretRef`. A write to a secret that does not
 * exist yet (a customer added in the console, connecting through their link) creates it; one created meanwhile by
 * another write is written as any other.
 */
export function secretsManagerStore(client: SecretsManagerClient): SecretStore {
  return {
    where: 'Secrets Manager',
    read: async (secretRef) => {
      try {
        const result = await client.send(new GetSecretValueCommand({ SecretId: secretRef }));
        return JSON.parse(result.SecretString ?? 'null');
      } catch (error) {
        if (error instanceof ResourceNotFoundException) return undefined;
        throw error;
      }
    },
    write: async (secretRef, value) => {
      const put = () =>
        client.send(new PutSecretValueCommand({ SecretId: secretRef, SecretString: JSON.stringify(value) }));
      try {
        await put();
      } catch (error) {
        if (!(error instanceof ResourceNotFoundException)) throw error;
        try {
          await client.send(new CreateSecretCommand({ Name: secretRef, SecretString: JSON.stringify(value) }));
        } catch (raced) {
          if (!(raced instanceof ResourceExistsException)) throw raced;
          await put();
        }
      }
    },
  };
}

/**
 * Writes only `fields` into the secret, over its value as read just before the write, and answers the value written:
 * a change made meanwhile to another field (a key rotated while a customer's credentials were tried at their ATS) is
 * kept. A field given undefined is taken out. Secrets Manager has no conditional write, so two writes in the same
 * moment can still cross; none spans a call to an ATS.
 */
export async function writeFields(
  store: Pick<SecretStore, 'read' | 'write'>,
  secretRef: string,
  fields: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const read = await store.read(secretRef);
  const current = read && typeof read === 'object' ? (read as Record<string, unknown>) : {};
  const next = Object.fromEntries(Object.entries({ ...current, ...fields }).filter(([, value]) => value !== undefined));
  await store.write(secretRef, next);
  return next;
}
