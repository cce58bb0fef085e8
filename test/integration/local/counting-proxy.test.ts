import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCountingProxy } from '../../../infra/local/counting-proxy';
import { listen, readBody, type RunningServer } from '../../../infra/local/sandbox/http-kit';

/** The benchmark's counter in front of DynamoDB: each request by operation, and by the tables it names. */
describe('Counting proxy: DynamoDB requests by operation and table', () => {
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

  it('counts a request once by operation and once per table it names, and forwards its body unchanged', async () => {
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
      proxy.reset();
      expect(proxy.total()).toBe(0);
      expect(proxy.byTable.size).toBe(0);
    } finally {
      await proxy.close();
    }
  });
});
