import type { OrderKey, OrderRecord, OrderStore } from '../../shared/orders/records';

/** Orders in memory, with the DynamoDB store's rule: an order is recorded once, under its id. */
export class MemoryOrderStore implements OrderStore {
  public readonly orders = new Map<string, OrderRecord>();

  public async recordOrder(order: OrderRecord): Promise<{ created: boolean; record: OrderRecord }> {
    const id = `${order.connectionId}#${order.orderId}`;
    const existing = this.orders.get(id);
    if (existing) return { created: false, record: structuredClone(existing) };
    this.orders.set(id, structuredClone(order));
    return { created: true, record: structuredClone(order) };
  }

  public async getOrder(key: OrderKey): Promise<OrderRecord | undefined> {
    const order = this.orders.get(`${key.connectionId}#${key.orderId}`);
    return order && structuredClone(order);
  }
}
