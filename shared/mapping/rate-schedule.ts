import { ConditionalCheckFailedException, DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { RateSchedule } from '../ats/pacer';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import { MAPPING_TABLES } from './constants';

/** A schedule item outlives any burst; TTL deletes it a day after its last turn. */
const SCHEDULE_TTL_SECONDS = 86_400;
/** Two writers racing on an idle schedule: the loser reads it as busy the next time round. */
const MAX_TRIES = 4;

/**
 * Each connection's schedule of ATS turns on the events table (`pace#<connection>`, `nextFreeAt` in epoch ms): one
 * conditional UpdateItem a reservation. A busy schedule (free from a later moment) is pushed on by the span and
 * answers where it stood; an idle one (free since before `notBefore`) starts again at `notBefore`.
 */
export class DynamoRateSchedule implements RateSchedule {
  private readonly client: DynamoDBClient;
  private readonly table: string;
  /** Whether the last reservation found the schedule idle: the likelier branch is tried first. */
  private idleLast = true;

  public constructor(options: { table: string; client?: DynamoDBClient }) {
    this.client = options.client ?? new DynamoDBClient(AWS_CLIENT_CONFIG);
    this.table = options.table;
  }

  public async reserve(connectionId: string, spanMs: number, notBefore: number): Promise<number> {
    const span = Math.max(0, Math.round(spanMs));
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      const idle = attempt % 2 === 0 ? this.idleLast : !this.idleLast;
      const start = idle
        ? await this.restart(connectionId, span, notBefore)
        : await this.pushOn(connectionId, span, notBefore);
      if (start !== undefined) {
        this.idleLast = idle;
        return start;
      }
    }
    throw new Error(`the rate schedule of connection ${connectionId} changed under ${MAX_TRIES} reservations`);
  }

  /** The schedule is free from `notBefore` or later: pushed on by `span`; its old free moment is the turn. */
  private async pushOn(connectionId: string, span: number, notBefore: number): Promise<number | undefined> {
    const result = await this.update(connectionId, {
      UpdateExpression: 'SET nextFreeAt = nextFreeAt + :span, #ttl = :ttl',
      ConditionExpression: 'nextFreeAt >= :notBefore',
      ExpressionAttributeValues: marshall({ ':span': span, ':notBefore': notBefore, ':ttl': ttlAfter(notBefore) }),
      ReturnValues: 'UPDATED_OLD',
    });
    const old = result?.Attributes?.nextFreeAt?.N;
    return old === undefined ? undefined : Number(old);
  }

  /** The schedule is idle (or new): it starts again at `notBefore`, which is the turn. */
  private async restart(connectionId: string, span: number, notBefore: number): Promise<number | undefined> {
    const result = await this.update(connectionId, {
      UpdateExpression: 'SET nextFreeAt = :end, #ttl = :ttl',
      ConditionExpression: 'attribute_not_exists(nextFreeAt) OR nextFreeAt < :notBefore',
      ExpressionAttributeValues: marshall({
        ':end': notBefore + span,
        ':notBefore': notBefore,
        ':ttl': ttlAfter(notBefore),
      }),
    });
    return result ? notBefore : undefined;
  }

  private async update(
    connectionId: string,
    input: Omit<ConstructorParameters<typeof UpdateItemCommand>[0], 'TableName' | 'Key'>,
  ) {
    try {
      return await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: marshall({ pk: `pace#${connectionId}` }),
          ExpressionAttributeNames: { '#ttl': MAPPING_TABLES.ttlAttribute },
          ...input,
        }),
        { abortSignal: currentDeadline() },
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }
}

const ttlAfter = (at: number) => Math.floor(at / 1000) + SCHEDULE_TTL_SECONDS;
