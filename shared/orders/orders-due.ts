import type { Connection } from '../config';
import { orderTest } from './order-received.use-case';
import { isAnnounceable, isClaimable, type OrderRecord } from './records';

const DAY_MS = 86_400_000;
/** An order's queued work normally ends within this; older work with no holder was left half done or lost. */
export const ORDER_STALL_MS = 2 * 60_000;

export interface OrderWorkDue {
  orderId: string;
  action: 'invite' | 'expire' | 'announce';
}

/**
 * What the reconciler queues of a connection's orders with work left: an invitation left half done (its message
 * lost, or its worker stopped and nothing came back), an invitation past its test's `expireAfterDays`, an end not
 * yet told to the ATS. Work a worker holds (its lease running) is left to it.
 */
export function ordersDue(connection: Connection, orders: readonly OrderRecord[], now: number): OrderWorkDue[] {
  const due: OrderWorkDue[] = [];
  for (const order of orders) {
    const held = order.leaseUntil !== undefined && order.leaseUntil >= now;
    const stalled = !held && order.updatedAt < now - ORDER_STALL_MS;
    const expireAfterDays = orderTest(connection, order)?.expireAfterDays ?? 14;
    if (isClaimable(order.state) && stalled) due.push({ orderId: order.orderId, action: 'invite' });
    else if (order.state === 'invited' && order.createdAt < now - expireAfterDays * DAY_MS)
      due.push({ orderId: order.orderId, action: 'expire' });
    else if (isAnnounceable(order) && stalled) due.push({ orderId: order.orderId, action: 'announce' });
  }
  return due;
}
