import { LeaseLostError } from '../../shared/mapping/errors';
import {
  hasWorkLeft,
  isAnnounceable,
  isClaimable,
  mayMoveOrder,
  ORDER_MOVES,
  orderIdFor,
  type ClaimOrderResult,
  type OrderKey,
  type OrderRecord,
  type OrderStore,
} from '../../shared/orders/records';

const idOf = (key: OrderKey) => `${key.connectionId}#${key.orderId}`;

/** Orders in memory, with the rules a DynamoDB store keeps: recorded once, worked under a claim, moves as stated. */
export class MemoryOrderStore implements OrderStore {
  public readonly orders = new Map<string, OrderRecord>();

  public async recordOrder(order: OrderRecord): Promise<{ created: boolean; record: OrderRecord }> {
    const existing = this.orders.get(idOf(order));
    if (existing) return { created: false, record: structuredClone(existing) };
    this.orders.set(idOf(order), structuredClone(order));
    return { created: true, record: structuredClone(order) };
  }

  public async getOrder(key: OrderKey): Promise<OrderRecord | undefined> {
    const order = this.orders.get(idOf(key));
    return order && structuredClone(order);
  }

  public readonly claimOrder: OrderStore['claimOrder'] = async (key, lease, work = 'invite') => {
    const order = this.orders.get(idOf(key));
    if (!order) return { kind: 'missing' };
    const open = work === 'invite' ? isClaimable(order.state) : isAnnounceable(order);
    if (!open) return { kind: 'done', record: structuredClone(order) };
    if (order.leaseUntil !== undefined && order.leaseUntil >= lease.now) return { kind: 'held-elsewhere' };
    const resumed = (order.claims ?? 0) > 0;
    Object.assign(order, {
      leaseOwner: lease.owner,
      leaseUntil: lease.now + lease.durationMs,
      claims: (order.claims ?? 0) + 1,
      updatedAt: lease.now,
    });
    return { kind: 'claimed', record: structuredClone(order), resumed } satisfies ClaimOrderResult;
  };

  public readonly recordOrderStep: OrderStore['recordOrderStep'] = async (key, write) => {
    const order = this.orders.get(idOf(key));
    const lost = () => new LeaseLostError(`order ${key.orderId}`);
    if (!order || order.leaseOwner !== write.owner) throw lost();
    if (write.move && !mayMoveOrder(order.state, write.move)) throw lost();
    if (write.data?.announced !== undefined && write.data.announced !== order.state) throw lost();
    if (write.step?.record) order.steps[write.step.name] = write.step.record;
    else if (write.step) delete order.steps[write.step.name];
    Object.assign(order, write.data, { updatedAt: write.now ?? Date.now() });
    if (write.move) order.state = ORDER_MOVES[write.move].to;
    if (write.release || !isClaimable(order.state)) {
      delete order.leaseOwner;
      delete order.leaseUntil;
    }
  };

  public readonly moveOrder: OrderStore['moveOrder'] = async (key, move, options) => {
    const order = this.orders.get(idOf(key));
    if (!order) return { moved: false, record: undefined };
    const tooYoung = options.receivedBefore !== undefined && order.createdAt >= options.receivedBefore;
    if (!mayMoveOrder(order.state, move) || tooYoung) return { moved: false, record: structuredClone(order) };
    Object.assign(order, options.data, { state: ORDER_MOVES[move].to, updatedAt: options.now });
    if (order.state === 'cancelled') {
      delete order.leaseOwner;
      delete order.leaseUntil;
    }
    return { moved: true, record: structuredClone(order) };
  };

  public async findOrderByInterview(interviewId: string, candidateEmail: string): Promise<OrderRecord | undefined> {
    const found = [...this.orders.values()].find(
      (o) => o.interviewId === interviewId && o.candidateEmail === candidateEmail,
    );
    return found && structuredClone(found);
  }

  public async listOrdersWithWork(connectionId: string, limit: number): Promise<OrderRecord[]> {
    return [...this.orders.values()]
      .filter((o) => o.connectionId === connectionId && hasWorkLeft(o))
      .sort((a, b) => a.createdAt - b.createdAt)
      .slice(0, limit)
      .map((o) => structuredClone(o));
  }
}

/** A Greenhouse order of `acme-greenhouse` for Ana's `backend-screen` test, as `send_test` records it; `overrides`. */
export function greenhouseOrder(now: number, overrides: Partial<OrderRecord> = {}): OrderRecord {
  return {
    connectionId: 'acme-greenhouse',
    orderId: orderIdFor('greenhouse', 'acme-greenhouse', ['backend-screen', 'p', 'ana@example.com']),
    source: 'greenhouse',
    testId: 'backend-screen',
    state: 'received',
    candidateEmail: 'ana@example.com',
    candidateName: 'Ana Ruiz',
    steps: {},
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}
