import { connectionRate, createAtsAdapter, declaredStepCalls, PROFILES } from '../../shared/ats';
import type { AtsKind } from '../../shared/config';
import { DynamoQueueLedger, dynamoMappingStore } from '../../shared/mapping';
import { DynamoRateSchedule } from '../../shared/mapping/rate-schedule';
import { CallPacer, Turns } from '../../shared/pacing';
import { sweepConnection } from '../../shared/pipeline/sweep.use-case';
import type { StageEnteredMessage } from '../../shared/queue';
import type { LocalStack } from '../../infra/local/local-stack';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * The sweep of one connection of `stack` as the reconciler runs it, its messages kept here instead of enqueued; paced
 * as the functions pace it: the connection's rate, on its schedule in the events table.
 */
export function sweepDeps(stack: LocalStack, kind: AtsKind, maxPagesPerRun?: number) {
  const connection = stack.connections.find((c) => c.ats === kind)!;
  const configured = maxPagesPerRun ? { ...connection, sweep: { ...connection.sweep, maxPagesPerRun } } : connection;
  const secrets = stack.secrets[connection.secretRef]!;
  const schedule = new DynamoRateSchedule({ table: stack.tables.events, client: stack.dynamo });
  const rate = connectionRate(configured);
  const { rateHeaders } = PROFILES[connection.ats];
  const stepCalls = declaredStepCalls(connection.ats, connection.writeBack.status === 'tags');
  const connectionId = connection.id;
  const gate = rate ? new CallPacer({ connectionId, rate, rateHeaders, schedule }) : undefined;
  const turns = rate ? new Turns({ connectionId, rate, schedule, stepCalls }) : undefined;
  const ats = createAtsAdapter(configured, secrets, gate ? { gate } : {});
  const context = { connection: configured, secrets, ats, turns };
  const enqueued: StageEnteredMessage[] = [];
  return {
    connectionId: connection.id,
    enqueued,
    gate,
    deps: {
      store: dynamoMappingStore({ tables: stack.tables, client: stack.dynamo }),
      ledger: new DynamoQueueLedger({ table: stack.tables.events, client: stack.dynamo }),
      contextFor: async () => context as never,
      logger: silent,
      enqueue: async (messages: StageEnteredMessage[]) => void enqueued.push(...messages),
    },
  };
}

/** Sweeps until a run reads the list to its end (a run that finds the ATS's window spent leaves it to the next). */
export async function sweepUntilDone(stack: LocalStack, kind: AtsKind) {
  const { connectionId, deps } = sweepDeps(stack, kind);
  for (let run = 0; run < 30; run++) {
    const [trigger] = (await sweepConnection(connectionId, deps)).triggers;
    if (trigger?.state === 'done') return trigger;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`${kind}: the sweep did not finish in 30 runs`);
}
