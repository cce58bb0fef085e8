import type { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { QueueMessage } from './messages.schema';
import { fairQueueTenant } from './fair-queue';

/**
 * A publisher whose SQS client is loaded on first use. A worker sends only when it defers a message, which is
 * rare; a static import of the client would add about 40 ms to every cold start (npm run bench). The import
 * must stay dynamic: esbuild hoists a bundle's static imports of external packages to its top.
 */
export function lazyQueuePublisher(): DelayedBatchPublisher {
  let loading: Promise<{ client: SQSClient; Batch: typeof SendMessageBatchCommand }> | undefined;
  const sdk = async () => {
    loading ??= import('@aws-sdk/client-sqs').then((sdk) => ({
      client: new sdk.SQSClient({}),
      Batch: sdk.SendMessageBatchCommand,
    }));
    return loading.catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
  };
  return {
    async publishDelayed(queueUrl, entries, signal) {
      const { client, Batch } = await sdk();
      const sent: boolean[] = [];
      for (let start = 0; start < entries.length; start += SQS_BATCH_LIMIT) {
        const chunk = entries.slice(start, start + SQS_BATCH_LIMIT);
        const result = await client
          .send(
            new Batch({
              QueueUrl: queueUrl,
              Entries: chunk.map((entry, index) => ({
                Id: String(index),
                MessageBody: JSON.stringify(entry.message),
                MessageGroupId: fairQueueTenant(entry.message),
                DelaySeconds: entry.delaySeconds,
              })),
            }),
            { abortSignal: signal },
          )
          .catch(() => undefined);
        const failed = new Set(
          (result ? (result.Failed ?? []) : chunk.map((_, i) => ({ Id: String(i) }))).map((f) => f.Id),
        );
        sent.push(...chunk.map((_, index) => !failed.has(String(index))));
      }
      return sent;
    },
  };
}

/** SendMessageBatch takes at most 10 entries (SQS API reference, SendMessageBatch). */
const SQS_BATCH_LIMIT = 10;

/** Sends messages back with their own delays, 10 to a request; answers, per entry, whether SQS took it. */
export interface DelayedBatchPublisher {
  publishDelayed(
    queueUrl: string,
    entries: readonly { message: QueueMessage; delaySeconds: number }[],
    signal?: AbortSignal,
  ): Promise<boolean[]>;
}
