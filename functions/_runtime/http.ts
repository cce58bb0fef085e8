import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { invocationKeys, withLogContext } from '../../shared/observability/log-context';

/** The connector's webhook endpoints refuse bodies over 1 MiB before reading them further. */
export const MAX_WEBHOOK_BYTES = 1024 * 1024;

/** JSON answers are never sniffed as another type, nor kept by a cache (the console's and connect pages' too). */
const JSON_HEADERS = {
  'content-type': 'application/json',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
} as const;

export function jsonResponse(statusCode: number, body: Record<string, unknown>): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { ...JSON_HEADERS }, body: JSON.stringify(body) };
}

/** The body bytes as received: API Gateway passes binary bodies base64-encoded and text as UTF-8. */
export function rawBody(event: APIGatewayProxyEventV2): Buffer {
  if (!event.body) return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}

/** Header names lower-cased (HTTP API v2 already does; local callers may not). */
export function lowerCaseHeaders(event: APIGatewayProxyEventV2): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(event.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

/** An HTTP endpoint's work: the request, and the invocation's context (none in a local call or a test). */
export type HttpWork = (
  event: APIGatewayProxyEventV2,
  context: Context | undefined,
) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * The Lambda handler of an HTTP endpoint: its work runs with one correlation id per request (API Gateway's request
 * id), so the lines it logs and the worker's lines about what it enqueued carry the same.
 */
export const httpHandler =
  (work: HttpWork) =>
  (event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> => {
    const correlation = { correlation_id: event.requestContext?.requestId ?? randomUUID() };
    return withLogContext({ ...invocationKeys(context), ...correlation }, () => work(event, context));
  };
