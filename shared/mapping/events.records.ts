import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { ApplicationClaimInput, DeliveryReplay, SweepProgress } from '../pipeline/ports';
import { MAPPING_TABLES } from './constants';

import { DynamoTables, EXIT_SEEN_SECONDS, exitSeenKey } from './dynamo-tables';

/** How long the stage names a worker read are used by the webhook function, at most (a stage may be renamed). */
const STAGE_NAMES_TTL_SECONDS = 24 * 3600;

/**
 * An application the ATS said left lately is claimed only once a read finds the candidate still in: checked in the
 * claim's transaction, so an exit marked before the claim is seen, and one marked after it finds the claim.
 */
export const exitSeenCheck = (table: string, input: ApplicationClaimInput, now: number) => ({
  ConditionCheck: {
    TableName: table,
    Key: marshall({ pk: exitSeenKey(input.connectionId, input.atsApplicationId) }),
    // TTL deletion lags; a mark past its time counts as gone; one older than a read that found the candidate in, too.
    ConditionExpression:
      'attribute_not_exists(pk) OR #expiresAt < :nowSeconds' +
      (input.exitReadAt === undefined ? '' : ' OR #seenAt < :readAt'),
    ExpressionAttributeNames: {
      '#expiresAt': MAPPING_TABLES.ttlAttribute,
      ...(input.exitReadAt === undefined ? {} : { '#seenAt': 'seenAt' }),
    },
    ExpressionAttributeValues: marshall({
      ':nowSeconds': Math.floor(now / 1000),
      ...(input.exitReadAt === undefined ? {} : { ':readAt': input.exitReadAt }),
    }),
  },
});

/** A connection's replay key seen `now`: refused while its TTL has not passed. */
interface ReplayKey extends DeliveryReplay {
  connectionId: string;
  now: number;
  /** This write's own mark: a put that landed and whose answer was lost is known by it on the SDK's retry. */
  writer: string;
}

/** The events-table key of a replay key. */
const replayKeyPk = (connectionId: string, key: string) => `replay#${connectionId}#${key}`;

