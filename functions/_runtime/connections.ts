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
import { connectionRate, createAtsAdapter, PROFILES } from '../../shared/ats';
import { Pacer, type RateSchedule } from '../../shared/ats/pacer';
import { DynamoRateSchedule } from '../../shared/mapping/rate-schedule';
import { InterviewServiceClient } from '../../shared/interview-service';
import type { ConnectionContext } from '../../shared/pipeline/ports';
import { connectionsFilePath, ENV } from './env';
import { createLogger } from '../../shared/observability/logger';

let registry: ConnectionRegistry | undefined;
/** Skipped list items and opted-in languages are said here (ids and field paths only). */
const clientLogger = createLogger('interview-service-client');
let secrets: SecretsProvider | undefined;
let schedule: RateSchedule | undefined;
/** One pacer per connection in this environment, kept when its context is rebuilt; its schedule is shared. */
const pacers = new Map<string, Pacer | undefined>();
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
  if (!pacers.has(connectionId)) pacers.set(connectionId, pacerFor(connection));
  const pacer = pacers.get(connectionId);
  const context: ConnectionContext = {
    connection,
    secrets: connectionSecrets,
    ats: createAtsAdapter(connection, connectionSecrets, pacer ? { gate: pacer } : {}),
    pacer,
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

/**
 * The connection's pacer, where its ATS has a rate (its own `atsRateLimit` or the documented one) and the function
 * has the events table the shared schedule lives on.
 */
function pacerFor(connection: Connection): Pacer | undefined {
  const rate = connectionRate(connection);
  const table = process.env[ENV.eventsTable];
  // A rate above 1,000 calls a second is no limit any ATS has: such a connection (a lifted limit) is not paced.
  if (!rate || !table || rate.limit > rate.windowMs) return undefined;
  schedule ??= new DynamoRateSchedule({ table });
  return new Pacer({
    connectionId: connection.id,
    rate,
    rateHeaders: PROFILES[connection.ats]?.rateHeaders,
    schedule,
    batchingWindowMs: batchingWindowMs(),
  });
}

/** The function's event source's batching window, when its environment names one (a worker's). */
function batchingWindowMs(): number | undefined {
  const seconds = Number(process.env[ENV.batchingWindowSeconds] || Number.NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

function sameSecrets(a: ConnectionSecrets, b: ConnectionSecrets): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** For tests and the local runner, which swap files between runs. */
export function resetConnectionCaches(): void {
  registry = undefined;
  secrets = undefined;
  schedule = undefined;
  pacers.clear();
  contexts.clear();
}
