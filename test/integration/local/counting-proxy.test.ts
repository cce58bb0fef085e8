import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCountingProxy } from '../../../infra/local/counting-proxy';
import { listen, readBody, type RunningServer } from '../../../infra/local/sandbox/http-kit';

/** The bench's counter before DynamoDB and SQS: each request by operation, and by the tables or queue it names. */
describe('Counting proxy: DynamoDB and SQS requests by operation, table and queue', () => {
  let upstream: RunningServer;
  const received: string[] = [];
  beforeAll(async () => {
    upstream = await listen(async (request, response) => {
      received.push((await readBody(request)).toString('utf8'));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    }, 0);
  });
  afterAll(() => upstream.close());

  it('counts a request by operation and once per table or queue it names; forwards the body unchanged', async () => {
    const proxy = await startCountingProxy(upstream.url);
    try {
      const send = async (operation: string, body: unknown) => {
        const answer = await fetch(proxy.url, {
          method: 'POST',
          headers: { 'x-amz-target': `DynamoDB_20120810.${operation}` },
          body: JSON.stringify(body),
        });
        expect(answer.status).toBe(200);
      };
      await send('UpdateItem', { TableName: 'bench-applications', Key: {} });
      await send('UpdateItem', { TableName: 'bench-applications', Key: {} });
      await send('BatchWriteItem', { RequestItems: { 'bench-events': [], 'bench-activity': [] } });
      await send('TransactWriteItems', {
        TransactItems: [{ Put: { TableName: 'bench-events' } }, { Update: { TableName: 'bench-applications' } }],
      });
      expect(Object.fromEntries(proxy.counts)).toEqual({ UpdateItem: 2, BatchWriteItem: 1, TransactWriteItems: 1 });
      expect(Object.fromEntries(proxy.byTable)).toEqual({
        'UpdateItem applications': 2,
        'BatchWriteItem events': 1,
        'BatchWriteItem activity': 1,
        'TransactWriteItems events': 1,
        'TransactWriteItems applications': 1,
      });
      expect(JSON.parse(received[2] as string)).toEqual({ RequestItems: { 'bench-events': [], 'bench-activity': [] } });
      const sqs = async (operation: string, body: unknown) =>
        fetch(proxy.url, {
          method: 'POST',
          headers: { 'x-amz-target': `AmazonSQS.${operation}` },
          body: JSON.stringify(body),
        });
      await sqs('ReceiveMessage', { QueueUrl: 'http://127.0.0.1:1/000000000000/report-events' });
      await sqs('SendMessageBatch', { QueueUrl: 'http://127.0.0.1:1/000000000000/stage-events', Entries: [] });
      expect(Object.fromEntries(proxy.byQueue)).toEqual({
        'ReceiveMessage report-events': 1,
        'SendMessageBatch stage-events': 1,
      });
      expect(JSON.parse(received[5] as string)).toMatchObject({ Entries: [] });
      proxy.reset();
      expect(proxy.total()).toBe(0);
      expect(proxy.byTable.size + proxy.byQueue.size).toBe(0);
    } finally {
      await proxy.close();
    }
  });
});
