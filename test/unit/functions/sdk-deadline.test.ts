import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqsBatchHandler } from '../../../functions/_runtime/sqs-batch';
import { AWS_CLIENT_CONFIG } from '../../../shared/aws/client-config';
import { withDeadline } from '../../../shared/aws/deadline';
import { type DynamoMappingStore, dynamoMappingStore } from '../../../shared/mapping';
import { startRecordingServer, waitFor } from '../../helpers/local-http';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A DynamoDB endpoint that takes the request and never answers, as a stalled connection does. */
describe("The worker's deadline reaches the AWS SDK calls", () => {
  let server: Awaited<ReturnType<typeof startRecordingServer>>;
  let store: DynamoMappingStore;

  beforeAll(async () => {
    server = await startRecordingServer(() => undefined);
    const client = new DynamoDBClient({
      ...AWS_CLIENT_CONFIG,
      endpoint: server.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    store = dynamoMappingStore({
      client,
      tables: { jobs: 'jobs', applications: 'applications', events: 'events' },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('aborts an in-flight DynamoDB call when the deadline fires, before the client would time out', async () => {
    // The deadline fires once the request is in flight (however slow the machine is to send it).
    const deadline = new AbortController();
    const call = withDeadline(deadline.signal, () =>
      store.getJob({ connectionId: 'acme', atsJobId: '1', triggerId: 't' }),
    ).catch((e: unknown) => e as Error);
    await waitFor(() => server.received.length > 0, 4_000, 'the request in flight');
    deadline.abort();
    const error = await call;
    // Not the 5-s TimeoutError of the request handler: the deadline's abort.
    expect(error).toMatchObject({ name: 'AbortError' });
  });

  it("throws on an answer past the client's request timeout, rather than waiting for the function's", async () => {
    // The stack's handler settings, with a short timeout and one attempt to keep the test quick.
    const client = new DynamoDBClient({
      ...AWS_CLIENT_CONFIG,
      maxAttempts: 1,
      requestHandler: { ...AWS_CLIENT_CONFIG.requestHandler, requestTimeout: 300 },
      endpoint: server.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const stalled = dynamoMappingStore({ client, tables: { jobs: 'jobs', applications: 'applications', events: 'e' } });
    const outcome = await Promise.race([
      stalled.getJob({ connectionId: 'acme', atsJobId: '1', triggerId: 't' }).catch((e: unknown) => e as Error),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5_000)),
    ]);
    expect(outcome).toMatchObject({ name: 'TimeoutError' });
  });

  it('leaves the message to be retried (a batch item failure), not acknowledged', async () => {
    const handler = sqsBatchHandler(
      v.object({ v: v.literal(1), kind: v.literal('stage-entered'), enqueueId: v.string() }) as never,
      async () => void (await store.getJob({ connectionId: 'acme', atsJobId: '1', triggerId: 't' })),
      silent,
    );
    const record = { messageId: 'm-1', body: JSON.stringify({ v: 1, kind: 'stage-entered', enqueueId: 'e' }) };
    // The only record failed: the whole batch stays on the queue (Powertools' FullBatchFailureError), retried.
    await expect(
      handler({ Records: [record as SQSRecord] }, { getRemainingTimeInMillis: () => 600 } as Context),
    ).rejects.toThrow(/All records failed/);
  });
});
