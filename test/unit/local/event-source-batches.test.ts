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
  /** A queue in memory: a receive takes what is there, or waits a moment and answers empty. */
  function fakeQueue(count: number) {
    const visible: Message[] = Array.from({ length: count }, (_, i) => ({
      MessageId: `m${i}`,
      ReceiptHandle: `r${i}`,
      Body: JSON.stringify({ i }),
    }));
    const deleted: string[] = [];
    let receiving = 0;
    let mostReceiving = 0;
    const client = {
      async send(command: { input: Record<string, unknown> }) {
        if (command instanceof DeleteMessageBatchCommand) {
          deleted.push(...(command.input.Entries ?? []).map((e) => e.ReceiptHandle as string));
          return {};
        }
        receiving++;
        mostReceiving = Math.max(mostReceiving, receiving);
        try {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return { Messages: visible.splice(0, Number(command.input.MaxNumberOfMessages)) };
        } finally {
          receiving--;
        }
      },
    };
    return { client: client as unknown as SQSClient, deleted, mostReceiving: () => mostReceiving };
  }

  it('gathers one batch at a time while the batches gathered before run side by side, and deletes each once', async () => {
    const queue = fakeQueue(45);
    let running = 0;
    let mostRunning = 0;
    const source = startSqsEventSource({
      name: 'worker',
      queueUrl: 'http://127.0.0.1/queue',
      queueArn: 'arn:aws:sqs:local:000000000000:queue',
      client: queue.client,
      maxConcurrency: 3,
      waitTimeSeconds: 0,
      handler: async () => {
        running++;
        mostRunning = Math.max(mostRunning, running);
        await new Promise((resolve) => setTimeout(resolve, 50));
        running--;
        return { batchItemFailures: [] };
      },
    });
    try {
      for (let i = 0; i < 200 && queue.deleted.length < 45; i++) await new Promise((r) => setTimeout(r, 10));
    } finally {
      await source.stop();
    }
    expect(new Set(queue.deleted).size).toBe(45);
    expect(queue.deleted).toHaveLength(45);
    // Two polls never wait at once (local-aws-sqs would split a group between them), yet batches run together.
    expect(queue.mostReceiving()).toBe(1);
    expect(mostRunning).toBeGreaterThan(1);
  });
});
