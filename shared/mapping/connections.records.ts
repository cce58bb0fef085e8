import {
  type AttributeValue,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { randomUUID } from 'node:crypto';
import type { ConnectionReader, StoredConnection } from '../config/connection-source';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import { SAFE_ID_PATTERN } from '../validation/ids';

/** A write named a version the connection no longer has (or a connection that exists, or does not): 409. */
export class VersionConflictError extends Error {
  public readonly code = 'version-conflict';
  public readonly retryable = false;

  public constructor(
    id: string,
    public readonly current: number | undefined,
  ) {
    super(
      current === undefined
        ? `connection ${id} does not exist`
        : `connection ${id} is at version ${current}: read it again and apply the change to that version`,
    );
    this.name = 'VersionConflictError';
  }
}

/** One change to a connection, as the audit keeps it. */
export interface ConnectionAudit {
  connectionId: string;
  /** ISO time and a random suffix: the audit's sort key, newest last. */
  at: string;
  principal: string;
  action: 'create' | 'replace' | 'patch' | 'disable' | 'enable' | 'delete' | 'import' | 'rotate-keys';
  /** The top-level fields that changed (never their values: a document may name secrets' references). */
  changed: string[];
  /** The version the change made (the deleted one for a delete). */
  version: number;
  /** A delete's: the digest of the file's copy the connection was last imported from, where it was. */
  fileDigest?: string;
}

export interface ConnectionChange {
  principal: string;
  action: ConnectionAudit['action'];
  /** The version the writer read: the write is refused (VersionConflictError) when the connection is elsewhere. */
  expectedVersion?: number | undefined;
  /** Only when the connection does not exist yet (a create, or an import that never overwrites). */
  createOnly?: boolean;
}

export interface ConnectionPage {
  connections: StoredConnection[];
  /** Where the next page starts; undefined on the last. */
  cursor: string | undefined;
}

/**
 * Connections in DynamoDB, one item per connection (`id`), and the audit of every change (`connectionId`, `at`) in a
 * table of its own, so paging the connections reads no audit. Each change writes both in one transaction, on the
 * condition that the connection is at the version the writer read.
 */
export class DynamoConnectionStore implements ConnectionReader {
  private readonly client: DynamoDBClient;

  public constructor(
    private readonly options: { tables: { connections: string; audit: string }; client?: DynamoDBClient },
  ) {
    this.client = options.client ?? new DynamoDBClient(AWS_CLIENT_CONFIG);
  }

  /** One GetItem: what a function's cold start reads for the connection it serves. */
  public async read(id: string, consistent = false): Promise<StoredConnection | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.options.tables.connections,
        Key: marshall({ id }),
        ConsistentRead: consistent,
      }),
      { abortSignal: currentDeadline() },
    );
    return result.Item ? toStored(result.Item) : undefined;
  }

  /**
   * A page of connections in the table's order, `limit` at most, after `cursor` (a page's answer, or the id of the
   * last connection taken). With `segment`, from that segment of a parallel scan only (DynamoDB's Segment of
   * TotalSegments): the reconciler's schedules each page their own.
   */
  public async page(limit: number, cursor?: string, segment?: { index: number; of: number }): Promise<ConnectionPage> {
    const result = await this.client.send(
      new ScanCommand({
        TableName: this.options.tables.connections,
        Limit: limit,
        ...(cursor ? { ExclusiveStartKey: marshall({ id: decodeCursor(cursor) }) } : {}),
        ...(segment && segment.of > 1 ? { Segment: segment.index, TotalSegments: segment.of } : {}),
      }),
      { abortSignal: currentDeadline() },
    );
    const last = result.LastEvaluatedKey ? (unmarshall(result.LastEvaluatedKey).id as string) : undefined;
    return { connections: (result.Items ?? []).map(toStored), cursor: last ? encodeCursor(last) : undefined };
  }

  /**
   * Writes the connection's document (validated by the caller) as the next version, with its audit record. Answers
   * the stored connection; a VersionConflictError when it is not at `expectedVersion` (or exists, for `createOnly`).
   */
  public async write(
    id: string,
    next: { document: unknown; enabled: boolean; changed: string[]; fileDigest?: string | undefined },
    change: ConnectionChange,
    current?: StoredConnection,
  ): Promise<StoredConnection> {
    const version = (current?.version ?? 0) + 1;
    const now = Date.now();
    const stored: StoredConnection = {
      id,
      document: next.document,
      version,
      enabled: next.enabled,
      createdAt: current?.createdAt ?? now,
      updatedAt: now,
      updatedBy: change.principal,
      // Kept through the console's and the admin API's writes: only an import says what the file holds.
      fileDigest: next.fileDigest ?? current?.fileDigest,
    };
    const condition = change.createOnly || !current ? 'attribute_not_exists(id)' : 'version = :version';
    await this.transact(id, change, current, [
      {
        Put: {
          TableName: this.options.tables.connections,
          Item: marshall({ ...stored, document: JSON.stringify(next.document) }, { removeUndefinedValues: true }),
          ConditionExpression: condition,
          ...(condition === 'version = :version'
            ? { ExpressionAttributeValues: marshall({ ':version': change.expectedVersion ?? current?.version }) }
            : {}),
        },
      },
      this.auditPut(id, change, next.changed, { version }),
    ]);
    return stored;
  }

  /** Deletes the connection at `expectedVersion`, with its audit record. */
  public async remove(current: StoredConnection, change: ConnectionChange): Promise<void> {
    await this.transact(current.id, change, current, [
      {
        Delete: {
          TableName: this.options.tables.connections,
          Key: marshall({ id: current.id }),
          ConditionExpression: 'version = :version',
          ExpressionAttributeValues: marshall({ ':version': change.expectedVersion ?? current.version }),
        },
      },
      this.auditPut(current.id, change, ['*'], { version: current.version, fileDigest: current.fileDigest }),
    ]);
  }

  /** A connection's changes, newest first, `limit` at most. */
  public async audit(connectionId: string, limit = 100): Promise<ConnectionAudit[]> {
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.options.tables.audit,
        KeyConditionExpression: 'connectionId = :id',
        ExpressionAttributeValues: marshall({ ':id': connectionId }),
        ScanIndexForward: false,
        Limit: limit,
      }),
      { abortSignal: currentDeadline() },
    );
    return (result.Items ?? []).map((item) => unmarshall(item) as ConnectionAudit);
  }

  private auditPut(
    id: string,
    change: ConnectionChange,
    changed: string[],
    { version, fileDigest }: { version: number; fileDigest?: string | undefined },
  ) {
    const audit: ConnectionAudit = {
      connectionId: id,
      at: `${new Date().toISOString()}#${randomUUID().slice(0, 8)}`,
      principal: change.principal,
      action: change.action,
      changed,
      version,
      ...(fileDigest ? { fileDigest } : {}),
    };
    return { Put: { TableName: this.options.tables.audit, Item: marshall(audit) } };
  }

  private async transact(
    id: string,
    change: ConnectionChange,
    current: StoredConnection | undefined,
    items: NonNullable<ConstructorParameters<typeof TransactWriteItemsCommand>[0]['TransactItems']>,
  ): Promise<void> {
    if (change.expectedVersion !== undefined && change.expectedVersion !== (current?.version ?? 0))
      throw new VersionConflictError(id, current?.version);
    try {
      await this.client.send(new TransactWriteItemsCommand({ TransactItems: items }), {
        abortSignal: currentDeadline(),
      });
    } catch (error) {
      const refused =
        error instanceof TransactionCanceledException &&
        error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
      if (!refused) throw error;
      throw new VersionConflictError(id, (await this.read(id, true))?.version);
    }
  }
}

