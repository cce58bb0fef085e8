export {
  type DynamoMappingStore,
  type DynamoMappingStoreOptions,
  dynamoMappingStore,
  type MappingTableNames,
} from './mapping.store';
export { MAPPING_TABLES, RETENTION_DEFAULTS } from './constants';
export { LeaseLostError } from './errors';
export { DynamoQueueLedger, type DynamoQueueLedgerOptions } from './queue-ledger';
export { DeadlineReachedError, PageCapError } from './paging';
export { DynamoOrderStore } from './orders.records';
export { type ConnectionAudit, DynamoConnectionStore, VersionConflictError } from './connections.records';
