import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  ConditionalCheckFailedException,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { randomBytes } from 'node:crypto';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { MAPPING_TABLES, RETENTION_DEFAULTS } from './constants';
import { batchGetAll } from './paging';

/**
 * What operators see of the pipeline in the console, kept in the activity table: each connection's counts of the
 * day with its last webhook and write-back, each application's timeline (deliveries, deferrals with their reasons,
 * failed attempts), the doctor's last result, and the customers' one-time connect links. Every item expires by TTL.
 */
export const ACTIVITY_COUNTS = ['Invited', 'WrittenBack', 'Failed', 'Deferred', 'DeadLettered'] as const;
export type ActivityCount = (typeof ACTIVITY_COUNTS)[number];

/** One connection's day: its counts, when its last webhook came and its last result was written back. */
export interface ActivityDay {
  connectionId: string;
  day: string;
  counts: Partial<Record<ActivityCount, number>>;
  lastWebhookAt?: number | undefined;
  lastWriteBackAt?: number | undefined;
}

/** One moment of an application's timeline that the mapping tables do not keep. */
export interface TimelineEntry {
  connectionId: string;
  atsApplicationId: string;
  at: number;
  kind: 'webhook' | 'deferred' | 'attempt-failed' | 'dead-lettered' | 'operator';
  /** What happened, for the operator: never a candidate's name or e-mail. */
  detail: string;
  /** The error code or reason, where there is one. */
  code?: string | undefined;
  /** What makes the entry one: noted again with the same key and time, it is the same entry (never read back). */
  key?: string | undefined;
}

/** The doctor's last result for a connection. */
export interface DoctorResult {
  connectionId: string;
  at: number;
  principal: string;
  lines: { status: 'pass' | 'fail' | 'info'; what: string; fix?: string | undefined }[];
}

/** A customer's one-time connect link, found by the hash of its token (the token itself is never stored). */
export interface ConnectLink {
  connectionId: string;
  createdBy: string;
  createdAt: number;
  /** When the link stops working (epoch ms); the item's TTL follows it. */
  validUntil: number;
  /** When the customer finished: the link answers nothing after it. */
  usedAt?: number | undefined;
  /** The connection's version when it was made: one deleted and made again under its id is not this link's. */
  connectionVersion?: number | undefined;
  /** When its connection was made (`StoredConnection.createdAt`): one made again under the id has another. */
  connectionCreatedAt?: number | undefined;
}

const TIMELINE_LIMIT = 200;
const DAY_RETENTION_DAYS = 35;
/** BatchWriteItem writes 25 items a request. */
const WRITE_BATCH = 25;
const UNPROCESSED_ROUNDS = 5;

const seconds = (ms: number) => Math.floor(ms / 1000);
export const dayOf = (at: number): string => new Date(at).toISOString().slice(0, 10);

export class DynamoActivity {
  private readonly client: DynamoDBClient;

  public constructor(
    private readonly table: string,
    client?: DynamoDBClient,
  ) {
    this.client = client ?? new DynamoDBClient(AWS_CLIENT_CONFIG);
  }

