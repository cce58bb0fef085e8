import {
  type AttributeValue,
  BatchGetItemCommand,
  type DynamoDBClient,
  type KeysAndAttributes,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  type ScanCommandInput,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { currentDeadline } from '../aws/deadline';
import { sleep } from '../http/retry';

/** A paged read went past its cap: it fails, naming what it read, instead of answering from part of the list. */
export class PageCapError extends Error {
  public readonly code = 'page-cap';
  public readonly retryable = false;

  public constructor(what: string, maxPages: number) {
    super(`${what}: more than ${maxPages} pages; not read further`);
    this.name = 'PageCapError';
  }
}

/** The deadline came between two pages: the read stops there, and the work is retried whole. */
export class DeadlineReachedError extends Error {
  public readonly code = 'deadline-reached';
  public readonly retryable = true;

  public constructor(what: string, pagesRead: number) {
    super(`${what}: the deadline came after ${pagesRead} page(s); not read further`);
    this.name = 'DeadlineReachedError';
  }
}

export interface PagedRead {
  client: Pick<DynamoDBClient, 'send'>;
  /** Items per page (DynamoDB's own 1 MB pages when absent). */
  pageSize: number | undefined;
  maxPages: number;
  /** What is read, for errors: e.g. "Query byInterview". */
  what: string;
}

/**
 * Every page of a Query or a Scan, one request at a time. Each request is aborted with the worker's deadline
 * (shared/aws/deadline.ts) and none starts after it (DeadlineReachedError); past `maxPages` the read fails
 * (PageCapError) rather than answer from part of the list.
 */
export async function* pages<T>(
  read: PagedRead,
  command: { query: QueryCommandInput } | { scan: ScanCommandInput },
): AsyncGenerator<T[]> {
  const signal = currentDeadline();
  let startKey: Record<string, AttributeValue> | undefined;
  for (let page = 0; ; page++) {
    if (page >= read.maxPages) throw new PageCapError(read.what, read.maxPages);
    if (signal?.aborted) throw new DeadlineReachedError(read.what, page);
    const paging = { ExclusiveStartKey: startKey, Limit: read.pageSize };
    const request =
      'query' in command
        ? new QueryCommand({ ...command.query, ...paging })
        : new ScanCommand({ ...command.scan, ...paging });
    const result = await read.client.send(request as QueryCommand, { abortSignal: signal });
    yield (result.Items ?? []).map((item) => unmarshall(item) as T);
    startKey = result.LastEvaluatedKey;
    if (!startKey) return;
  }
}

/** Every item of a paged read, in order. */
export async function readAll<T>(
  read: PagedRead,
  command: { query: QueryCommandInput } | { scan: ScanCommandInput },
): Promise<T[]> {
  const items: T[] = [];
  for await (const page of pages<T>(read, command)) items.push(...page);
  return items;
}

/** BatchGetItem reads at most 100 keys a request. */
const GET_BATCH = 100;
const UNPROCESSED_ROUNDS = 5;

/**
 * Every item of `keys` in `table` that exists, 100 keys a request (BatchGetItem's limit), within the caller's deadline;
 * keys DynamoDB leaves unprocessed (a throttled partition) are asked for again after a growing, jittered wait (up to
 * 50, 100, 200, 400 ms: AWS's advice for unprocessed keys), 5 rounds at most, then the read fails saying how many were
 * left, never answering part of the list.
 */
export async function batchGetAll(
  client: Pick<DynamoDBClient, 'send'>,
  table: string,
  keys: readonly Record<string, unknown>[],
  options: Omit<KeysAndAttributes, 'Keys'> = {},
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  const signal = currentDeadline();
  for (let start = 0; start < keys.length; start += GET_BATCH) {
    let pending = keys.slice(start, start + GET_BATCH).map((key) => marshall(key));
    for (let round = 1; pending.length; round++) {
      if (round > UNPROCESSED_ROUNDS) throw new Error(`DynamoDB left ${pending.length} keys of ${table} unprocessed`);
      // A deadline that comes during the wait ends it; the check below then stops the read.
      if (round > 1) await sleep(Math.random() * 25 * 2 ** (round - 1), signal).catch(() => undefined);
      if (signal?.aborted) throw new DeadlineReachedError(`BatchGetItem ${table}`, start / GET_BATCH);
      const answer = await client.send(
        new BatchGetItemCommand({ RequestItems: { [table]: { ...options, Keys: pending } } }),
        { abortSignal: signal },
      );
      found.push(...(answer.Responses?.[table] ?? []).map((item) => unmarshall(item)));
      pending = (answer.UnprocessedKeys?.[table]?.Keys ?? []) as Record<string, AttributeValue>[];
    }
  }
  return found;
}
