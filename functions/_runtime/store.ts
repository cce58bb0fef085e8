import { DynamoMappingStore } from '../../shared/mapping';
import { ENV, tableNames } from './env';

/** The mapping store from the environment; `RETENTION_DAYS` overrides how long application records live. */
export function mappingStore(): DynamoMappingStore {
  const retentionDays = Number(process.env[ENV.retentionDays] ?? '') || undefined;
  return new DynamoMappingStore({
    tables: tableNames(),
    retention: retentionDays ? { applicationDays: retentionDays } : undefined,
  });
}
