import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type QueryCommandInput,
  type ScanCommandInput,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { ApplicationKey, ApplicationRecord, JobKey } from '../pipeline/records';
import { MAPPING_TABLES, MAX_QUERY_PAGES, RETENTION_DEFAULTS } from './constants';
import { LeaseLostError } from './errors';
import { updateWhen } from './conditional-update';
import { buildUpdate, withNames } from './expressions';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import { type PagedRead, pages, readAll } from './paging';
import { toApplication } from './legacy-steps';

export interface MappingTableNames {
  jobs: string;
  applications: string;
  events: string;
  /** The assessment orders: a candidate's purge deletes theirs (none where it is not given). */
  orders?: string | undefined;
}

/**
 * The events-table key that marks an application the ATS said left the process (rejected, withdrew, hired): a stage
 * change of it claimed while the mark lasts is confirmed by a read first (a delivery late, retried or deferred).
 */
export const exitSeenKey = (connectionId: string, atsApplicationId: string) =>
  `exit#${connectionId}#${atsApplicationId}`;

/** How long an exit's mark lasts: past the ATSs' documented webhook retries (Greenhouse's, about 15 h) and queues. */
export const EXIT_SEEN_SECONDS = 3 * 24 * 3600;

/** The events-table key that marks a candidate the ATS deleted. */
export const tombstoneKey = (connectionId: string, atsCandidateId: string) =>
  `deleted#${connectionId}#${atsCandidateId}`;

export interface DynamoMappingStoreOptions {
  tables: MappingTableNames;
  client?: DynamoDBClient;
  retention?: { applicationDays?: number; eventDays?: number };
  /** Items per Query or Scan page (DynamoDB's own 1 MB pages when absent) and the page cap; tests set both. */
  paging?: { pageSize?: number; maxPages?: number };
}

export const jobPk = (key: JobKey): string => `${key.connectionId}#${key.atsJobId}#${key.triggerId}`;
export const applicationKeyFields = (key: ApplicationKey): { pk: string; sk: string } => ({
  pk: `${key.connectionId}#${key.atsApplicationId}`,
  sk: key.triggerId,
});
export const applicationKey = (key: ApplicationKey): Record<string, AttributeValue> =>
  marshall(applicationKeyFields(key));
export const DAY_SECONDS = 86_400;

/** The mapping tables on DynamoDB; every state change is a conditional write. */ /**
 * What every record kind's repository shares: the client (each call aborted with the worker's deadline), the table
 * names and retention, conditional updates, paged reads, and the application reads other kinds build on.
 */
export class DynamoTables {
  protected readonly client: DynamoDBClient;

  protected readonly tables: MappingTableNames;

  protected readonly applicationDays: number;

  protected readonly eventDays: number;

  protected readonly paging: { pageSize: number | undefined; maxPages: number };

  /** Every call aborts with the worker's deadline (shared/aws/deadline.ts). */
  protected readonly send: DynamoDBClient['send'] = ((command: never) =>
    this.client.send(command, { abortSignal: currentDeadline() })) as never;

  public constructor(options: DynamoMappingStoreOptions) {
    this.client = options.client ?? new DynamoDBClient(AWS_CLIENT_CONFIG);
    this.paging = { pageSize: options.paging?.pageSize, maxPages: options.paging?.maxPages ?? MAX_QUERY_PAGES };
    this.tables = options.tables;
    this.applicationDays = options.retention?.applicationDays ?? RETENTION_DEFAULTS.applicationDays;
    this.eventDays = options.retention?.eventDays ?? RETENTION_DEFAULTS.eventDays;
  }

  public async getApplication(key: ApplicationKey): Promise<ApplicationRecord | undefined> {
    const result = await this.send(
      new GetItemCommand({ TableName: this.tables.applications, Key: applicationKey(key), ConsistentRead: true }),
    );
    return result.Item ? toApplication(unmarshall(result.Item)) : undefined;
  }

  public findApplicationsByAtsId(connectionId: string, atsApplicationId: string): Promise<ApplicationRecord[]> {
    return this.queryAll({
      TableName: this.tables.applications,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: marshall({ ':pk': `${connectionId}#${atsApplicationId}` }),
      ConsistentRead: true,
    });
  }

