import {
  type Connection,
  ConnectionRegistry,
  fileSecretsProvider,
  missingAtsSecret,
  SecretsError,
  type ConnectionSecrets,
  type SecretsProvider,
} from '../../shared/config';
import { secretsManagerProvider } from '../../shared/config/secrets-manager';
import { createAtsAdapter } from '../../shared/ats';
import type { WebhookContext } from '../../shared/pipeline/ports';
import { connectionsFilePath, ENV } from './env';

let registry: ConnectionRegistry | undefined;
let secrets: SecretsProvider | undefined;
const contexts = new Map<string, { context: WebhookContext; secrets: ConnectionSecrets }>();
/** What else caches per connection (the workers' contexts, ./work-context.ts): cleared with these. */
export const connectionCacheResets = new Set<() => void>();

/**
 * Read once per warm function; each connection is validated when first used, and an invalid one fails with a
 * message naming the connection and the field.
 */
export function connectionRegistry(): ConnectionRegistry {
  registry ??= ConnectionRegistry.fromFile(connectionsFilePath());
  return registry;
}

function secretsProvider(): SecretsProvider {
  const file = process.env[ENV.secretsFile];
  secrets ??= file ? fileSecretsProvider(file) : secretsManagerProvider();
  return secrets;
}

/**
 * The connection and its secrets, checked: undefined for an unknown connection; a SecretsError naming the missing
 * field for secrets its ATS cannot work without. The secrets provider's cache lasts minutes (Secrets Manager) or until
 * the file changes (one machine), so a rotated key, or a webhook token the doctor recorded, reaches warm functions.
 */
export async function connectionWithSecrets(
  connectionId: string,
): Promise<{ connection: Connection; secrets: ConnectionSecrets } | undefined> {
  const connection = connectionRegistry().get(connectionId);
  if (!connection) return undefined;
  const connectionSecrets = await secretsProvider().getConnectionSecrets(connection.secretRef);
  const missing = missingAtsSecret(connection.ats, connectionSecrets);
  if (missing)
    throw new SecretsError(
      'secret-invalid',
      `secret ${connection.secretRef}: ${missing} is required for ${connection.ats} connections`,
    );
  return { connection, secrets: connectionSecrets };
}

/** Whether a context built with `built` still holds for `now`: a cache refresh (same content) keeps it. */
export function sameSecrets(built: ConnectionSecrets, now: ConnectionSecrets): boolean {
  return built === now || JSON.stringify(built) === JSON.stringify(now);
}

/**
 * What a webhook function needs of a connection: the connection, its secrets and its ATS adapter, which verifies and
 * reads webhooks (no pacing, no interview-service client: a webhook authenticates, validates, records and enqueues).
 */
export async function webhookContext(connectionId: string): Promise<WebhookContext | undefined> {
  const found = await connectionWithSecrets(connectionId);
  if (!found) return undefined;
  const cached = contexts.get(connectionId);
  if (cached && sameSecrets(cached.secrets, found.secrets)) return cached.context;
  const context = { ...found, ats: createAtsAdapter(found.connection, found.secrets) };
  contexts.set(connectionId, { context, secrets: found.secrets });
  return context;
}

/** For tests and the local runner, which swap files between runs. */
export function resetConnectionCaches(): void {
  registry = undefined;
  secrets = undefined;
  contexts.clear();
  for (const reset of connectionCacheResets) reset();
}
