import type { Connection } from '../../shared/config';
import { connectionRate, createAtsAdapter, declaredStepCalls, PROFILES } from '../../shared/ats';
import { CallPacer, knownSchedule, type RateSchedule, Turns } from '../../shared/pacing';
import { DynamoRateSchedule } from '../../shared/mapping/rate-schedule';
import { InterviewServiceClient } from '../../shared/interview-service';
import type { ConnectionContext } from '../../shared/pipeline/ports';
import { createLogger } from '../../shared/observability/logger';
import { connectionCacheResets, connectionWithSecrets, sameConnection, sameSecrets } from './connections';
import { ENV } from './env';
import { BoundedMap, CONTEXTS_KEPT } from '../../shared/config/bounded-map';

/** Skipped list items and opted-in languages are said here (ids and field paths only). */
const clientLogger = createLogger('interview-service-client');
let schedule: RateSchedule | undefined;
/** One pacing per connection in this environment, kept when its context is rebuilt; its schedule is shared. */
const pacings = new BoundedMap<string, { gate: CallPacer; turns: Turns } | undefined>(CONTEXTS_KEPT);
const contexts = new BoundedMap<string, ConnectionContext>(CONTEXTS_KEPT);
connectionCacheResets.add(() => {
  schedule = undefined;
  pacings.clear();
  contexts.clear();
});

/**
 * The connection with its secrets, paced ATS adapter and interview-service client, for the workers: built once and
 * rebuilt when its secrets change (the gate and the turns are kept: the window the ATS announced stays known).
 */
export async function connectionContext(connectionId: string): Promise<ConnectionContext | undefined> {
  const found = await connectionWithSecrets(connectionId);
  if (!found) return undefined;
  const cached = contexts.get(connectionId);
  if (cached && sameSecrets(cached.secrets, found.secrets) && sameConnection(cached.connection, found.connection)) {
    // Its pacing is as recently used as its context: the two are dropped together, never the busy one's window.
    pacings.get(connectionId);
    return cached;
  }
  const { connection, secrets } = found;
  if (!pacings.has(connectionId)) pacings.set(connectionId, pacingFor(connection));
  const pacing = pacings.get(connectionId);
  const context: ConnectionContext = {
    connection,
    secrets,
    ats: createAtsAdapter(connection, secrets, pacing ? { gate: pacing.gate } : {}),
    turns: pacing?.turns,
    interviews: new InterviewServiceClient({
      baseUrl: connection.interviewService.baseUrl,
      apiKey: secrets.interviewApiKey,
      extraLanguages: connection.interviewService.extraLanguages,
      timeoutMs: connection.interviewService.timeoutMs,
      logger: clientLogger,
    }),
  };
  contexts.set(connectionId, context);
  return context;
}

/**
 * The connection's gate and turns, where its ATS has a rate (its own `atsRateLimit` or the documented one) and the
 * function has the events table the shared schedule lives on.
 */
function pacingFor(connection: Connection): { gate: CallPacer; turns: Turns } | undefined {
  const rate = connectionRate(connection);
  const table = process.env[ENV.eventsTable];
  // A rate above 1,000 calls a second is no limit any ATS has: such a connection (a lifted limit) is not paced.
  if (!rate || !table || rate.limit > rate.windowMs) return undefined;
  schedule ??= knownSchedule(new DynamoRateSchedule({ table }));
  const connectionId = connection.id;
  const stepCalls = declaredStepCalls(
    connection.ats,
    connection.writeBack.status === 'tags',
    connection.writeBack.attachReport !== false,
  );
  return {
    gate: new CallPacer({ connectionId, rate, rateHeaders: PROFILES[connection.ats].rateHeaders, schedule }),
    turns: new Turns({ connectionId, rate, schedule, stepCalls }),
  };
}
