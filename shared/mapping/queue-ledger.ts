import { randomUUID } from 'node:crypto';
import {
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { stageSubject, type QueueLedger } from '../pipeline/ports';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import { MAPPING_TABLES } from './constants';
import { batchGetAll } from './paging';

export interface DynamoQueueLedgerOptions {
  /** The events table: the ledger's records live beside the deliveries, with a TTL. */
  table: string;
  client?: DynamoDBClient;
}

/** BatchWriteItem takes 25 items a request (Amazon DynamoDB API Reference). */
const BATCH_WRITE_LIMIT = 25;
/** Unprocessed items of a batch are written again this many times at most. */
const MAX_BATCH_ATTEMPTS = 5;
/**
 * A record outlives any grace period or cadence a caller gives (a day at most: the reconciler's daily look at a quiet
 * interview, its daily error line of a failing connection); TTL deletes it two days after it was made.
 */
const RECORD_TTL_SECONDS = 2 * 86_400;

const enqueuedKey = (connectionId: string, subject: string) => `enqueued#${connectionId}#${subject}`;

/** The ledger's key of an application's stage change: a purge of the candidate deletes it with their records. */
export const stageLedgerKey = (connectionId: string, atsApplicationId: string): string =>
  enqueuedKey(connectionId, stageSubject(atsApplicationId));
const backlogKey = (connectionId: string) => `backlog#${connectionId}`;
const expiresAt = (now: number) => Math.floor(now / 1000) + RECORD_TTL_SECONDS;

/** The queue ledger on the events table: one item per enqueued subject and one per connection's backlog. */
export class DynamoQueueLedger implements QueueLedger {
  private readonly client: DynamoDBClient;
  private readonly table: string;
  /** Every call aborts with the worker's deadline (shared/aws/deadline.ts). */
  private readonly send: DynamoDBClient['send'] = ((command: never) =>
    this.client.send(command, { abortSignal: currentDeadline() })) as never;

  public constructor(options: DynamoQueueLedgerOptions) {
    this.client = options.client ?? new DynamoDBClient(AWS_CLIENT_CONFIG);
    this.table = options.table;
  }

  public async claimEnqueue(connectionId: string, subject: string, now: number, graceMs: number): Promise<boolean> {
    // The claim's own mark: a put that landed and whose answer was lost is known by it on the SDK's retry.
    return this.putIf(
      { ...this.enqueuedItem(connectionId, subject, now), writer: { S: randomUUID() } },
      'attribute_not_exists(pk) OR enqueuedAt < :since',
      { ':since': now - graceMs },
    );
  }

  public async enqueuedSince(connectionId: string, subjects: readonly string[], since: number): Promise<Set<string>> {
    const prefix = enqueuedKey(connectionId, '');
    const keys = subjects.map((subject) => ({ pk: enqueuedKey(connectionId, subject) }));
    const items = await batchGetAll(this.client, this.table, keys, { ProjectionExpression: 'pk, enqueuedAt' });
    const found = new Set<string>();
    for (const { pk, enqueuedAt } of items as { pk: string; enqueuedAt?: number }[])
      if ((enqueuedAt ?? 0) >= since) found.add(pk.slice(prefix.length));
    return found;
  }

  public async recordEnqueued(connectionId: string, subjects: readonly string[], now: number): Promise<void> {
    const unique = [...new Set(subjects)];
    // One subject (a webhook's) is one PutItem: no batch to retry, and no batch permission to grant.
    if (unique.length === 1) {
      await this.send(
        new PutItemCommand({ TableName: this.table, Item: this.enqueuedItem(connectionId, unique[0] as string, now) }),
      );
      return;
    }
    for (let start = 0; start < unique.length; start += BATCH_WRITE_LIMIT) {
      let requests = unique.slice(start, start + BATCH_WRITE_LIMIT).map((subject) => ({
        PutRequest: { Item: this.enqueuedItem(connectionId, subject, now) },
      }));
      for (let attempt = 1; requests.length; attempt++) {
        if (attempt > MAX_BATCH_ATTEMPTS)
          throw new Error(`DynamoDB left ${requests.length} writes unprocessed ${MAX_BATCH_ATTEMPTS} times`);
        const result = await this.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: requests } }));
        requests = (result.UnprocessedItems?.[this.table] ?? []) as typeof requests;
      }
    }
  }

  public async forgetEnqueued(connectionId: string, subjects: readonly string[]): Promise<void> {
    for (const subject of new Set(subjects))
      await this.send(
        new DeleteItemCommand({ TableName: this.table, Key: marshall({ pk: enqueuedKey(connectionId, subject) }) }),
      );
  }

  public async recordBacklog(connectionId: string, until: number): Promise<void> {
    await this.putIf(
      marshall({
        pk: backlogKey(connectionId),
        kind: 'backlog',
        connectionId,
        until,
        [MAPPING_TABLES.ttlAttribute]: expiresAt(until),
      }),
      'attribute_not_exists(pk) OR #until < :until',
      { ':until': until },
      { '#until': 'until' },
    );
  }

  public async backlogUntil(connectionId: string): Promise<number | undefined> {
    const result = await this.send(
      new GetItemCommand({
        TableName: this.table,
        Key: marshall({ pk: backlogKey(connectionId) }),
        ConsistentRead: true,
      }),
    );
    const until = result.Item ? (unmarshall(result.Item) as { until?: unknown }).until : undefined;
    return typeof until === 'number' ? until : undefined;
  }

  private enqueuedItem(connectionId: string, subject: string, now: number): Record<string, AttributeValue> {
    return marshall({
      pk: enqueuedKey(connectionId, subject),
      kind: 'enqueued',
      enqueuedAt: now,
      [MAPPING_TABLES.ttlAttribute]: expiresAt(now),
    });
  }

  /**
   * A conditional PutItem: false when the condition did not hold, unless the item there is this very put's (its
   * `writer` mark), landed on an attempt whose answer the SDK lost before it retried.
   */
  private async putIf(
    item: Record<string, AttributeValue>,
    condition: string,
    values: Record<string, unknown>,
    names?: Record<string, string>,
  ): Promise<boolean> {
    try {
      await this.send(
        new PutItemCommand({
          TableName: this.table,
          Item: item,
          ConditionExpression: condition,
          ExpressionAttributeValues: marshall(values),
          ...(names ? { ExpressionAttributeNames: names } : {}),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const mark = item.writer?.S;
      return mark !== undefined && error.Item?.writer?.S === mark;
    }
  }
}
