import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import {
  ORDER_MOVES,
  ORDER_CLAIMABLE_STATES,
  isClaimable,
  type ClaimOrderResult,
  type OrderKey,
  type OrderRecord,
  type OrderStore,
} from '../orders/records';
import { MAPPING_TABLES, RETENTION_DEFAULTS } from './constants';
import { LeaseLostError } from './errors';
import { buildUpdate, withNames } from './expressions';

const orderPk = (key: OrderKey) => `${key.connectionId}#${key.orderId}`;
const DAY_SECONDS = 86_400;
/** No worker holds the claim, or its holder's lease has run out. */
const LEASE_FREE = '(attribute_not_exists(#leaseUntil) OR #leaseUntil < :now)';

/**
 * Assessment orders on DynamoDB (the orders table): each recorded once by a conditional put on its id, its work
 * claimed under a lease and its steps recorded while the claim is held, every move conditional on the state it
 * starts from (`ORDER_MOVES`). Orders carry the candidate's e-mail: they expire with the applications' retention.
 */
export class DynamoOrderStore implements OrderStore {
  private readonly client: DynamoDBClient;
  private readonly table: string;
  private readonly retentionDays: number;

  public constructor(options: { table: string; client?: DynamoDBClient; retentionDays?: number }) {
    this.client = options.client ?? new DynamoDBClient(AWS_CLIENT_CONFIG);
    this.table = options.table;
    this.retentionDays = options.retentionDays ?? RETENTION_DEFAULTS.applicationDays;
  }

  public async recordOrder(order: OrderRecord): Promise<{ created: boolean; record: OrderRecord }> {
    const expiresAt = Math.floor(order.createdAt / 1000) + this.retentionDays * DAY_SECONDS;
    try {
      await this.send(
        new PutItemCommand({
          TableName: this.table,
          Item: marshall(
            { ...order, pk: orderPk(order), [MAPPING_TABLES.ttlAttribute]: expiresAt },
            {
              removeUndefinedValues: true,
            },
          ),
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { created: true, record: order };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const existing = error.Item ? toOrder(unmarshall(error.Item)) : await this.getOrder(order);
      if (!existing) throw error;
      return { created: false, record: existing };
    }
  }

  public async getOrder(key: OrderKey): Promise<OrderRecord | undefined> {
    const result = await this.send(
      new GetItemCommand({ TableName: this.table, Key: marshall({ pk: orderPk(key) }), ConsistentRead: true }),
    );
    return result.Item ? toOrder(unmarshall(result.Item)) : undefined;
  }

  public readonly claimOrder: OrderStore['claimOrder'] = async (key, lease): Promise<ClaimOrderResult> => {
    const states = Object.fromEntries(ORDER_CLAIMABLE_STATES.map((state, i) => [`:s${i}`, state]));
    const update = withNames(
      buildUpdate({
        set: { leaseOwner: lease.owner, leaseUntil: lease.now + lease.durationMs, updatedAt: lease.now },
        increment: ['claims'],
        extraValues: { ...states, ':now': lease.now },
      }),
      'state',
      'leaseUntil',
    );
    try {
      const result = await this.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: marshall({ pk: orderPk(key) }),
          ...update,
          ConditionExpression: `#state IN (${Object.keys(states).join(', ')}) AND ${LEASE_FREE}`,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const record = toOrder(unmarshall(result.Attributes ?? {}));
      return { kind: 'claimed', record, resumed: (record.claims ?? 1) > 1 };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const refused = error.Item ? toOrder(unmarshall(error.Item)) : undefined;
      if (!refused) return { kind: 'missing' };
      return isClaimable(refused.state) ? { kind: 'held-elsewhere' } : { kind: 'done', record: refused };
    }
  };

  public readonly recordOrderStep: OrderStore['recordOrderStep'] = async (key, write) => {
    const move = write.move ? ORDER_MOVES[write.move] : undefined;
    const from = Object.fromEntries((move?.from ?? []).map((state, i) => [`:from${i}`, state]));
    const ends = move && !isClaimable(move.to);
    const update = withNames(
      buildUpdate({
        set: {
          ...write.data,
          ...(write.step?.record ? { [`steps.${write.step.name}`]: write.step.record } : {}),
          ...(move ? { state: move.to } : {}),
          updatedAt: Date.now(),
        },
        remove: [
          ...(write.step && !write.step.record ? [`steps.${write.step.name}`] : []),
          ...(ends ? ['leaseOwner', 'leaseUntil'] : []),
        ],
        extraValues: { ':owner': write.owner, ...from },
      }),
      'leaseOwner',
      ...(move ? ['state'] : []),
    );
    const movable = move ? ` AND #state IN (${Object.keys(from).join(', ')})` : '';
    try {
      await this.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: marshall({ pk: orderPk(key) }),
          ...update,
          ConditionExpression: `#leaseOwner = :owner${movable}`,
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new LeaseLostError(`order ${key.orderId}`);
      throw error;
    }
  };

  /** Every call aborts with the worker's deadline (shared/aws/deadline.ts). */
  private readonly send: DynamoDBClient['send'] = ((command: never) =>
    this.client.send(command, { abortSignal: currentDeadline() })) as never;
}

/** An order item as the use cases read it: its own fields, without the table's key and TTL. */
function toOrder(item: Record<string, unknown>): OrderRecord {
  const { pk: _pk, [MAPPING_TABLES.ttlAttribute]: _expiresAt, ...order } = item;
  return { steps: {}, ...order } as OrderRecord;
}
