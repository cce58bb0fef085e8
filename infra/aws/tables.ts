import { RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { MAPPING_TABLES } from '../../shared/mapping/constants';

export interface ConnectorTables {
  jobs: Table;
  applications: Table;
  events: Table;
  /** Assessment orders placed from inside an ATS (shared/orders/). */
  orders: Table;
  /** One item per connection, and every change to one (shared/mapping/connections.records.ts). */
  connections: Table;
  connectionAudit: Table;
  /** What the console shows of the pipeline, the doctor's results and the connect links (activity.records.ts). */
  activity: Table;
}

/**
 * The mapping tables with their indexes (shared/mapping/constants.ts): retained on delete, point-in-time recovery,
 * TTL. Made in the stack's own scope: their logical ids never change, so an update never replaces a table.
 */
export function createTables(stack: Stack): ConnectorTables {
  const common = {
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: TableEncryption.AWS_MANAGED,
    timeToLiveAttribute: MAPPING_TABLES.ttlAttribute,
    removalPolicy: RemovalPolicy.RETAIN,
    partitionKey: { name: 'pk', type: AttributeType.STRING },
  };
  const jobs = new Table(stack, 'JobsTable', common);
  const connectionIndex = MAPPING_TABLES.jobs.connectionIndex;
  jobs.addGlobalSecondaryIndex({
    indexName: connectionIndex.name,
    partitionKey: { name: connectionIndex.partitionKey, type: AttributeType.STRING },
  });
  const applications = new Table(stack, 'ApplicationsTable', {
    ...common,
    sortKey: { name: 'sk', type: AttributeType.STRING },
  });
  const { interviewIndex, candidateIndex, serviceCandidateIndex, stateIndex } = MAPPING_TABLES.applications;
  applications.addGlobalSecondaryIndex({
    indexName: interviewIndex.name,
    partitionKey: { name: interviewIndex.partitionKey, type: AttributeType.STRING },
    sortKey: { name: interviewIndex.sortKey, type: AttributeType.STRING },
  });
  applications.addGlobalSecondaryIndex({
    indexName: candidateIndex.name,
    partitionKey: { name: candidateIndex.partitionKey, type: AttributeType.STRING },
    projectionType: ProjectionType.KEYS_ONLY,
  });
  applications.addGlobalSecondaryIndex({
    indexName: serviceCandidateIndex.name,
    partitionKey: { name: serviceCandidateIndex.partitionKey, type: AttributeType.STRING },
  });
  // Keys only: an index entry changes with the application's state, not with each of its writes.
  applications.addGlobalSecondaryIndex({
    indexName: stateIndex.name,
    partitionKey: { name: stateIndex.partitionKey, type: AttributeType.STRING },
    sortKey: { name: stateIndex.sortKey, type: AttributeType.STRING },
    projectionType: ProjectionType.KEYS_ONLY,
  });
  const events = new Table(stack, 'EventsTable', common);
  const orders = new Table(stack, 'OrdersTable', common);
  const orderIndex = MAPPING_TABLES.orders.interviewIndex;
  orders.addGlobalSecondaryIndex({
    indexName: orderIndex.name,
    partitionKey: { name: orderIndex.partitionKey, type: AttributeType.STRING },
    sortKey: { name: orderIndex.sortKey, type: AttributeType.STRING },
  });
  const workIndex = MAPPING_TABLES.orders.workIndex;
  orders.addGlobalSecondaryIndex({
    indexName: workIndex.name,
    partitionKey: { name: workIndex.partitionKey, type: AttributeType.STRING },
    sortKey: { name: workIndex.sortKey, type: AttributeType.NUMBER },
  });
  const orderCandidates = MAPPING_TABLES.orders.candidateIndex;
  orders.addGlobalSecondaryIndex({
    indexName: orderCandidates.name,
    partitionKey: { name: orderCandidates.partitionKey, type: AttributeType.STRING },
    projectionType: ProjectionType.KEYS_ONLY,
  });
  // No TTL: a connection lives until it is deleted, and its audit as long as the operator keeps the table.
  const { timeToLiveAttribute: _ttl, partitionKey: _pk, ...kept } = common;
  const connections = new Table(stack, 'ConnectionsTable', {
    ...kept,
    partitionKey: { name: MAPPING_TABLES.connections.partitionKey, type: AttributeType.STRING },
  });
  const connectionAudit = new Table(stack, 'ConnectionAuditTable', {
    ...kept,
    partitionKey: { name: MAPPING_TABLES.connectionAudit.partitionKey, type: AttributeType.STRING },
    sortKey: { name: MAPPING_TABLES.connectionAudit.sortKey, type: AttributeType.STRING },
  });
  // Counts of the day, timelines, the doctor's results and connect links: each expires by TTL.
  const activity = new Table(stack, 'ActivityTable', {
    ...common,
    sortKey: { name: MAPPING_TABLES.activity.sortKey, type: AttributeType.STRING },
  });
  return { jobs, applications, events, orders, connections, connectionAudit, activity };
}

/** The ARN of one of a table's indexes, for a grant. */
export function indexArn(table: Table, indexName: string): string {
  return `${table.tableArn}/index/${indexName}`;
}
