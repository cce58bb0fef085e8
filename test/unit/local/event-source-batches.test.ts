import { describe, expect, it } from 'vitest';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { eventSourceBatches, startSqsEventSource } from '../../../infra/local/sqs-event-source';

describe('eventSourceBatches', () => {
  it("reads as many batches at once as the function has environments, and two at the least, as Lambda's do", () => {
    expect(eventSourceBatches('environments', 5)).toBe(5);
    expect(eventSourceBatches('environments', 2)).toBe(2);
    // One environment: the next batch is gathered while it works, and waits for it.
    expect(eventSourceBatches('environments', 1)).toBe(2);
  });

  it('in one process, where nothing waits for an environment, reads as many as its concurrency', () => {
    expect(eventSourceBatches('one-process', 1)).toBe(1);
    expect(eventSourceBatches('one-process', 5)).toBe(5);
  });
});

describe('the local event source on a fair queue', () => {
  /** A queue of `visible` messages behind a fake client that records each receive's size and wait. */
  function fakeQueue(visible: number) {
    let left = visible;
    const receives: { max: number; wait: number }[] = [];
    const client = {
      send: async (command: { input: Record<string, unknown> }, options?: { abortSignal?: AbortSignal }) => {
        if (!('MaxNumberOfMessages' in command.input)) return {};
        const max = command.input.MaxNumberOfMessages as number;
        const wait = command.input.WaitTimeSeconds as number;
        receives.push({ max, wait });
        const count = Math.min(max, left);
        left -= count;
        if (count === 0 && wait > 0)
          // An empty queue's long poll answers at the end of its wait, or when the source stops.
          await new Promise((resolve) => options?.abortSignal?.addEventListener('abort', resolve, { once: true }));
        const n = receives.length;
        return {
          Messages: Array.from({ length: count }, (_, i) => ({
            MessageId: `m${n}-${i}`,
            ReceiptHandle: `r${n}-${i}`,
            Body: JSON.stringify({ connectionId: 'c1' }),
          })),
        };
      },
    };
    return { client: client as unknown as SQSClient, receives };
  }

  it.each([
    [13, [10, 3]],
    [10, [10]],
  ])(
    "once it has read %i messages, to the queue's end, watches it with one long poll and asks nothing more",
    async (visible, batches) => {
      const { client, receives } = fakeQueue(visible);
      const handled: number[] = [];
      const source = startSqsEventSource({
        name: 'Worker',
        queueUrl: 'http://127.0.0.1:1/queue',
        queueArn: 'arn:aws:sqs:local:000000000000:queue',
        handler: async (event) => {
          handled.push(event.Records.length);
          return { batchItemFailures: [] };
        },
        maxConcurrency: 1,
        waitTimeSeconds: 5,
        client,
        tenantOf: (body) => (JSON.parse(body) as { connectionId: string }).connectionId,
      });
      try {
        const deadline = Date.now() + 5_000;
        while (receives.filter((r) => r.wait === 20).length < 2 && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 10));
      } finally {
        await source.stop();
      }
      // The watch finds the first message, its batch is gathered (full), the rest read ahead to the queue's end.
      expect(receives.slice(0, 3)).toEqual([
        { max: 1, wait: 20 },
        { max: 9, wait: 5 },
        { max: 10, wait: 0 },
      ]);
      expect(handled).toEqual(batches);
      // What was read ahead is handed out without asking the queue again; then one poller watches it, one long poll.
      expect(receives.slice(3)).toEqual([{ max: 1, wait: 20 }]);
    },
  );
});