/** The write of a replay key, on the condition it was not seen. */
function replayKeyPut(table: string, replay: ReplayKey) {
  const { connectionId, key, now, ttlSeconds, writer } = replay;
  return {
    TableName: table,
    Item: marshall({
      pk: replayKeyPk(connectionId, key),
      kind: 'replay-key',
      connectionId,
      seenAt: now,
      writer,
      [MAPPING_TABLES.ttlAttribute]: Math.floor(now / 1000) + ttlSeconds,
    }),
    // TTL deletion lags; an expired key counts as unseen.
    ConditionExpression: 'attribute_not_exists(pk) OR #expiresAt < :nowSeconds',
    ExpressionAttributeNames: { '#expiresAt': MAPPING_TABLES.ttlAttribute },
    ExpressionAttributeValues: marshall({ ':nowSeconds': Math.floor(now / 1000) }),
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

/** The events table's records: replay keys, stage names, parked reports, sweep progress. */
export class DynamoEventRecords extends DynamoTables {
  public async rememberReplayKey(connectionId: string, key: string, now: number, ttlSeconds: number): Promise<boolean> {
    const writer = randomUUID();
    try {
      const put = replayKeyPut(this.tables.events, { connectionId, key, now, ttlSeconds, writer });
      await this.send(new PutItemCommand(put));
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // The SDK retried a put that landed (its answer lost): the key found is this delivery's own, not a replay.
      return error.Item !== undefined && unmarshall(error.Item).writer === writer;
    }
  }

  public async noteExitSeen(connectionId: string, atsApplicationId: string, now: number): Promise<void> {
    await this.send(
      new PutItemCommand({
        TableName: this.tables.events,
        Item: marshall({
          pk: exitSeenKey(connectionId, atsApplicationId),
          kind: 'exit-seen',
          connectionId,
          seenAt: now,
          [MAPPING_TABLES.ttlAttribute]: Math.floor(now / 1000) + EXIT_SEEN_SECONDS,
        }),
      }),
    );
  }

  public async exitSeenAt(connectionId: string, atsApplicationId: string, now: number): Promise<number | undefined> {
    const result = await this.send(
      new GetItemCommand({
        TableName: this.tables.events,
        Key: marshall({ pk: exitSeenKey(connectionId, atsApplicationId) }),
        ConsistentRead: true,
      }),
    );
    const item = result.Item ? unmarshall(result.Item) : undefined;
    // TTL deletion lags: a mark past its time is gone.
    if (!item || Number(item[MAPPING_TABLES.ttlAttribute]) < Math.floor(now / 1000)) return undefined;
    return Number(item.seenAt);
  }

  public async forgetReplayKey(connectionId: string, key: string): Promise<void> {
    await this.send(
      new DeleteItemCommand({ TableName: this.tables.events, Key: marshall({ pk: replayKeyPk(connectionId, key) }) }),
    );
  }

  public async rememberStageNames(connectionId: string, names: Record<string, string>, now: number): Promise<void> {
    await this.send(
      new PutItemCommand({
        TableName: this.tables.events,
        Item: marshall({
          pk: `stage-names#${connectionId}`,
          kind: 'stage-names',
          connectionId,
          names,
          [MAPPING_TABLES.ttlAttribute]: Math.floor(now / 1000) + STAGE_NAMES_TTL_SECONDS,
        }),
      }),
    );
  }

  public async stageNames(connectionId: string, now: number): Promise<Record<string, string> | undefined> {
    const result = await this.send(
      new GetItemCommand({ TableName: this.tables.events, Key: marshall({ pk: `stage-names#${connectionId}` }) }),
    );
    const item = result.Item ? unmarshall(result.Item) : undefined;
    // TTL deletion lags: names past their day are not used.
    const expiresAt = Number(item?.[MAPPING_TABLES.ttlAttribute] ?? 0);
    if (!item || expiresAt < Math.floor(now / 1000) || typeof item.names !== 'object') return undefined;
    return Object.fromEntries(
      Object.entries(item.names as Record<string, unknown>).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string',
      ),
    );
  }

  /** Reports parked as unmatched, every page of them (`npm run ops -- unmatched`). */
  public listParkedReports(connectionId?: string): Promise<Record<string, unknown>[]> {
    return this.scanAll<Record<string, unknown>>({
      TableName: this.tables.events,
      FilterExpression: connectionId ? 'kind = :k AND connectionId = :c' : 'kind = :k',
      ExpressionAttributeValues: marshall(
        connectionId ? { ':k': 'unmatched-report', ':c': connectionId } : { ':k': 'unmatched-report' },
      ),
    });
  }

  /** One parked report, read by its key (`npm run ops -- match`). */
  public async parkedReport(connectionId: string, reportId: string): Promise<Record<string, unknown> | undefined> {
    const result = await this.send(
      new GetItemCommand({
        TableName: this.tables.events,
        Key: marshall({ pk: `unmatched#${connectionId}#${reportId}` }),
        ConsistentRead: true,
      }),
    );
    return result.Item ? unmarshall(result.Item) : undefined;
  }

  public async unparkReport(connectionId: string, reportId: string): Promise<void> {
    await this.send(
      new DeleteItemCommand({
        TableName: this.tables.events,
        Key: marshall({ pk: `unmatched#${connectionId}#${reportId}` }),
      }),
    );
  }

  public async getSweepProgress(connectionId: string, triggerId: string): Promise<SweepProgress | undefined> {
    const result = await this.send(
      new GetItemCommand({
        TableName: this.tables.events,
        Key: marshall({ pk: `sweep#${connectionId}#${triggerId}` }),
        ConsistentRead: true,
      }),
    );
    if (!result.Item) return undefined;
    const { cursor, startedAt, completedAt, found } = unmarshall(result.Item) as SweepProgress;
    return { cursor, startedAt, completedAt, found };
  }

  public async saveSweepProgress(connectionId: string, triggerId: string, progress: SweepProgress): Promise<void> {
    await this.send(
      new PutItemCommand({
        TableName: this.tables.events,
        Item: marshall({ pk: `sweep#${connectionId}#${triggerId}`, ...progress }, { removeUndefinedValues: true }),
      }),
    );
  }

  public async isReportParked(connectionId: string, reportId: string): Promise<boolean> {
    const result = await this.send(
      new GetItemCommand({
        TableName: this.tables.events,
        Key: marshall({ pk: `unmatched#${connectionId}#${reportId}` }),
        ProjectionExpression: 'pk',
      }),
    );
    return result.Item !== undefined;
  }

  public async parkUnmatchedReport(
    connectionId: string,
    report: { reportId: string; interviewId: string; candidateId: string },
    reason: string,
    now: number,
  ): Promise<void> {
    await this.send(
      new PutItemCommand({
        TableName: this.tables.events,
        Item: marshall({
          pk: `unmatched#${connectionId}#${report.reportId}`,
          kind: 'unmatched-report',
          connectionId,
          ...report,
          reason,
          parkedAt: now,
          [MAPPING_TABLES.ttlAttribute]: this.expiry(now, this.eventDays),
        }),
      }),
    );
  }
}