function toStored(item: Record<string, AttributeValue>): StoredConnection {
  const raw = unmarshall(item) as Omit<StoredConnection, 'document'> & { document?: unknown };
  let document: unknown;
  try {
    document = typeof raw.document === 'string' ? JSON.parse(raw.document) : raw.document;
  } catch {
    // Validated as what it is: the schema then names the problem.
    document = raw.document;
  }
  return {
    id: raw.id,
    document,
    version: Number(raw.version ?? 0),
    enabled: raw.enabled !== false,
    updatedAt: Number(raw.updatedAt ?? 0),
    updatedBy: String(raw.updatedBy ?? ''),
    ...(typeof raw.fileDigest === 'string' ? { fileDigest: raw.fileDigest } : {}),
    ...(typeof raw.createdAt === 'number' ? { createdAt: raw.createdAt } : {}),
  };
}

/** The cursor that starts a page right after the connection `id`. */
export const encodeCursor = (id: string) => Buffer.from(id, 'utf8').toString('base64url');
const decodeCursor = (cursor: string) => Buffer.from(cursor, 'base64url').toString('utf8');

/** The connection id a page's cursor starts after, or undefined where `cursor` is not one a page gave. */
export function cursorId(cursor: string): string | undefined {
  const id = decodeCursor(cursor);
  return SAFE_ID_PATTERN.test(id) && encodeCursor(id) === cursor ? id : undefined;
}

/**
 * Where the reconciler's next run starts paging the connections, one cursor per schedule segment, on the events
 * table (`reconcile-cursor#<segment>/<segments>`). A lost write only repeats some connections' turn.
 */
export class ReconcileCursor {
  private readonly client: DynamoDBClient;

  public constructor(private readonly options: { table: string; client?: DynamoDBClient }) {
    this.client = options.client ?? new DynamoDBClient(AWS_CLIENT_CONFIG);
  }

  public async read(segment: { index: number; of: number }): Promise<string | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.options.table, Key: marshall({ pk: cursorKey(segment) }) }),
      { abortSignal: currentDeadline() },
    );
    const after = result.Item ? unmarshall(result.Item).after : undefined;
    return typeof after === 'string' && after ? after : undefined;
  }

  /** `after` undefined: the next run starts again from the first connection. */
  public async save(segment: { index: number; of: number }, after: string | undefined): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.table,
        Item: marshall({ pk: cursorKey(segment), after: after ?? '', savedAt: Date.now() }),
      }),
      { abortSignal: currentDeadline() },
    );
  }
}

const cursorKey = (segment: { index: number; of: number }) => `reconcile-cursor#${segment.index}/${segment.of}`;
