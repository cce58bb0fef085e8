import { parseConnections, type Connection, type ConnectionSecrets } from '../../shared/config';
import type { PartnerDependencies } from '../../shared/orders/partner-calls';
import type { OrderRecord } from '../../shared/orders/records';
import { connectionDocument } from './connections';
import { MemoryOrderStore } from './memory-orders';

/** The test a connection offers the ATSs that order one. */
export const BACKEND_SCREEN = {
  id: 'backend-screen',
  name: 'Backend screen',
  interview: { questions: [{ question: 'Walk us through a system you built.', time: 3, type: 'audio' }] },
};

/** connectionDocument's connection, its `orders` as given (and any other field over its own). */
export const orderingConnection = (fields: Record<string, unknown>): Connection =>
  parseConnections(connectionDocument(fields))[0]!;

/**
 * What the partner calls run on: `connection`, found by its id, with the interview service's secrets and `secrets`;
 * orders in memory, each one queued into `queued`; a logger that says nothing; a fixed time.
 */
export function partnerDependencies(connection: Connection, secrets: Partial<ConnectionSecrets>) {
  const orders = new MemoryOrderStore();
  const queued: OrderRecord[] = [];
  let disabled = false;
  const deps: PartnerDependencies = {
    connectionFor: async (id) =>
      id === connection.id
        ? { connection, secrets: { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), ...secrets }, disabled }
        : undefined,
    orders,
    enqueue: async (order) => void queued.push(order),
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    now: () => Date.UTC(2026, 10, 26),
  };
  /** An operator turns the connection off (the admin API's disable). */
  const pause = () => {
    disabled = true;
  };
  return { orders, queued, deps, pause };
}