  /** A conditional write whose condition is the item's existence: an item gone is nothing to record. */
  protected async ifExists(command: UpdateItemCommand): Promise<void> {
    try {
      await this.send(command);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** A conditional update of an application: true when it was made, false when the condition did not hold. */
  protected async updateApplicationIf(
    key: ApplicationKey,
    update: ReturnType<typeof buildUpdate>,
    condition: string,
  ): Promise<boolean> {
    try {
      await this.send(
        new UpdateItemCommand({
          TableName: this.tables.applications,
          Key: applicationKey(key),
          ...update,
          ConditionExpression: condition,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /**
   * A conditional update of an application: `updated` is the item as updated; when the condition did not hold,
   * `refused` is the item as it stood (undefined when there was none).
   */
  protected async updateApplicationWhen(
    key: ApplicationKey,
    update: ReturnType<typeof buildUpdate>,
    condition: string,
  ): Promise<{ updated: ApplicationRecord } | { refused: ApplicationRecord | undefined }> {
    const target = { TableName: this.tables.applications, Key: applicationKey(key), ConditionExpression: condition };
    return updateWhen(this.send, target, update, toApplication);
  }

  /** An update of an application only its claim's holder may make (a lost lease is a LeaseLostError). */
  protected async updateHeldApplication(
    key: ApplicationKey,
    owner: string,
    parts: { set: Record<string, unknown>; remove: string[] },
  ): Promise<void> {
    await this.updateIfHeld(
      { TableName: this.tables.applications, Key: applicationKey(key) },
      withNames(buildUpdate({ ...parts, extraValues: { ':owner': owner } }), 'leaseOwner'),
      `application ${key.atsApplicationId}`,
    );
  }

  /**
   * An update only the lease's holder may make (`update` names `#leaseOwner` and `:owner`); a lost lease is a
   * LeaseLostError naming `what`. Answers the item as updated.
   */
  protected async updateIfHeld(
    item: { TableName: string; Key: Record<string, AttributeValue> },
    update: ReturnType<typeof buildUpdate>,
    what: string,
  ): Promise<Record<string, AttributeValue>> {
    try {
      const result = await this.send(
        new UpdateItemCommand({
          ...item,
          ...update,
          ConditionExpression: '#leaseOwner = :owner',
          ReturnValues: 'ALL_NEW',
        }),
      );
      return result.Attributes ?? {};
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new LeaseLostError(what);
      throw error;
    }
  }

  /** Applications found by a Query, each read as one record with its steps (legacy-steps.ts). */
  protected async queryAll(input: QueryCommandInput): Promise<ApplicationRecord[]> {
    const items = await readAll<Record<string, unknown>>(this.read(`Query ${input.IndexName ?? input.TableName}`), {
      query: input,
    });
    return items.map(toApplication);
  }

  protected scanAll<T>(input: ScanCommandInput): Promise<T[]> {
    return readAll(this.read(`Scan ${input.TableName}`), { scan: input });
  }

  protected read(what: string): PagedRead {
    return { client: this.client, pageSize: this.paging.pageSize, maxPages: this.paging.maxPages, what };
  }

  /** Calls `each` with every page of the keys of a candidate's applications (the candidate index projects keys). */
  protected forEachCandidateKeys(
    connectionId: string,
    atsCandidateId: string,
    each: (keys: { pk: string; sk: string }[]) => Promise<void> | void,
  ): Promise<void> {
    const { name, partitionKey } = MAPPING_TABLES.applications.candidateIndex;
    const index = { table: this.tables.applications, name, partitionKey };
    return this.forEachIndexKeys(
      index,
      `${connectionId}#${atsCandidateId}`,
      `applications of candidate ${atsCandidateId}`,
      each,
    );
  }

  /**
   * Calls `each` with every page of the keys a keys-only index holds under one partition key (and, where the index
   * has a sort key and `key` gives a range, its sort keys from `from` to `to`, both included).
   */
  protected async forEachIndexKeys<K>(
    index: { table: string; name: string; partitionKey: string; sortKey?: string },
    key: string | { partition: string; from: string; to: string },
    what: string,
    each: (keys: K[]) => Promise<void> | void,
  ): Promise<void> {
    const range = typeof key === 'string' || !index.sortKey ? undefined : { name: index.sortKey, ...key };
    const query = {
      TableName: index.table,
      IndexName: index.name,
      KeyConditionExpression: range ? '#p = :c AND #s BETWEEN :from AND :to' : '#p = :c',
      ExpressionAttributeNames: { '#p': index.partitionKey, ...(range ? { '#s': range.name } : {}) },
      ExpressionAttributeValues: marshall({
        ':c': typeof key === 'string' ? key : key.partition,
        ...(range ? { ':from': range.from, ':to': range.to } : {}),
      }),
    };
    for await (const page of pages<K>(this.read(`the ${what}`), { query })) await each(page);
  }

  protected expiry(now: number, days: number): number {
    return Math.floor(now / 1000) + days * DAY_SECONDS;
  }
}
