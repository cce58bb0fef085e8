import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Connection } from '../../../shared/config';
import { issuePartnerKey } from '../../../shared/orders/partner-calls';
import { hasWorkLeft, isAnnounceable, ORDER_STATES, type OrderRecord } from '../../../shared/orders/records';
import { iso } from './lines';

const GREENHOUSE_CALLS = ['list_tests', 'send_test', 'test_status', 'response_error'] as const;
/** An operator's read of every order: bounded, so a large table answers with what it read. */
const MAX_PAGES = 50;

/** The order endpoints of a connection that takes orders: what to give Greenhouse's partner team and Ashby. */
export function orderUrlLines(connection: Connection, apiUrl: string): string[] {
  const lines: string[] = [];
  if (connection.orders?.greenhouse)
    for (const call of GREENHOUSE_CALLS)
      lines.push(`${connection.id} (Greenhouse Assessment Partner ${call}): ${apiUrl}/orders/greenhouse/${call}`);
  if (connection.orders?.ashby) lines.push(`${connection.id} (Ashby Assessments base URL): ${apiUrl}/orders/ashby`);
  if (connection.orders?.kombo)
    lines.push(`${connection.id} (Kombo order webhook, in Kombo's dashboard): ${apiUrl}/orders/kombo/${connection.id}`);
  return lines;
}

/** A new key for the customer's ATS to send, and where it goes. */
export function printPartnerKey(connectionId: string): void {
  const key = issuePartnerKey(connectionId);
  console.log(key);
  console.log(
    `Put it in the connection's secret as greenhousePartnerKey (Greenhouse) or ashbyPartnerKey (Ashby); ` +
      'give it to the customer to enter in their ATS (Greenhouse: through its account manager or support, as the ' +
      'partner key). It is shown once and never logged.',
  );
}

/** Every order of the table (ids, states and reasons only), at most MAX_PAGES pages. */
export async function scanOrders(client: DynamoDBClient, table: string): Promise<OrderRecord[]> {
  const orders: OrderRecord[] = [];
  let start: Record<string, unknown> | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.send(
      new ScanCommand({
        TableName: table,
        ProjectionExpression: 'connectionId, orderId, #source, testId, #state, announced, failureReason, createdAt',
        ExpressionAttributeNames: { '#source': 'source', '#state': 'state' },
        ExclusiveStartKey: start as never,
      }),
    );
    orders.push(...(result.Items ?? []).map((item) => unmarshall(item) as OrderRecord));
    start = result.LastEvaluatedKey;
    if (!start) break;
  }
  return orders;
}

/** Orders by connection, source and state; then each one with work left or failed, oldest first. */
export function orderLines(orders: readonly OrderRecord[], connectionId?: string): string[] {
  const mine = orders.filter((o) => !connectionId || o.connectionId === connectionId);
  const lines = [`${mine.length} order(s)`];
  const groups = new Map<string, Map<string, number>>();
  for (const o of mine) {
    const key = `${o.connectionId} ${o.source}`;
    const counts = groups.get(key) ?? new Map<string, number>();
    counts.set(o.state, (counts.get(o.state) ?? 0) + 1);
    groups.set(key, counts);
  }
  for (const [key, counts] of groups)
    lines.push(
      `  ${key}: ${ORDER_STATES.filter((s) => counts.has(s))
        .map((s) => `${s} ${counts.get(s)}`)
        .join(', ')}`,
    );
  const attention = mine
    .filter((o) => hasWorkLeft(o) || o.state === 'failed')
    .sort((a, b) => a.createdAt - b.createdAt);
  for (const o of attention) {
    const untold = isAnnounceable(o) ? ' (not yet told to the ATS)' : '';
    const reason = o.failureReason ? ` ${o.failureReason}` : '';
    lines.push(`  ${o.connectionId} ${o.orderId} ${o.source} ${o.state}${untold}${reason} since ${iso(o.createdAt)}`);
  }
  return lines;
}