  /** Adds to a connection's counts of the day and sets its last webhook and write-back: one write. */
  public async addDay(
    connectionId: string,
    at: number,
    counts: Partial<Record<ActivityCount, number>>,
    last: { webhookAt?: number | undefined; writeBackAt?: number | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<void> {
    const names: Record<string, string> = { '#ttl': MAPPING_TABLES.ttlAttribute };
    const values: Record<string, unknown> = { ':ttl': seconds(at) + DAY_RETENTION_DAYS * 86_400 };
    const add: string[] = [];
    for (const [name, n] of Object.entries(counts)) {
      if (!n) continue;
      names[`#${name}`] = name;
      values[`:${name}`] = n;
      add.push(`#${name} :${name}`);
    }
    const set = ['#ttl = :ttl'];
    if (last.webhookAt) set.push('lastWebhookAt = :webhookAt');
    if (last.writeBackAt) set.push('lastWriteBackAt = :writeBackAt');
    if (last.webhookAt) values[':webhookAt'] = last.webhookAt;
    if (last.writeBackAt) values[':writeBackAt'] = last.writeBackAt;
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.table,
        Key: marshall({ pk: `day#${connectionId}`, sk: dayOf(at) }),
        UpdateExpression: `SET ${set.join(', ')}${add.length ? ` ADD ${add.join(', ')}` : ''}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: marshall(values),
      }),
      { abortSignal: last.signal },
    );
  }

  /** Each connection's day (a connection with nothing that day is left out). */
  public async days(connectionIds: readonly string[], day: string): Promise<ActivityDay[]> {
    const items = await this.getAll(connectionIds.map((id) => ({ pk: `day#${id}`, sk: day })));
    return items.map((item) => ({
      connectionId: String(item.pk).slice('day#'.length),
      day: String(item.sk),
      counts: Object.fromEntries(ACTIVITY_COUNTS.filter((c) => typeof item[c] === 'number').map((c) => [c, item[c]])),
      lastWebhookAt: typeof item.lastWebhookAt === 'number' ? item.lastWebhookAt : undefined,
      lastWriteBackAt: typeof item.lastWriteBackAt === 'number' ? item.lastWriteBackAt : undefined,
    }));
  }

  /** Adds entries to their applications' timelines, 25 to a request. */
  public async addTimeline(entries: readonly TimelineEntry[], signal?: AbortSignal): Promise<void> {
    const ttl = seconds(Date.now()) + RETENTION_DEFAULTS.eventDays * 86_400;
    for (let i = 0; i < entries.length; i += WRITE_BATCH) {
      let requests = entries.slice(i, i + WRITE_BATCH).map(({ key, ...e }) => ({
        PutRequest: {
          Item: marshall(
            {
              ...e,
              pk: timelineKey(e.connectionId, e.atsApplicationId),
              sk: `${new Date(e.at).toISOString()}#${key ?? randomBytes(3).toString('hex')}`,
              [MAPPING_TABLES.ttlAttribute]: ttl,
            },
            { removeUndefinedValues: true },
          ),
        },
      }));
      for (let round = 0; requests.length && round < UNPROCESSED_ROUNDS; round++) {
        const answer = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: requests } }), {
          abortSignal: signal,
        });
        requests = (answer.UnprocessedItems?.[this.table] ?? []) as typeof requests;
      }
    }
  }

  /** An application's timeline, oldest first (the newest `TIMELINE_LIMIT`). */
  public async timeline(connectionId: string, atsApplicationId: string): Promise<TimelineEntry[]> {
    const answer = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': timelineKey(connectionId, atsApplicationId) }),
        ScanIndexForward: false,
        Limit: TIMELINE_LIMIT,
      }),
    );
    return (answer.Items ?? [])
      .map((item) => {
        const { pk: _pk, sk: _sk, [MAPPING_TABLES.ttlAttribute]: _ttl, ...entry } = unmarshall(item);
        return entry as TimelineEntry;
      })
      .reverse();
  }

  public async putDoctor(result: DoctorResult): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.table,
        Item: marshall(
          {
            pk: `doctor#${result.connectionId}`,
            sk: 'latest',
            at: result.at,
            principal: result.principal,
            lines: JSON.stringify(result.lines),
            [MAPPING_TABLES.ttlAttribute]: seconds(result.at) + 90 * 86_400,
          },
          { removeUndefinedValues: true },
        ),
      }),
    );
  }

  /** The doctor's last result of each connection that has one. */
  public async doctors(connectionIds: readonly string[]): Promise<DoctorResult[]> {
    const items = await this.getAll(connectionIds.map((id) => ({ pk: `doctor#${id}`, sk: 'latest' })));
    return items.map((item) => ({
      connectionId: String(item.pk).slice('doctor#'.length),
      at: Number(item.at),
      principal: String(item.principal),
      lines: JSON.parse(String(item.lines)) as DoctorResult['lines'],
    }));
  }

  /**
   * Stores a new link and makes it its connection's current one: answers the hash of the one it replaces, for the
   * caller to spend (a link made again is most often made because the first went to the wrong person).
   */
  public async putLink(hash: string, link: ConnectLink): Promise<string | undefined> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.table,
        Item: marshall(
          {
            pk: `link#${hash}`,
            sk: 'link',
            ...link,
            [MAPPING_TABLES.ttlAttribute]: seconds(link.validUntil),
          },
          { removeUndefinedValues: true },
        ),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    const replaced = await this.client.send(
      new PutItemCommand({
        TableName: this.table,
        Item: marshall({
          pk: `linkof#${link.connectionId}`,
          sk: 'current',
          hash,
          [MAPPING_TABLES.ttlAttribute]: seconds(link.validUntil),
        }),
        ReturnValues: 'ALL_OLD',
      }),
    );
    const previous = replaced.Attributes ? unmarshall(replaced.Attributes).hash : undefined;
    return typeof previous === 'string' ? previous : undefined;
  }

  /** The link of this token's hash, while it is unused and unexpired. */
  public async link(hash: string, now: number): Promise<ConnectLink | undefined> {
    const answer = await this.client.send(
      new GetItemCommand({
        TableName: this.table,
        Key: marshall({ pk: `link#${hash}`, sk: 'link' }),
        ConsistentRead: true,
      }),
    );
    if (!answer.Item) return undefined;
    const link = unmarshall(answer.Item) as ConnectLink;
    return link.usedAt !== undefined || link.validUntil <= now ? undefined : link;
  }

  /** Marks the link used: true for the one caller that did; it answers nothing after. */
  public async useLink(hash: string, now: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: marshall({ pk: `link#${hash}`, sk: 'link' }),
          UpdateExpression: 'SET usedAt = :now',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(usedAt) AND validUntil > :now',
          ExpressionAttributeValues: marshall({ ':now': now }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  private readonly getAll = (keys: Record<string, unknown>[]) => batchGetAll(this.client, this.table, keys);

  public async removeLink(hash: string): Promise<void> {
    await this.client.send(
      new DeleteItemCommand({ TableName: this.table, Key: marshall({ pk: `link#${hash}`, sk: 'link' }) }),
    );
  }
}

const timelineKey = (connectionId: string, atsApplicationId: string) => `app#${connectionId}#${atsApplicationId}`;
