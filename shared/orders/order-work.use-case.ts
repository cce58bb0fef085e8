import type { RunOptions } from '../pipeline/ports';
import type { OrderWorkMessage } from '../queue/messages.schema';
import { announceOrder, type OrderResultDependencies } from './order-result.use-case';
import { handleOrderReceived, orderTest, type OrderDependencies } from './order-received.use-case';

const DAY_MS = 86_400_000;

export type OrderWorkDependencies = OrderDependencies & OrderResultDependencies;

/**
 * An order's queued work: its invitation (an order that fails for good is told to the ATS), its expiry once the
 * test's `expireAfterDays` have passed with no report, or telling the ATS how it ended. `held-elsewhere` sends the
 * message back for later (the invite worker defers it): the work is another worker's until its lease runs out.
 */
export async function handleOrderWork(
  message: OrderWorkMessage,
  deps: OrderWorkDependencies,
  run: RunOptions = {},
): Promise<{ outcome: string; reason?: string }> {
  const key = { connectionId: message.connectionId, orderId: message.orderId };
  const context = await deps.contextFor(key.connectionId);
  if (!context) return { outcome: 'unknown-connection' };
  if (message.action === 'invite') {
    const result = await handleOrderReceived(key, deps, run);
    if (result.outcome !== 'failed') return result;
    const told = await announceOrder(key, context, deps, run);
    return told === 'held-elsewhere' ? { outcome: told } : result;
  }
  if (message.action === 'expire') {
    const order = await deps.orders.getOrder(key);
    if (!order) return { outcome: 'unknown-order' };
    const days = orderTest(context.connection, order)?.expireAfterDays ?? 14;
    const now = (deps.now ?? Date.now)();
    const { moved } = await deps.orders.moveOrder(key, 'expire', {
      now,
      receivedBefore: now - days * DAY_MS,
      data: { endedAt: now },
    });
    if (moved) deps.logger.info('order expired', { ...key, test: order.testId });
    const told = await announceOrder(key, context, deps, run);
    // Another worker telling it (a second copy of this message): this one comes back once its lease ran out, and
    // tells it if that worker stopped before recording it.
    if (told === 'held-elsewhere') return { outcome: told };
    return { outcome: moved ? 'expired' : told };
  }
  return { outcome: await announceOrder(key, context, deps, run) };
}
