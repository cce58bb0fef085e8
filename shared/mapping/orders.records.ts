import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import {
  ORDER_ANNOUNCED_STATES,
  ORDER_CLAIMABLE_STATES,
  ORDER_MOVES,
  isAnnounceable,
  isClaimable,
  type ClaimOrderResult,
  type OrderKey,
  type OrderRecord,
  type OrderState,
  type OrderStore,
} from '../orders/records';
import { MAPPING_TABLES, RETENTION_DEFAULTS } from './constants';
import { LeaseLostError } from './errors';
import { updateWhen } from './conditional-update';
import { buildUpdate, withNames } from './expressions';

const orderPk = (key: OrderKey) => `${key.connectionId}#${key.orderId}`;
const DAY_SECONDS = 86_400;
const { interviewIndex, workIndex, candidateIndex } = MAPPING_TABLES.orders;

/** The key of a candidate's orders on the candidate index (connection and ATS candidate id). */
export const orderCandidateKey = (connectionId: string, atsCandidateId: string) => `${connectionId}#${atsCandidateId}`;
/** No worker holds the claim, or its holder's lease has run out. */
const LEASE_FREE = '(attribute_not_exists(#leaseUntil) OR #leaseUntil < :now)';
/** The order's end is not yet told to the ATS. */
const ANNOUNCEABLE = `#state IN (:a0, :a1, :a2) AND (attribute_not_exists(#announced) OR #announced <> #state)`;
const announcedValues = Object.fromEntries(ORDER_ANNOUNCED_STATES.map((state, i) => [`:a${i}`, state]));

/** `:p0, :p1` for the states, with their values. */
function stateList(prefix: string, states: readonly OrderState[]) {
  const values = Object.fromEntries(states.map((state, i) => [`:${prefix}${i}`, state]));
  return { values, list: Object.keys(values).join(', ') };
}

