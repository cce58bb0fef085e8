import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { ResumePoint, SeenApplication, SeenChanges } from '../pipeline/changes-hinted.use-case';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import { MAPPING_TABLES, RETENTION_DEFAULTS } from './constants';
import { batchGetAll } from './paging';

const markKey = (connectionId: string) => `synced-mark#${connectionId}`;
const resumeKey = (connectionId: string) => `synced-resume#${connectionId}`;
/** A resume point older than this is gone (its cursor long expired): the read starts again from the mark. */
const RESUME_TTL_SECONDS = 86_400;
const seenKey = (connectionId: string, atsApplicationId: string) => `synced-seen#${connectionId}#${atsApplicationId}`;

/**
 * What a read of a synced copy (Kombo) keeps on the events table: each connection's watermark (the latest change
 * read), and each application's last stage, entries and exit as the connector saw them, kept as long as an
 * application record (no name or e-mail in it). Each record is a conditional write on what the reader read.
 */
export class DynamoSeenChanges implements SeenChanges {
  private readonly client: DynamoDBClient;
  private readonly send: DynamoDBClient['send'] = ((command: never) =>
    this.client.send(command, { abortSignal: currentDeadline() })) as never;

  public constructor(
    private readonly table: string,
    client?: DynamoDBClient,
  ) {
    this.client = client ?? new DynamoDBClient(AWS_CLIENT_CONFIG);
  }

  public async watermark(connectionId: string): Promise<number | undefined> {
    const mark = (await this.item(markKey(connectionId)))?.mark;
    return typeof mark === 'number' ? mark : undefined;
  }

  public async advanceWatermark(connectionId: string, to: number): Promise<void> {
    await this.putIf({ pk: markKey(connectionId), mark: to }, 'attribute_not_exists(pk) OR mark < :to', { ':to': to });
  }

  public async resumePoint(connectionId: string): Promise<ResumePoint | undefined> {
    const item = (await this.item(resumeKey(connectionId))) as
      | (Partial<ResumePoint> & Record<string, unknown>)
      | undefined;
    // Past its TTL (DynamoDB removes expired items within days, not at once): gone.
    const ttl = item?.[MAPPING_TABLES.ttlAttribute];
    if (typeof ttl === 'number' && ttl * 1000 <= Date.now()) return undefined;
    return typeof item?.cursor === 'string' && typeof item.since === 'number' && typeof item.startedAt === 'number'
      ? { since: item.since, cursor: item.cursor, startedAt: item.startedAt }
      : undefined;
  }

  /** One item a connection, overwritten: no cursor in it once a read went to the end. */
  public async saveResumePoint(connectionId: string, point: ResumePoint | undefined): Promise<void> {
    const ttl = Math.floor(Date.now() / 1000) + RESUME_TTL_SECONDS;
    await this.send(
      new PutItemCommand({
        TableName: this.table,
        Item: marshall({ pk: resumeKey(connectionId), ...point, [MAPPING_TABLES.ttlAttribute]: ttl }),
      }),
    );
  }

  public async read(connectionId: string, ids: readonly string[]): Promise<Map<string, SeenApplication>> {
    const keys = [...new Set(ids)].map((id) => ({ pk: seenKey(connectionId, id) }));
    const found = new Map<string, SeenApplication>();
    for (const item of await batchGetAll(this.client, this.table, keys, { ConsistentRead: true })) {
      const seen = item as unknown as SeenApplication & { applicationId: string };
      found.set(seen.applicationId, { stageKey: seen.stageKey, entries: seen.entries ?? 0, exit: seen.exit });
    }
    return found;
  }

  public record(
    connectionId: string,
    atsApplicationId: string,
    now: SeenApplication,
    before: SeenApplication,
  ): Promise<boolean> {
    const ttl = Math.floor(Date.now() / 1000) + RETENTION_DEFAULTS.applicationDays * 86_400;
    return this.putIf(
      {
        pk: seenKey(connectionId, atsApplicationId),
        applicationId: atsApplicationId,
        entries: now.entries,
        ...(now.stageKey === undefined ? {} : { stageKey: now.stageKey }),
        ...(now.exit === undefined ? {} : { exit: now.exit }),
        [MAPPING_TABLES.ttlAttribute]: ttl,
      },
      // Only over what this reader read: a concurrent read that recorded first wins, and its messages stand.
      before.entries === 0 && before.stageKey === undefined && before.exit === undefined
        ? 'attribute_not_exists(pk) OR entries = :entries'
        : 'entries = :entries',
      { ':entries': before.entries },
    );
  }

  /** One item of the table by its key, read consistently. */
  private async item(pk: string): Promise<Record<string, unknown> | undefined> {
    const answer = await this.send(
      new GetItemCommand({ TableName: this.table, Key: marshall({ pk }), ConsistentRead: true }),
    );
    return answer.Item ? unmarshall(answer.Item) : undefined;
  }

  private async putIf(item: Record<string, unknown>, condition: string, values: Record<string, unknown>) {
    try {
      await this.send(
        new PutItemCommand({
          TableName: this.table,
          Item: marshall(item),
          ConditionExpression: condition,
          ExpressionAttributeValues: marshall(values),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
