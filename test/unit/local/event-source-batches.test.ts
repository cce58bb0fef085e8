import { DeleteMessageBatchCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
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

describe('startSqsEventSource', () => {
  /** A queue as local-aws-sqs serves one: a receive is held until it can take all it asks for, or its wait is over. */
  function holdingQueue() {
    const visible: Message[] = [];
    const deleted: string[] = [];
    const client = {
      async send(command: { input: Record<string, unknown> }, options?: { abortSignal?: AbortSignal }) {
        if (command instanceof DeleteMessageBatchCommand) {
          deleted.push(...(command.input.Entries ?? []).map((e) => e.ReceiptHandle as string));
          return {};
        }
        const max = Number(command.input.MaxNumberOfMessages);
        const until = Date.now() + Number(command.input.WaitTimeSeconds) * 1000;
        // Bounded by the receive's wait (20 s at the most), and given up when the source stops.
        while (visible.length < max && Date.now() < until) {
          if (options?.abortSignal?.aborted) throw new Error('aborted');
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return { Messages: visible.splice(0, max) };
      },
    };
    const send = (count: number) =>
      visible.push(
        ...Array.from({ length: count }, (_, i) => ({
          MessageId: `m${i}`,
          ReceiptHandle: `r${i}`,
          Body: `{"i":${i}}`,
        })),
      );
    return { client: client as unknown as SQSClient, deleted, send };
  }

  it("gathers a quiet queue's group into one batch: no second poller watches while the first gathers", async () => {
    const queue = holdingQueue();
    const batches: number[] = [];
    const source = startSqsEventSource({
      name: 'worker',
      queueUrl: 'http://127.0.0.1/queue',
      queueArn: 'arn:aws:sqs:local:000000000000:queue',
      client: queue.client,
      maxConcurrency: 5,
      waitTimeSeconds: 0.3,
      handler: async (event) => {
        batches.push(event.Records.length);
        return { batchItemFailures: [] };
      },
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      // A group back for its turns: three messages at once on a queue one poller watches.
      queue.send(3);
      for (let i = 0; i < 200 && queue.deleted.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    } finally {
      await source.stop();
    }
    expect(queue.deleted).toHaveLength(3);
    expect(batches).toEqual([3]);
  });
});
