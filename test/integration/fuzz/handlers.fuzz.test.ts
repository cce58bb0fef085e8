import { createHmac } from 'node:crypto';
import { rmSync } from 'node:fs';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Context,
  SQSEvent,
  SQSBatchResponse,
} from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSecretOf } from '../../helpers/connections';
import { startLocalStack, type LocalStack } from '../../../infra/local/local-stack';
import { runningEmulators } from '../../helpers/local-stack';
import type { AtsKind } from '../../../shared/config';

const WORK_DIR = `.local/test-fuzz-${process.pid}`;
/** A fixed seed keeps a failure reproducible; FUZZ_SEED overrides it to explore. */
const SEED = Number(process.env.FUZZ_SEED ?? 424242);
type HttpHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

const ACCEPTED_STATUSES = new Set([200, 400, 401, 404, 413]);

/** Bodies a hostile or broken sender might send: text, JSON of any shape, invalid UTF-8, deep nesting. */
const deepNesting = fc.integer({ min: 50, max: 5000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth));
const invalidUtf8 = fc
  .uint8Array({ minLength: 1, maxLength: 200 })
  .map((bytes) => Buffer.concat([Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(bytes)]));
const anyBody = fc.oneof(
  fc.string({ maxLength: 300 }).map((s) => Buffer.from(s)),
  fc.json({ maxDepth: 6 }).map((s) => Buffer.from(s)),
  invalidUtf8,
  deepNesting.map((s) => Buffer.from(s)),
  fc.constant(Buffer.alloc(0)),
);
/** Valid JSON of a plausible but wrong shape for each ATS (the right envelope, the wrong insides). */
const shapedBody = (kind: AtsKind) =>
  fc
    .record({
      inner: fc.jsonValue({ maxDepth: 4 }),
      stage: fc.string({ maxLength: 20 }),
      id: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
    })
    .map(({ inner, stage, id }) => {
      const document =
        kind === 'greenhouse'
          ? {
              action: 'candidate_stage_change',
              payload: { application: { id, candidate: inner, jobs: [{ id }], current_stage: { id, name: stage } } },
            }
          : kind === 'ashby'
            ? {
                action: 'candidateStageChange',
                data: { application: { id, candidate: inner, currentInterviewStage: { id: stage }, job: inner } },
              }
            : kind === 'lever'
              ? { event: 'candidateStageChange', data: { opportunityId: id, toStageId: inner } }
              : { event_type: 'candidate_moved', data: { id, job: inner, stage } };
      return Buffer.from(JSON.stringify(document));
    });
const headerMap = fc.dictionary(
  fc.constantFrom(
    'content-type',
    'signature',
    'ashby-signature',
    'x-workable-signature',
    'greenhouse-event-id',
    'x-forwarded-for',
    'x-random',
  ),
  fc.string({ maxLength: 80 }),
  { maxKeys: 5 },
);

function event(
  path: Record<string, string>,
  body: Buffer,
  headers: Record<string, string>,
  base64: boolean,
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /fuzz',
    rawPath: '/fuzz',
    rawQueryString: '',
    headers,
    pathParameters: path,
    isBase64Encoded: base64,
    body: base64 ? body.toString('base64') : body.toString('utf8'),
    requestContext: { http: { method: 'POST' } } as APIGatewayProxyEventV2['requestContext'],
  };
}

