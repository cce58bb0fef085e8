import { createHmac, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSecretOf } from '../../helpers/connections';
import { runningEmulators, scanTable } from '../../helpers/local-stack';
import { startLocalStack, type LocalStack } from '../../../infra/local/local-stack';
import { ENV } from '../../../functions/_runtime/env';

const WORK_DIR = `.local/test-queue-down-${process.pid}`;
type HttpHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

/** A signed Lever stage change into the AI interview stage, as Lever delivers it (token + triggeredAt signed). */
function leverStageChange(secret: string, opportunityId: string): APIGatewayProxyEventV2 {
  const token = randomUUID();
  const triggeredAt = Date.now();
  const signature = createHmac('sha256', secret).update(`${token}${triggeredAt}`).digest('hex');
  const body = JSON.stringify({
    triggeredAt,
    token,
    signature,
    event: 'candidateStageChange',
    data: { opportunityId, toStageId: 'c1b2-ai-interview' },
  });
  return {
    version: '2.0',
    routeKey: 'POST /webhooks/ats/{connectionId}',
    rawPath: '/webhooks/ats',
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    isBase64Encoded: false,
    body,
    requestContext: { http: { method: 'POST' } } as APIGatewayProxyEventV2['requestContext'],
  };
}

describe('ATS webhook: a delivery the queue did not take', () => {
  let stack: LocalStack;
  let atsWebhook: HttpHandler;

  beforeAll(async () => {
    stack = await startLocalStack({
      running: runningEmulators(),
      reconcileIntervalMs: 0,
      workDir: WORK_DIR,
      logLevel: 'SILENT',
    });
    atsWebhook = (await import('../../../functions/ats-webhook/ats-webhook.handler')).handler;
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(WORK_DIR, { recursive: true, force: true });
  });

  it('answers 503 and takes back its replay key and ledger record: the same delivery is accepted after', async () => {
    const connection = stack.connections.find((c) => c.ats === 'lever')!;
    const secret = webhookSecretOf(stack.secrets[connection.secretRef]!);
    const opportunityId = `o-${randomUUID().slice(0, 8)}`;
    const delivery = { ...leverStageChange(secret, opportunityId), pathParameters: { connectionId: connection.id } };
    const recorded = async () =>
      (await scanTable(stack, stack.tables.events))
        .filter((r) => r.kind === 'replay-key' || String(r.pk).endsWith(`#stage#${opportunityId}`))
        .map((r) => r.kind)
        .sort();
    const before = (await scanTable(stack, stack.tables.events)).filter((r) => r.kind === 'replay-key').length;

    const queueUrl = process.env[ENV.stageQueueUrl];
    process.env[ENV.stageQueueUrl] = `${queueUrl}-missing`;
    const refused = await atsWebhook(delivery).finally(() => {
      process.env[ENV.stageQueueUrl] = queueUrl;
    });
    expect(refused.statusCode).toBe(503);
    // Nothing left that would refuse Lever's next delivery or keep the sweep waiting for a message never sent.
    expect((await recorded()).filter((kind) => kind !== 'replay-key')).toEqual([]);
    expect((await recorded()).length).toBe(before);

    const accepted = await atsWebhook(delivery);
    expect(accepted.statusCode).toBe(200);
    expect(await recorded()).toEqual([...Array(before + 1).fill('replay-key'), 'enqueued'].sort());
    // And once accepted, the same delivery again is a replay.
    expect((await atsWebhook(delivery)).statusCode).toBe(401);
  });
});
