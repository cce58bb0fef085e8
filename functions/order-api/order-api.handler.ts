import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { DynamoOrderStore } from '../../shared/mapping/orders.records';
import { createLogger } from '../../shared/observability/logger';
import { createMetrics } from '../../shared/observability/metrics';
import { currentCorrelationId } from '../../shared/observability/log-context';
import { ASHBY_CALLS, handleAshbyPartner, type AshbyCall } from '../../shared/orders/ashby-assessments';
import { handleGreenhousePartner, PARTNER_CALLS, type PartnerCall } from '../../shared/orders/greenhouse-partner';
import { handleKomboWebhook } from '../../shared/orders/kombo-orders';
import type { PartnerAnswer, PartnerDependencies } from '../../shared/orders/partner-calls';
import type { OrderRecord } from '../../shared/orders/records';
import { QueuePublisher } from '../../shared/queue';
import { connectionContext } from '../_runtime/work-context';
import { connectionDisabled } from '../_runtime/connections';
import { ENV, requireEnv } from '../_runtime/env';
import { httpHandler, lowerCaseHeaders, MAX_WEBHOOK_BYTES, rawBody } from '../_runtime/http';

const logger = createLogger('order-api');
const metrics = createMetrics();
const publisher = new QueuePublisher();
const orders = new DynamoOrderStore({ table: requireEnv(ENV.ordersTable) });

const deps: PartnerDependencies = {
  async connectionFor(connectionId) {
    const context = await connectionContext(connectionId);
    // Asked only of a connection that exists: an unknown id (a forged key's) reads nothing more.
    if (!context) return undefined;
    return {
      connection: context.connection,
      secrets: context.secrets,
      disabled: await connectionDisabled(connectionId),
    };
  },
  orders,
  async enqueue(order: OrderRecord) {
    await publisher.publish(requireEnv(ENV.stageQueueUrl), {
      v: 1,
      kind: 'order-work',
      action: 'invite',
      enqueueId: randomUUID(),
      correlationId: currentCorrelationId(),
      connectionId: order.connectionId,
      receivedAt: Date.now(),
      orderId: order.orderId,
    });
    metrics.count('OrderReceived', order.connectionId);
  },
  logger,
  now: Date.now,
};

/**
 * The ATSs' assessment-partner calls: `/orders/greenhouse/{call}` (Greenhouse Assessment Partner: `list_tests`,
 * `send_test`, `test_status`, `response_error`) and `/orders/ashby/{call}` (Ashby Assessments: `assessment.list`,
 * `assessment.start`, `assessment.cancel`) and `/orders/kombo/{connection id}` (Kombo's signed
 * `assessment:order-received`). Each authenticates its key (or signature) before reading the body, answers from
 * DynamoDB, and queues an order's work.
 */
export const handler = httpHandler(answer);

async function answer(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const { source = '', call = '' } = event.pathParameters ?? {};
  const body = rawBody(event);
  if (body.length > MAX_WEBHOOK_BYTES) return respond({ status: 413, body: { errors: ['body exceeds 1 MiB'] } });
  const request = {
    method: event.requestContext?.http?.method ?? 'GET',
    headers: lowerCaseHeaders(event),
    query: new URLSearchParams(event.rawQueryString ?? ''),
    rawBody: body,
  };
  if (source === 'greenhouse' && (PARTNER_CALLS as readonly string[]).includes(call))
    return respond(
      await handleGreenhousePartner(
        { ...request, call: call as PartnerCall },
        { ...deps, countResponseError: (connectionId) => metrics.count('OrderResponseError', connectionId) },
      ),
    );
  if (source === 'ashby' && (ASHBY_CALLS as readonly string[]).includes(call))
    return respond(await handleAshbyPartner({ ...request, call: call as AshbyCall }, deps));
  // Kombo's webhook: one URL per connection (its Kombo account), the connection's id in place of a call.
  if (source === 'kombo') return respond(await handleKomboWebhook(call, { ...request, call }, deps));
  return respond({ status: 404, body: { errors: [`no call ${source}/${call}`] } });
}

function respond(answer: PartnerAnswer): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: answer.status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(answer.body),
  };
}
