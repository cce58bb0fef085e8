import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DynamoDBClient,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { MAX_COSTS_PER_RESERVATION, type RateSchedule, type ReserveOptions } from '../ats/pacer';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import { MAPPING_TABLES } from './constants';

/** A schedule item outlives any burst; TTL deletes it a day after its last turn. */
const SCHEDULE_TTL_SECONDS = 86_400;
/** Two writers racing on an idle schedule: the loser reads it as busy the next time round. */
const MAX_TRIES = 4;

/** The item's attributes that hold a cost in calls: `cost:` and the kind (`cost:invitation/invite-note-posted`). */
const COST_PREFIX = 'cost:';

/**
 * Each connection's schedule of ATS turns on the events table (`pace#<connection>`, `nextFreeAt` in epoch ms): one
 * conditional UpdateItem a reservation. A busy schedule (free from a later moment) is pushed on by the span and
 * answers where it stood; an idle one (free since before `notBefore`) starts again at `notBefore`. The same write
 * records the costs an environment learnt (`cost:<kind>`) and answers those the item held (ALL_OLD): no request more.
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

  public async reserve(
    connectionId: string,
    spanMs: number,
    notBefore: number,
    options: ReserveOptions = {},
  ): Promise<number> {
    const span = Math.max(0, Math.round(spanMs));
    const record = recordCosts(options.publish ?? {});
    if (options.busyOnly) {
      // One write: a busy schedule is pushed on, a freer one only read (the refused write answers its item).
      const answer = await this.pushOn(connectionId, span, record, {
        notBefore,
        latest: options.latest,
        busyOnly: true,
      });
      if (answer) options.seen?.(answer.costs);
      return answer?.start ?? Number.NEGATIVE_INFINITY;
    }
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      const idle = attempt % 2 === 0 ? this.idleLast : !this.idleLast;
      const answer = idle
        ? await this.restart(connectionId, span, notBefore, record)
        : await this.pushOn(connectionId, span, record, { notBefore, latest: options.latest });
      if (answer !== undefined) {
        this.idleLast = idle;
        if (answer.reserved) options.seen?.(answer.costs);
        return answer.start;
      }
    }
    throw new Error(`the rate schedule of connection ${connectionId} changed under ${MAX_TRIES} reservations`);
  }

  /**
   * The schedule is free from `notBefore` or later (and by `latest`, when given): pushed on by `span`; its old free
   * moment is the turn. Free only after `latest`: nothing is reserved, and that moment is the answer.
   */
  private async pushOn(
    connectionId: string,
    span: number,
    record: CostRecord,
    { notBefore, latest, busyOnly = false }: { notBefore: number; latest: number | undefined; busyOnly?: boolean },
  ): Promise<Answer> {
    const bounded = latest !== undefined;
    const answerRefused = bounded || busyOnly;
    const result = await this.update(connectionId, record, {
      UpdateExpression: `SET nextFreeAt = nextFreeAt + :span, #ttl = :ttl${record.set}`,
      ConditionExpression: `nextFreeAt >= :notBefore${bounded ? ' AND nextFreeAt <= :latest' : ''}`,
      ExpressionAttributeValues: marshall({
        ':span': span,
        ':notBefore': notBefore,
        ':ttl': ttlAfter(notBefore),
        ...(bounded ? { ':latest': latest } : {}),
        ...record.values,
      }),
      ReturnValues: 'ALL_OLD',
      ...(answerRefused ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
    });
    const old = Number(result.item?.nextFreeAt?.N ?? Number.NaN);
    if (!Number.isFinite(old)) return undefined;
    if (result.refused && busyOnly) return { start: old, reserved: false, costs: costsOf(result.item) };
    if (result.refused) return old >= notBefore ? { start: old, reserved: false, costs: {} } : undefined;
    return { start: old, reserved: true, costs: costsOf(result.item) };
  }

  /** The schedule is idle (or new): it starts again at `notBefore`, which is the turn. */
  private async restart(connectionId: string, span: number, notBefore: number, record: CostRecord): Promise<Answer> {
    const result = await this.update(connectionId, record, {
      UpdateExpression: `SET nextFreeAt = :end, #ttl = :ttl${record.set}`,
      ConditionExpression: 'attribute_not_exists(nextFreeAt) OR nextFreeAt < :notBefore',
      ExpressionAttributeValues: marshall({
        ':end': notBefore + span,
        ':notBefore': notBefore,
        ':ttl': ttlAfter(notBefore),
        ...record.values,
      }),
      ReturnValues: 'ALL_OLD',
    });
    return result.refused ? undefined : { start: notBefore, reserved: true, costs: costsOf(result.item) };
  }

  /** The update's old item, or, when its condition refused it, whatever item it was given back (ALL_OLD). */
  private async update(
    connectionId: string,
    record: CostRecord,
    input: Omit<ConstructorParameters<typeof UpdateItemCommand>[0], 'TableName' | 'Key'>,
  ): Promise<{ refused: boolean; item: Record<string, AttributeValue> | undefined }> {
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: marshall({ pk: `pace#${connectionId}` }),
          ExpressionAttributeNames: { '#ttl': MAPPING_TABLES.ttlAttribute, ...record.names },
          ...input,
        }),
        { abortSignal: currentDeadline() },
      );
      return { refused: false, item: result.Attributes };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return { refused: true, item: error.Item };
      throw error;
    }
  }
}

const ttlAfter = (at: number) => Math.floor(at / 1000) + SCHEDULE_TTL_SECONDS;

type Answer = { start: number; reserved: boolean; costs: Record<string, number> } | undefined;

/** The costs to record, as an update's SET clauses with their names and values. */
interface CostRecord {
  set: string;
  names: Record<string, string>;
  values: Record<string, number>;
}

function recordCosts(publish: Record<string, number>): CostRecord {
  const entries = Object.entries(publish)
    .filter(([, calls]) => Number.isFinite(calls) && calls >= 0)
    .slice(0, MAX_COSTS_PER_RESERVATION);
  return {
    set: entries.map((_, i) => `, #cost${i} = :cost${i}`).join(''),
    names: Object.fromEntries(entries.map(([kind], i) => [`#cost${i}`, `${COST_PREFIX}${kind}`])),
    values: Object.fromEntries(entries.map(([, calls], i) => [`:cost${i}`, calls])),
  };
}

function costsOf(item: Record<string, AttributeValue> | undefined): Record<string, number> {
  const costs: Record<string, number> = {};
  for (const [name, value] of Object.entries(item ?? {}))
    if (name.startsWith(COST_PREFIX) && value.N !== undefined) costs[name.slice(COST_PREFIX.length)] = Number(value.N);
  return costs;
}
