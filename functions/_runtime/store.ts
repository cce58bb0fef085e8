import { type DynamoMappingStore, DynamoQueueLedger, dynamoMappingStore } from '../../shared/mapping';
import { ENV, tableNames } from './env';

/** The mapping store from the environment; `RETENTION_DAYS` overrides how long application records live. */
export function mappingStore(): DynamoMappingStore {
  const retentionDays = Number(process.env[ENV.retentionDays] ?? '') || undefined;
  return dynamoMappingStore({
    tables: tableNames(),
    retention: retentionDays ? { applicationDays: retentionDays } : undefined,
  });
}

/** The queue ledger on the events table (shared/mapping/queue-ledger.ts). */
export function queueLedger(): DynamoQueueLedger {
  return new DynamoQueueLedger({ table: tableNames().events });
}
