import {
  ConnectionRegistry,
  fileSecretsProvider,
  missingAtsSecret,
  SECRETS_CACHE_MS,
  SecretsError,
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
const contexts = new Map<string, { context: Promise<ConnectionContext>; expiresAt: number }>();

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
 * The connection with its secrets, ATS adapter and interview-service client, built once and rebuilt when the
 * secrets cache would expire, so a rotated key reaches warm functions.
 */
export async function connectionContext(connectionId: string): Promise<ConnectionContext | undefined> {
  const connection = connectionRegistry().get(connectionId);
  if (!connection) return undefined;
  const cached = contexts.get(connectionId);
  if (cached && cached.expiresAt > Date.now()) return cached.context;
  const context = (async (): Promise<ConnectionContext> => {
    const connectionSecrets = await secretsProvider().getConnectionSecrets(connection.secretRef);
    const missing = missingAtsSecret(connection.ats, connectionSecrets);
    if (missing)
      throw new SecretsError(
        'secret-invalid',
        `secret ${connection.secretRef}: ${missing} is required for ${connection.ats} connections`,
      );
    return {
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
  })();
  contexts.set(connectionId, { context, expiresAt: Date.now() + SECRETS_CACHE_MS });
  context.catch(() => contexts.delete(connectionId));
  return context;
}

/** For tests and the local runner, which swap files between runs. */
export function resetConnectionCaches(): void {
  registry = undefined;
  secrets = undefined;
  contexts.clear();
}