/** Signs as the ATS would, so the parser behind the signature check is reached too. */
function sign(kind: AtsKind, secret: string, body: Buffer): { body: Buffer; headers: Record<string, string> } {
  const hmac = (data: Buffer | string) => createHmac('sha256', secret).update(data).digest('hex');
  if (kind === 'greenhouse') return { body, headers: { signature: `sha256 ${hmac(body)}` } };
  if (kind === 'ashby') return { body, headers: { 'ashby-signature': `sha256=${hmac(body)}` } };
  if (kind === 'workable') return { body, headers: { 'x-workable-signature': hmac(body) } };
  // Lever signs token + triggeredAt inside the body: the signed fields are spliced into the raw text, which
  // is never re-serialised (a deeply nested body would not survive JSON.stringify, nor should it need to).
  const token = createHmac('sha256', 'token').update(body).digest('hex');
  const triggeredAt = Date.now();
  const signed = `"token":"${token}","triggeredAt":${triggeredAt},"signature":"${hmac(`${token}${triggeredAt}`)}"`;
  const text = body.toString('utf8');
  const spliced =
    text.startsWith('{') && text.trim().length > 2
      ? `{${signed},${text.slice(1)}`
      : `{${signed},"event":${text || 'null'}}`;
  return { body: Buffer.from(spliced), headers: {} };
}