/**
 * Assessment orders on DynamoDB (the orders table): each recorded once by a conditional put on its id, its work
 * claimed under a lease and its steps recorded while the claim is held, every move conditional on the state it
 * starts from (`ORDER_MOVES`). `workConnectionId` keeps an order in the reconciler's index while work remains on
 * it. Orders carry the candidate's e-mail: they expire with the applications' retention.
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
    const item = {
      ...order,
      pk: orderPk(order),
      [workIndex.partitionKey]: order.connectionId,
      // Not a Kombo order: one Kombo account's connection serves several customers' ATSs, whose candidate ids may
      // be the same, and a purge by connection and id must not reach another customer's candidate.
      ...(order.atsCandidateId && order.source !== 'kombo'
        ? { [candidateIndex.partitionKey]: orderCandidateKey(order.connectionId, order.atsCandidateId) }
        : {}),
      [MAPPING_TABLES.ttlAttribute]: expiresAt,
    };
    try {
      await this.send(
        new PutItemCommand({
          TableName: this.table,
          Item: marshall(item, { removeUndefinedValues: true }),
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

  public readonly claimOrder: OrderStore['claimOrder'] = async (key, lease, work = 'invite') => {
    const claimable = stateList('s', ORDER_CLAIMABLE_STATES);
    const update = withNames(
      buildUpdate({
        set: { leaseOwner: lease.owner, leaseUntil: lease.now + lease.durationMs, updatedAt: lease.now },
        increment: ['claims'],
        extraValues: { ':now': lease.now, ...(work === 'invite' ? claimable.values : announcedValues) },
      }),
      'state',
      'leaseUntil',
      ...(work === 'announce' ? ['announced'] : []),
    );
    const condition = work === 'invite' ? `#state IN (${claimable.list})` : ANNOUNCEABLE;
    const result = await this.updateIf(key, update, `${condition} AND ${LEASE_FREE}`);
    if ('updated' in result) {
      const record = result.updated;
      return { kind: 'claimed', record, resumed: (record.claims ?? 1) > 1 } satisfies ClaimOrderResult;
    }
    const refused = result.refused;
    if (!refused) return { kind: 'missing' };
    const open = work === 'invite' ? isClaimable(refused.state) : isAnnounceable(refused);
    return open ? { kind: 'held-elsewhere' } : { kind: 'done', record: refused };
  };

  public readonly recordOrderStep: OrderStore['recordOrderStep'] = async (key, write) => {
    const move = write.move ? ORDER_MOVES[write.move] : undefined;
    const from = stateList('from', move?.from ?? []);
    const release = write.release || (move !== undefined && !isClaimable(move.to));
    // The end it tells of is the order's still: a report that completed an expired order meanwhile is told next.
    const announcing = write.data?.announced !== undefined;
    const update = withNames(
      buildUpdate({
        set: {
          ...write.data,
          ...(write.step?.record ? { [`steps.${write.step.name}`]: write.step.record } : {}),
          ...(move ? { state: move.to } : {}),
          updatedAt: write.now ?? Date.now(),
        },
        remove: [
          ...(write.step && !write.step.record ? [`steps.${write.step.name}`] : []),
          ...(release ? ['leaseOwner', 'leaseUntil'] : []),
          ...(announcing || move?.to === 'cancelled' ? [workIndex.partitionKey] : []),
        ],
        extraValues: {
          ':owner': write.owner,
          ...from.values,
          ...(announcing ? { ':told': write.data?.announced } : {}),
        },
      }),
      'leaseOwner',
      ...(move || announcing ? ['state'] : []),
    );
    const conditions = [
      '#leaseOwner = :owner',
      ...(move ? [`#state IN (${from.list})`] : []),
      ...(announcing ? ['#state = :told'] : []),
    ];
    try {
      await this.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: marshall({ pk: orderPk(key) }),
          ...update,
          ConditionExpression: conditions.join(' AND '),
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new LeaseLostError(`order ${key.orderId}`);
      throw error;
    }
  };

  public readonly moveOrder: OrderStore['moveOrder'] = async (key, name, options) => {
    const move = ORDER_MOVES[name];
    const from = stateList('from', move.from);
    const age = options.receivedBefore !== undefined ? ' AND #createdAt < :before' : '';
    const update = withNames(
      buildUpdate({
        set: {
          ...options.data,
          state: move.to,
          updatedAt: options.now,
          // An end the ATS is told of keeps the order in the reconciler's index until it is told.
          ...(move.to === 'cancelled' ? {} : { [workIndex.partitionKey]: key.connectionId }),
        },
        remove: move.to === 'cancelled' ? [workIndex.partitionKey, 'leaseOwner', 'leaseUntil'] : [],
        extraValues: { ...from.values, ...(age ? { ':before': options.receivedBefore } : {}) },
      }),
      'state',
      ...(age ? ['createdAt'] : []),
    );
    const result = await this.updateIf(key, update, `#state IN (${from.list})${age}`);
    return 'updated' in result ? { moved: true, record: result.updated } : { moved: false, record: result.refused };
  };

  /** The update made when `condition` holds (the order as it is now), else the order as it stood (if it exists). */
  private async updateIf(
    key: OrderKey,
    update: ReturnType<typeof buildUpdate>,
    condition: string,
  ): Promise<{ updated: OrderRecord } | { refused: OrderRecord | undefined }> {
    const target = { TableName: this.table, Key: marshall({ pk: orderPk(key) }), ConditionExpression: condition };
    return updateWhen(this.send, target, update, toOrder);
  }

  public async findOrderByInterview(interviewId: string, candidateEmail: string): Promise<OrderRecord | undefined> {
    const [found] = await this.query(interviewIndex.name, {
      [interviewIndex.partitionKey]: interviewId,
      [interviewIndex.sortKey]: candidateEmail,
    });
    // The index is eventually consistent: the order itself is read again.
    return found ? this.getOrder(found) : undefined;
  }

  public listOrdersWithWork(connectionId: string, limit: number): Promise<OrderRecord[]> {
    return this.query(workIndex.name, { [workIndex.partitionKey]: connectionId }, limit);
  }

  /** One page of an index, its keys equal to `keys`. */
  private async query(index: string, keys: Record<string, string>, limit = 1): Promise<OrderRecord[]> {
    const names = Object.keys(keys);
    const result = await this.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: index,
        KeyConditionExpression: names.map((_, i) => `#k${i} = :k${i}`).join(' AND '),
        ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#k${i}`, name])),
        ExpressionAttributeValues: marshall(Object.fromEntries(names.map((name, i) => [`:k${i}`, keys[name]]))),
        Limit: limit,
      }),
    );
    return (result.Items ?? []).map((item) => toOrder(unmarshall(item)));
  }

  /** Every call aborts with the worker's deadline (shared/aws/deadline.ts). */
  private readonly send: DynamoDBClient['send'] = ((command: never) =>
    this.client.send(command, { abortSignal: currentDeadline() })) as never;
}

/** An order item as the use cases read it: its own fields, without the table's keys and TTL. */
function toOrder(item: Record<string, unknown>): OrderRecord {
  const {
    pk: _pk,
    [MAPPING_TABLES.ttlAttribute]: _expiresAt,
    [workIndex.partitionKey]: _work,
    [candidateIndex.partitionKey]: _candidate,
    ...order
  } = item;
  return { steps: {}, ...order } as OrderRecord;
}
