import {
  ConnectionRegistry,
  fileSecretsProvider,
  missingAtsSecret,
  SecretsError,
  type ConnectionSecrets,
  type SecretsProvider,
} from '../../shared/config';
import { secretsManagerProvider } from '../../shared/config/secrets-manager';
import { createAtsAdapter } from '../../shared/ats';
import { InterviewServiceClient } from '../../shared/interview-service';
import type { ConnectionContext } from '../../shared/pipeline/ports';
import { connectionsFilePath, ENV } from './env';
import { createLogger } from '../../shared/observability/logger';

let registry: ConnectionRegistry | undefined;
/** Skipped list items and opted-in languages are said here (ids and field paths only). */
const clientLogger = createLogger('interview-service-client');
let secrets: SecretsProvider | undefined;
const contexts = new Map<string, { context: ConnectionContext; secrets: ConnectionSecrets }>();

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
 * The connection with its secrets, ATS adapter and interview-service client, built once and rebuilt when its
 * secrets change: the secrets provider's cache lasts minutes (Secrets Manager) or until the file changes (one
 * machine), so a rotated key, or a webhook token the doctor recorded, reaches warm functions.
 */
export async function connectionContext(connectionId: string): Promise<ConnectionContext | undefined> {
  const connection = connectionRegistry().get(connectionId);
  if (!connection) return undefined;
  const connectionSecrets = await secretsProvider().getConnectionSecrets(connection.secretRef);
  // Rebuilt only when the secrets say something else: a cache refresh (a new object with the same content) keeps
  // the context, and with it the ATS client's pacing (its windows, its turns booked, what a message costs).
  const cached = contexts.get(connectionId);
  if (cached && (cached.secrets === connectionSecrets || sameSecrets(cached.secrets, connectionSecrets)))
    return cached.context;
  const missing = missingAtsSecret(connection.ats, connectionSecrets);
  if (missing)
    throw new SecretsError(
      'secret-invalid',
      `secret ${connection.secretRef}: ${missing} is required for ${connection.ats} connections`,
    );
  const context: ConnectionContext = {
    connection,
    secrets: connectionSecrets,
    ats: createAtsAdapter(connection, connectionSecrets),
    interviews: new InterviewServiceClient({
      baseUrl: connection.interviewService.baseUrl,
      apiKey: connectionSecrets.interviewApiKey,
      extraLanguages: connection.interviewService.extraLanguages,
      timeoutMs: connection.interviewService.timeoutMs,
      logger: clientLogger,
    }),
  };
  contexts.set(connectionId, { context, secrets: connectionSecrets });
  return context;
}

function sameSecrets(a: ConnectionSecrets, b: ConnectionSecrets): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** For tests and the local runner, which swap files between runs. */
export function resetConnectionCaches(): void {
  registry = undefined;
  secrets = undefined;
  contexts.clear();
}
