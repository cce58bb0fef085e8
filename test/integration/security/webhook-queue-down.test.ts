import { createHmac, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { webhookSecretOf } from '../../helpers/connections';
import { runningEmulators, scanTable } from '../../helpers/local-stack';
import { startLocalStack, type LocalStack } from '../../../infra/local/local-stack';
import { ENV } from '../../../functions/_runtime/env';

const WORK_DIR = `.local/test-queue-down-${process.pid}`;
type HttpHandler = (event: APIGatewayProxyEventV2, context?: Context) => Promise<APIGatewayProxyStructuredResultV2>;

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

describe('ATS webhook: a delivery the queue did not take, or took too late', () => {
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
  it('records a stage change as pending once sent: one cut short before is found by the next sweep', async () => {
    const connection = stack.connections.find((c) => c.ats === 'lever')!;
    const secret = webhookSecretOf(stack.secrets[connection.secretRef]!);
    // In the trigger's stage in Lever, its own webhook not sent: only the delivery below tells the connector.
    stack.lever.setFaults({ dropStageChangeRate: 1 });
    const application = stack.lever.addCandidate({ firstName: 'Cut', lastName: 'Short', email: 'cut@example.com' });
    await stack.lever.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    stack.lever.setFaults({ dropStageChangeRate: 0 });
    const delivery = { ...leverStageChange(secret, application.id), pathParameters: { connectionId: connection.id } };
    const ledgerRecords = async () =>
      (await scanTable(stack, stack.tables.events)).filter((r) => String(r.pk).endsWith(`#stage#${application.id}`));
    const replayKeys = async () =>
      (await scanTable(stack, stack.tables.events)).filter((r) => r.kind === 'replay-key').length;
    const keysBefore = await replayKeys();

    // The function is cut short while SQS takes the message (its timeout, say): the send never answers.
    let atTheSend: { ledger: unknown[]; replayKeys: number } | undefined;
    const send = SQSClient.prototype.send;
    const spy = vi.spyOn(SQSClient.prototype, 'send').mockImplementation(async function (this: SQSClient, ...args) {
      const command: unknown = args[0];
      if (command instanceof SendMessageCommand && String(command.input.MessageBody).includes(application.id)) {
        atTheSend = { ledger: await ledgerRecords(), replayKeys: await replayKeys() };
        return new Promise(() => undefined);
      }
      return (send as (...a: unknown[]) => Promise<unknown>).apply(this, args);
    });
    try {
      void atsWebhook(delivery);
      for (let i = 0; i < 100 && !atTheSend; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      spy.mockRestore();
    }
    // The replay key was claimed before the send; nothing says a message is pending.
    expect(atTheSend).toEqual({ ledger: [], replayKeys: keysBefore + 1 });

    // Lever's next delivery of it is a replay; the sweep finds the application at once and enqueues it.
    expect((await atsWebhook(delivery)).statusCode).toBe(401);
    const run = await stack.reconcileNow();
    expect(run.swept).toBeGreaterThanOrEqual(1);
    expect(await ledgerRecords()).toHaveLength(1);
  });
  it('gives up a send that does not answer before the timeout: 503, and the next delivery is accepted', async () => {
    const connection = stack.connections.find((c) => c.ats === 'lever')!;
    const secret = webhookSecretOf(stack.secrets[connection.secretRef]!);
    const opportunityId = `o-${randomUUID().slice(0, 8)}`;
    const delivery = { ...leverStageChange(secret, opportunityId), pathParameters: { connectionId: connection.id } };
    // SQS takes the request and never answers; only the call's abort signal ends it.
    const send = SQSClient.prototype.send;
    const spy = vi.spyOn(SQSClient.prototype, 'send').mockImplementation(function (this: SQSClient, ...args) {
      const [command, options]: unknown[] = args;
      if (command instanceof SendMessageCommand && String(command.input.MessageBody).includes(opportunityId)) {
        const signal = (options as { abortSignal?: AbortSignal } | undefined)?.abortSignal;
        return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted'))));
      }
      return (send as (...a: unknown[]) => Promise<unknown>).apply(this, args);
    });
    const started = Date.now();
    const answer = await atsWebhook(delivery, { getRemainingTimeInMillis: () => 1_000 } as Context).finally(() =>
      spy.mockRestore(),
    );
    // Answered within the function's second, leaving nothing that says a message is pending.
    expect(answer.statusCode).toBe(503);
    expect(Date.now() - started).toBeLessThan(1_000);
    const ledger = (await scanTable(stack, stack.tables.events)).filter((r) =>
      String(r.pk).endsWith(`#stage#${opportunityId}`),
    );
    expect(ledger).toEqual([]);
    // Its replay key was taken back: Lever's next delivery of it is accepted.
    expect((await atsWebhook(delivery)).statusCode).toBe(200);
  });
});