describe('Property: no input crashes a handler, answers 5xx or enqueues anything', () => {
  let stack: LocalStack;
  let atsWebhook: HttpHandler;
  let interviewWebhook: HttpHandler;
  let inviteWorker: SqsHandler;
  let writebackWorker: SqsHandler;
  let cases = 0;
  const processed = () => stack.sources.invite.stats.records + stack.sources.writeback.stats.records;

  beforeAll(async () => {
    stack = await startLocalStack({
      running: runningEmulators(),
      reconcileIntervalMs: 0,
      workDir: WORK_DIR,
      logLevel: process.env.FUZZ_LOG_LEVEL ?? 'SILENT',
    });
    atsWebhook = (await import('../../../functions/ats-webhook/ats-webhook.handler')).handler;
    interviewWebhook = (await import('../../../functions/interview-webhook/interview-webhook.handler')).handler;
    inviteWorker = (await import('../../../functions/invite-worker/invite-worker.handler'))
      .handler as unknown as SqsHandler;
    writebackWorker = (await import('../../../functions/writeback-worker/writeback-worker.handler'))
      .handler as unknown as SqsHandler;
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(WORK_DIR, { recursive: true, force: true });
    // The issue asks for at least 10,000 cases a run.
    expect(cases).toBeGreaterThanOrEqual(10_000);
  });

  it.each(['greenhouse', 'ashby', 'lever', 'workable'] as const)(
    'ats-webhook (%s): random bodies and headers, signed or not',
    async (kind) => {
      const connection = stack.connections.find((c) => c.ats === kind)!;
      const secret = webhookSecretOf(stack.secrets[connection.secretRef]!);
      const { createAtsAdapter } = await import('../../../shared/ats');
      const adapter = createAtsAdapter(connection, stack.secrets[connection.secretRef]!);
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(anyBody, shapedBody(kind)),
          headerMap,
          fc.boolean(),
          fc.boolean(),
          async (body, headers, signed, base64) => {
            cases++;
            const request = signed ? sign(kind, secret, body) : { body, headers: {} };
            const answer = await atsWebhook(
              event({ connectionId: connection.id }, request.body, { ...headers, ...request.headers }, base64),
            );
            expect(ACCEPTED_STATUSES.has(answer.statusCode ?? 0)).toBe(true);
            if (JSON.parse(answer.body ?? '{}').status === 'accepted') {
              // Only a well-formed, authentic stage change is enqueued. Lever signs only its token, so a well-formed
              // body with unknown ids is valid input: the worker must then refuse it when the API does not confirm it.
              accepted++;
              expect(adapter.parseWebhook({ headers: {}, rawBody: request.body }).kind).toBe('stage-entered');
            }
          },
        ),
        { numRuns: 1500, seed: SEED },
      );
      await stack.waitForQuiet(60_000);
      if (kind !== 'lever') expect(accepted).toBe(0);
      const { ScanCommand } = await import('@aws-sdk/client-dynamodb');
      const applications =
        (await stack.dynamo.send(new ScanCommand({ TableName: stack.tables.applications }))).Count ?? 0;
      const emails = ((await (await fetch(`${stack.emulators.endpoints.ses}/store`)).json()) as { emails: unknown[] })
        .emails.length;
      expect({ applications, emails }).toEqual({ applications: 0, emails: 0 });
    },
    120_000,
  );

  it('ats-webhook: bodies over 1 MiB → 413, unknown connections → 404', async () => {
    const huge = Buffer.alloc(1024 * 1024 + 1, 'a');
    expect((await atsWebhook(event({ connectionId: 'demo-greenhouse' }, huge, {}, false))).statusCode).toBe(413);
    expect((await atsWebhook(event({ connectionId: 'demo-greenhouse' }, huge, {}, true))).statusCode).toBe(413);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), anyBody, async (connectionId, body) => {
        cases++;
        fc.pre(!stack.connections.some((c) => c.id === connectionId));
        expect((await atsWebhook(event({ connectionId }, body, {}, false))).statusCode).toBe(404);
      }),
      { numRuns: 500, seed: SEED },
    );
  });

  it('interview-webhook: random bodies with the right token, and random tokens', async () => {
    const connection = stack.connections[0]!;
    const token = stack.secrets[connection.secretRef]!.interviewWebhookToken;
    const before = processed();
    const reportShaped = fc
      .record({
        event: fc.oneof(fc.constant('interview_report.created'), fc.string()),
        data: fc.jsonValue({ maxDepth: 4 }),
      })
      .map((d) => Buffer.from(JSON.stringify(d)));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(anyBody, reportShaped),
        fc.oneof(fc.constant(token), fc.string({ maxLength: 64 })),
        fc.boolean(),
        async (body, candidateToken, base64) => {
          cases++;
          const answer = await interviewWebhook(
            event({ connectionId: connection.id, token: candidateToken }, body, {}, base64),
          );
          expect(ACCEPTED_STATUSES.has(answer.statusCode ?? 0)).toBe(true);
          if (candidateToken !== token) expect(answer.statusCode).toBe(401);
          expect(JSON.parse(answer.body ?? '{}').status).not.toBe('accepted');
        },
      ),
      { numRuns: 2500, seed: SEED },
    );
    await stack.waitForQuiet();
    expect(processed()).toBe(before);
  }, 120_000);

  it.each(['invite', 'writeback'] as const)(
    '%s-worker: random messages are acknowledged as poison, never thrown or retried',
    async (which) => {
      const handler = which === 'invite' ? inviteWorker : writebackWorker;
      const kind = which === 'invite' ? 'stage-entered' : 'report-created';
      const messageShaped = fc
        .record({
          v: fc.oneof(fc.constant(1), fc.integer()),
          kind: fc.oneof(fc.constant(kind), fc.string()),
          connectionId: fc.string(),
          event: fc.jsonValue({ maxDepth: 3 }),
          reportId: fc.jsonValue({ maxDepth: 1 }),
        })
        .map((d) => JSON.stringify(d));
      const body = fc.oneof(
        fc.string({ maxLength: 300 }),
        fc.json({ maxDepth: 5 }),
        messageShaped,
        invalidUtf8.map((b) => b.toString('latin1')),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(body, { minLength: 1, maxLength: 10 }), async (bodies) => {
          cases += bodies.length;
          const records = bodies.map((b, i) => ({
            messageId: `fuzz-${i}`,
            receiptHandle: `r-${i}`,
            body: b,
            attributes: { ApproximateReceiveCount: '1' },
            messageAttributes: {},
            md5OfBody: '',
            eventSource: 'aws:sqs',
            eventSourceARN: 'arn:fuzz',
            awsRegion: 'us-east-1',
          }));
          const response = await handler(
            { Records: records } as SQSEvent,
            { getRemainingTimeInMillis: () => 10_000 } as Context,
          );
          expect(response.batchItemFailures).toEqual([]);
        }),
        { numRuns: 300, seed: SEED },
      );
    },
    120_000,
  );
});
