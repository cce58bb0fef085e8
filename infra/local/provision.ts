import {
  CreateTableCommand,
  DeleteTableCommand,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { MAPPING_TABLES } from '../../shared/mapping/constants';
import { WORKER_TIMING } from '../../shared/pipeline/constants';

export interface LocalTables {
  jobs: string;
  applications: string;
  events: string;
  orders: string;
  /** The connections and their audit (shared/mapping/connections.records.ts). */
  connections: string;
  connectionAudit: string;
  /** What the console shows of the pipeline (shared/mapping/activity.records.ts). */
  activity: string;
}

export interface LocalQueue {
  url: string;
  arn: string;
  dlqUrl: string;
  dlqArn: string;
}

/** String attributes, as every key of the mapping tables is. */
const strings = (...names: string[]) => names.map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const }));

/** A `byInterview` index (interview id, then candidate e-mail): how a report finds its application or order. */
const interviewIndexOf = (index: { name: string; partitionKey: string; sortKey: string }) => ({
  IndexName: index.name,
  KeySchema: [
    { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
    { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
  ],
  Projection: { ProjectionType: 'ALL' as const },
});

/** A table with a partition and a sort key, both strings, and no index. */
async function createKeyedTable(
  client: DynamoDBClient,
  name: string,
  key: { partitionKey: string; sortKey: string },
): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: strings(key.partitionKey, key.sortKey),
      KeySchema: [
        { AttributeName: key.partitionKey, KeyType: 'HASH' },
        { AttributeName: key.sortKey, KeyType: 'RANGE' },
      ],
    }),
  );
}

/** The mapping tables with the key schema the CDK stack gives them (shared/mapping/constants.ts). */
export async function createTables(client: DynamoDBClient, prefix = 'connector'): Promise<LocalTables> {
  const tables: LocalTables = {
    jobs: `${prefix}-jobs`,
    applications: `${prefix}-applications`,
    events: `${prefix}-events`,
    orders: `${prefix}-orders`,
    connections: `${prefix}-connections`,
    connectionAudit: `${prefix}-connection-audit`,
    activity: `${prefix}-activity`,
  };
  const index = MAPPING_TABLES.applications.interviewIndex;
  await client.send(
    new CreateTableCommand({
      TableName: tables.jobs,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: strings('pk', MAPPING_TABLES.jobs.connectionIndex.partitionKey),
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [
        {
          IndexName: MAPPING_TABLES.jobs.connectionIndex.name,
          KeySchema: [{ AttributeName: MAPPING_TABLES.jobs.connectionIndex.partitionKey, KeyType: 'HASH' }],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  await client.send(
    new CreateTableCommand({
      TableName: tables.applications,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: strings(
        'pk',
        'sk',
        index.partitionKey,
        index.sortKey,
        MAPPING_TABLES.applications.candidateIndex.partitionKey,
        MAPPING_TABLES.applications.serviceCandidateIndex.partitionKey,
        MAPPING_TABLES.applications.stateIndex.partitionKey,
        MAPPING_TABLES.applications.stateIndex.sortKey,
      ),
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        interviewIndexOf(index),
        {
          IndexName: MAPPING_TABLES.applications.candidateIndex.name,
          KeySchema: [{ AttributeName: MAPPING_TABLES.applications.candidateIndex.partitionKey, KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        {
          IndexName: MAPPING_TABLES.applications.serviceCandidateIndex.name,
          KeySchema: [
            { AttributeName: MAPPING_TABLES.applications.serviceCandidateIndex.partitionKey, KeyType: 'HASH' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: MAPPING_TABLES.applications.stateIndex.name,
          KeySchema: [
            { AttributeName: MAPPING_TABLES.applications.stateIndex.partitionKey, KeyType: 'HASH' },
            { AttributeName: MAPPING_TABLES.applications.stateIndex.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    }),
  );
  await client.send(
    new CreateTableCommand({
      TableName: tables.events,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: strings('pk'),
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
  const { interviewIndex: orderIndex, workIndex, candidateIndex } = MAPPING_TABLES.orders;
  await client.send(
    new CreateTableCommand({
      TableName: tables.orders,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        ...strings(
          'pk',
          orderIndex.partitionKey,
          orderIndex.sortKey,
          workIndex.partitionKey,
          candidateIndex.partitionKey,
        ),
        { AttributeName: workIndex.sortKey, AttributeType: 'N' },
      ],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [
        interviewIndexOf(orderIndex),
        {
          IndexName: workIndex.name,
          KeySchema: [
            { AttributeName: workIndex.partitionKey, KeyType: 'HASH' },
            { AttributeName: workIndex.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: candidateIndex.name,
          KeySchema: [{ AttributeName: candidateIndex.partitionKey, KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    }),
  );
  const { connections: connectionsKey, connectionAudit: auditKey } = MAPPING_TABLES;
  await client.send(
    new CreateTableCommand({
      TableName: tables.connections,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: strings(connectionsKey.partitionKey),
      KeySchema: [{ AttributeName: connectionsKey.partitionKey, KeyType: 'HASH' }],
    }),
  );
  await createKeyedTable(client, tables.connectionAudit, auditKey);
  await createKeyedTable(client, tables.activity, MAPPING_TABLES.activity);
  for (const table of [tables.jobs, tables.applications, tables.events, tables.orders, tables.activity]) {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: table,
        TimeToLiveSpecification: { AttributeName: MAPPING_TABLES.ttlAttribute, Enabled: true },
      }),
    );
  }
  return tables;
}

/** A queue and its DLQ with the redrive policy the CDK stack sets. */
export async function createQueueWithDlq(
  client: SQSClient,
  name: string,
  visibilityTimeoutSeconds: number,
): Promise<LocalQueue> {
  const arnOf = async (url: string): Promise<string> => {
    const attributes = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
    );
    return attributes.Attributes?.QueueArn as string;
  };
  const dlq = await client.send(
    new CreateQueueCommand({ QueueName: `${name}-dlq`, Attributes: { MessageRetentionPeriod: String(14 * 86_400) } }),
  );
  const dlqArn = await arnOf(dlq.QueueUrl as string);
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: WORKER_TIMING.maxReceiveCount }),
      },
    }),
  );
  return {
    url: queue.QueueUrl as string,
    arn: await arnOf(queue.QueueUrl as string),
    dlqUrl: dlq.QueueUrl as string,
    dlqArn,
  };
}

export async function queueDepth(client: SQSClient, url: string): Promise<number> {
  // Delayed messages count: a deferred message is work still to do.
  const names = [
    'ApproximateNumberOfMessages',
    'ApproximateNumberOfMessagesNotVisible',
    'ApproximateNumberOfMessagesDelayed',
  ] as const;
  const attributes = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [...names] }));
  return names.reduce((sum, name) => sum + Number(attributes.Attributes?.[name] ?? 0), 0);
}

/** Removes a stack's tables and queues from emulators that outlive it (the integration tests' shared ones). */
export async function deleteResources(
  dynamo: DynamoDBClient,
  sqs: SQSClient,
  tables: LocalTables,
  queues: LocalQueue[],
): Promise<void> {
  await Promise.all([
    ...Object.values(tables).map((TableName) => dynamo.send(new DeleteTableCommand({ TableName }))),
    ...queues.flatMap((q) => [q.url, q.dlqUrl]).map((QueueUrl) => sqs.send(new DeleteQueueCommand({ QueueUrl }))),
  ]);
}
