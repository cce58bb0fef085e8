import { LeaseLostError } from '../../shared/mapping/errors';
import {
  isClaimable,
  mayMoveOrder,
  ORDER_MOVES,
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

  public readonly claimOrder: OrderStore['claimOrder'] = async (key, lease): Promise<ClaimOrderResult> => {
    const order = this.orders.get(idOf(key));
    if (!order) return { kind: 'missing' };
    if (!isClaimable(order.state)) return { kind: 'done', record: structuredClone(order) };
    if (order.leaseUntil !== undefined && order.leaseUntil >= lease.now) return { kind: 'held-elsewhere' };
    const resumed = (order.claims ?? 0) > 0;
    Object.assign(order, {
      leaseOwner: lease.owner,
      leaseUntil: lease.now + lease.durationMs,
      claims: (order.claims ?? 0) + 1,
      updatedAt: lease.now,
    });
    return { kind: 'claimed', record: structuredClone(order), resumed };
  };

  public readonly recordOrderStep: OrderStore['recordOrderStep'] = async (key, write) => {
    const order = this.orders.get(idOf(key));
    if (!order || order.leaseOwner !== write.owner) throw new LeaseLostError(`order ${key.orderId}`);
    if (write.move && !mayMoveOrder(order.state, write.move)) throw new LeaseLostError(`order ${key.orderId}`);
    if (write.step?.record) order.steps[write.step.name] = write.step.record;
    else if (write.step) delete order.steps[write.step.name];
    Object.assign(order, write.data, { updatedAt: Date.now() });
    if (write.move) order.state = ORDER_MOVES[write.move].to;
    if (!isClaimable(order.state)) {
      delete order.leaseOwner;
      delete order.leaseUntil;
    }
  };
}
