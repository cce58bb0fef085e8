import type { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { QueueMessage } from './messages.schema';
import type { QueuePublisher } from './queue.publisher';
import { sendMessageInput, type PublishOptions } from './send-input';

/**
 * A publisher whose SQS client is loaded on first use. A worker sends only when it defers a message, which is
 * rare; a static import of the client would add about 40 ms to every cold start (npm run bench). The import
 * must stay dynamic: esbuild hoists a bundle's static imports of external packages to its top.
 */
export function lazyQueuePublisher(): Pick<QueuePublisher, 'publish'> {
  let loading: Promise<{ client: SQSClient; Command: typeof SendMessageCommand }> | undefined;
  return {
    async publish(queueUrl: string, message: QueueMessage, options?: PublishOptions): Promise<void> {
      loading ??= import('@aws-sdk/client-sqs').then((sdk) => ({
        client: new sdk.SQSClient({}),
        Command: sdk.SendMessageCommand,
      }));
      const { client, Command } = await loading.catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      await client.send(new Command(sendMessageInput(queueUrl, message, options)));
    },
  };
}
