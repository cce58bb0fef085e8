import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { PipelineLogger, WebhookContext } from '../../shared/pipeline/ports';
import { connectionDisabled, webhookContext } from './connections';
import { jsonResponse } from './http';
import { errorCode, errorMessage } from '../../shared/errors';

export type WebhookConnection =
  | { ok: true; context: WebhookContext }
  | { ok: false; response: APIGatewayProxyStructuredResultV2 };

/**
 * The connection a webhook is addressed to, before anything of the body is read. An unknown connection is 404
 * (docs/operations.md, Security: ids are addresses, not credentials). A secret that cannot be read (missing,
 * invalid, Secrets Manager down) is 503, so the sender delivers again once it is fixed, with an ERROR line naming
 * the connection and the reason for the operator (never the secret's value).
 */
export async function webhookConnection(
  connectionId: string,
  logger: PipelineLogger,
  load: (connectionId: string) => Promise<WebhookContext | undefined> = webhookContext,
): Promise<WebhookConnection> {
  try {
    const context = await load(connectionId);
    if (!context) return { ok: false, response: jsonResponse(404, { error: `unknown connection ${connectionId}` }) };
    return { ok: true, context };
  } catch (error) {
    logger.error('webhook: the connection cannot be loaded', {
      connectionId,
      code: errorCode(error),
      reason: errorMessage(error),
    });
    return { ok: false, response: jsonResponse(503, { error: 'the connection is not available; try again later' }) };
  }
}

/**
 * The answer to an authenticated delivery for a disabled connection: 200 (the sender must not retry), nothing
 * recorded or enqueued; undefined while the connection is on.
 */
export async function disabledAnswer(
  connectionId: string,
  logger: PipelineLogger,
): Promise<APIGatewayProxyStructuredResultV2 | undefined> {
  if (!(await connectionDisabled(connectionId))) return undefined;
  logger.info('webhook: the connection is disabled; nothing enqueued', { connectionId });
  return jsonResponse(200, { status: 'ignored', reason: 'connection-disabled' });
}
