import { ConditionalCheckFailedException, DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { RateSchedule } from '../pacing/schedule';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import { MAPPING_TABLES } from './constants';

/** Two writers racing on an idle schedule: the loser finds it busy the next time round. */
const MAX_TRIES = 4;

/**
 * Each connection's schedule of ATS turns on the events table (`pace#<connection>`, `nextFreeAt` in epoch ms), one
 * conditional UpdateItem a reservation: a busy schedule (free from `notBefore` or later) is pushed on by the span and
 * answers where it stood; an idle one starts again at `notBefore`.
 */
export class DynamoRateSchedule implements RateSchedule {
  private readonly client: DynamoDBClient;
  /** Whether the last reservation found the schedule idle: the likelier branch is tried first. */
  private idleLast = true;

  public constructor(private readonly options: { table: string; client?: DynamoDBClient }) {
    this.client = options.client ?? new DynamoDBClient(AWS_CLIENT_CONFIG);
  }

  public async reserve(connectionId: string, spanMs: number, notBefore: number, latest?: number): Promise<number> {
    const span = Math.max(0, Math.round(spanMs));
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      const idle = attempt % 2 === 0 ? this.idleLast : !this.idleLast;
      const start = idle
        ? await this.restart(connectionId, span, notBefore)
        : await this.pushOn(connectionId, span, notBefore, latest);
      if (start !== undefined) {
        this.idleLast = idle;
        return start;
      }
    }
    throw new Error(`the rate schedule of connection ${connectionId} changed under ${MAX_TRIES} reservations`);
  }

  /** Busy from `notBefore` or later (and free by `latest`, when given): pushed on; a later one only answered. */
  private async pushOn(id: string, span: number, notBefore: number, latest: number | undefined) {
    const bounded = latest !== undefined;
    const answer = await this.update(id, {
      UpdateExpression: 'SET nextFreeAt = nextFreeAt + :span, #ttl = :ttl',
      ConditionExpression: `nextFreeAt >= :notBefore${bounded ? ' AND nextFreeAt <= :latest' : ''}`,
      ExpressionAttributeValues: marshall({
        ':span': span,
        ':notBefore': notBefore,
        ...(bounded ? { ':latest': latest } : {}),
      }),
      ReturnValues: 'ALL_OLD',
      ...(bounded ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
    });
    const old = Number(answer.item?.nextFreeAt?.N ?? Number.NaN);
    return !Number.isFinite(old) || (answer.refused && old < notBefore) ? undefined : old;
  }

  /** Idle (or new): starts again at `notBefore`, which is the turn. */
  private async restart(id: string, span: number, notBefore: number) {
    const answer = await this.update(id, {
      UpdateExpression: 'SET nextFreeAt = :end, #ttl = :ttl',
      ConditionExpression: 'attribute_not_exists(nextFreeAt) OR nextFreeAt < :notBefore',
      ExpressionAttributeValues: marshall({ ':end': notBefore + span, ':notBefore': notBefore }),
    });
    return answer.refused ? undefined : notBefore;
  }

  private async update(
    id: string,
    input: Omit<ConstructorParameters<typeof UpdateItemCommand>[0], 'TableName' | 'Key'>,
  ) {
    try {
      const command = new UpdateItemCommand({
        TableName: this.options.table,
        Key: marshall({ pk: `pace#${id}` }),
        ExpressionAttributeNames: { '#ttl': MAPPING_TABLES.ttlAttribute },
        ...input,
        ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':ttl': { N: String(ttlAfter(Date.now())) } },
      });
      const result = await this.client.send(command, { abortSignal: currentDeadline() });
      return { refused: false, item: result.Attributes };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return { refused: true, item: error.Item };
      throw error;
    }
  }
}

/** A schedule item outlives any burst: TTL deletes it a day after its last reservation. */
const ttlAfter = (at: number) => Math.floor(at / 1000) + 86_400;
