import { DynamoOrderStore } from '../../shared/mapping/orders.records';
import { orderAnnouncer } from '../../shared/orders/announce';
import type { OrderResultDependencies } from '../../shared/orders/order-result.use-case';
import type { PipelineDependencies, PipelineLogger } from '../../shared/pipeline/ports';
import { ENV, requireEnv } from './env';
import { connectionContext } from './work-context';
import { mappingStore, queueLedger } from './store';

/**
 * The workers' collaborators, built once per warm function. No mail client here: only the invite worker sends
 * e-mail, and the SES client costs about 50 ms of every cold start that loads it (npm run bench).
 */
export function pipelineDependencies(logger: PipelineLogger): PipelineDependencies {
  // The queue ledger is built when a refused key is first recorded (key-refused.ts).
  let made: ReturnType<typeof queueLedger> | undefined;
  const built = () => {
    made ??= queueLedger();
    return made;
  };
  const ledger: NonNullable<PipelineDependencies['ledger']> = {
    claimEnqueue: (...args) => built().claimEnqueue(...args),
    recordEnqueued: (...args) => built().recordEnqueued(...args),
  };
  return { store: mappingStore(), contextFor: connectionContext, logger, ledger };
}

/** What the order use cases add: the orders table and how each source's ATS is told of an order's end. */
export function orderDependencies(
  logger: PipelineLogger,
): Omit<OrderResultDependencies, 'logger'> & { logger: PipelineLogger } {
  return { orders: new DynamoOrderStore({ table: requireEnv(ENV.ordersTable) }), announcerFor: orderAnnouncer, logger };
}
