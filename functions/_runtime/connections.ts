import {
  CachedConnections,
  type Connection,
  ConnectionRegistry,
  connectionCacheMs,
  fileSecretsProvider,
  missingAtsSecret,
  SecretsError,
  type ConnectionSecrets,
  type SecretsProvider,
  type StoredConnection,
} from '../../shared/config';
import { secretsManagerProvider } from '../../shared/config/secrets-manager';
import { createAtsAdapter } from '../../shared/ats';
import type { WebhookContext } from '../../shared/pipeline/ports';
import { DynamoConnectionStore } from '../../shared/mapping/connections.records';
import { connectionsFilePath, ENV, requireEnv } from './env';
import { BoundedMap, CONTEXTS_KEPT } from '../../shared/config/bounded-map';

let connections: CachedConnections | undefined;
let store: DynamoConnectionStore | undefined;
let secrets: SecretsProvider | undefined;
const contexts = new BoundedMap<string, { context: WebhookContext; secrets: ConnectionSecrets }>(CONTEXTS_KEPT);
/** What else caches per connection (the workers' contexts, ./work-context.ts): cleared with these. */
export const connectionCacheResets = new Set<() => void>();

/** The connections table (`CONNECTIONS_TABLE`, with `CONNECTION_AUDIT_TABLE` for the admin API's changes). */
export function connectionStore(): DynamoConnectionStore {
  store ??= new DynamoConnectionStore({
    tables: { connections: requireEnv(ENV.connectionsTable), audit: process.env[ENV.connectionAuditTable] ?? '' },
  });
  return store;
}

/**
 * The connections this environment serves: each read by id from the connections table when first asked for, and
 * kept for `CONNECTION_CACHE_SECONDS` (30 s; 60 at most), so a change through the admin API reaches every function
 * within it. An invalid one fails with a message naming the connection and the field. Without the table (unit tests
 * only), from a connections file.
 */
function servedConnections(): CachedConnections {
  connections ??= new CachedConnections({
    reader: process.env[ENV.connectionsTable] ? connectionStore() : ConnectionRegistry.fromFile(connectionsFilePath()),
    cacheMs: connectionCacheMs(process.env[ENV.connectionCacheSeconds]),
  });
  return connections;
}

/** Connections the reconciler read in its page of the table: served from there, not read again one by one. */
export function rememberConnections(stored: readonly StoredConnection[]): void {
  for (const connection of stored) servedConnections().remember(connection);
}

/** The connection, validated, or undefined when there is none of this id. */
export async function connectionById(connectionId: string): Promise<Connection | undefined> {
  return (await servedConnections().get(connectionId))?.connection;
}

/** Whether the connection exists and is turned off: its webhooks enqueue nothing, and its queued work is parked. */
export async function connectionDisabled(connectionId: string): Promise<boolean> {
  return (await servedConnections().get(connectionId))?.enabled === false;
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
  const connection = await connectionById(connectionId);
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

/** Whether a context built for `built` still holds for the connection read `now`: one read again unchanged keeps it. */
export function sameConnection(built: Connection, now: Connection): boolean {
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
  if (
    cached &&
    sameSecrets(cached.secrets, found.secrets) &&
    sameConnection(cached.context.connection, found.connection)
  )
    return cached.context;
  const context = { ...found, ats: createAtsAdapter(found.connection, found.secrets) };
  contexts.set(connectionId, { context, secrets: found.secrets });
  return context;
}

/** For tests and the local runner, which swap files between runs. */
export function resetConnectionCaches(): void {
  connections = undefined;
  store = undefined;
  secrets = undefined;
  contexts.clear();
  for (const reset of connectionCacheResets) reset();
}
