import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { QueueMessage } from './messages.schema';
import { fairQueueTenant } from './fair-queue';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import { OutwardCallError } from '../errors';

export interface PublishOptions {
  /** 0 to 900 (SQS SendMessage DelaySeconds): the message stays out of sight that long. */
  delaySeconds?: number;
}

/** SendMessageBatch takes at most 10 entries (SQS API reference, SendMessageBatch). */
const SQS_BATCH_LIMIT = 10;

/** SQS did not take every message: an outward call that may pass when tried again. */
export class QueuePublishError extends OutwardCallError {
  public constructor(message: string, options: { cause?: unknown } = {}) {
    super('queue-publish-failed', message, { retryable: true, cause: options.cause });
    this.name = 'QueuePublishError';
  }
}

/** The only code that sends to SQS. */
export class QueuePublisher {
  private readonly client: SQSClient;

  public constructor(options: { client?: SQSClient } = {}) {
    this.client = options.client ?? new SQSClient(AWS_CLIENT_CONFIG);
  }

  public async publish(queueUrl: string, message: QueueMessage, options: PublishOptions = {}): Promise<void> {
    const input = {
      QueueUrl: queueUrl,
      MessageBody: JSON.stringify(message),
      DelaySeconds: options.delaySeconds,
      MessageGroupId: fairQueueTenant(message),
    };
    await this.client.send(new SendMessageCommand(input), {
      abortSignal: currentDeadline(),
    });
  }

  /**
   * Sends in batches of 10; any entry SQS refuses fails the whole call, so the caller retries (receivers de-duplicate).
   */
  public async publishAll(queueUrl: string, messages: readonly QueueMessage[]): Promise<void> {
    for (let start = 0; start < messages.length; start += SQS_BATCH_LIMIT) {
      const chunk = messages.slice(start, start + SQS_BATCH_LIMIT);
      const result = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((message, index) => ({
            Id: String(index),
            MessageBody: JSON.stringify(message),
            MessageGroupId: fairQueueTenant(message),
          })),
        }),
        { abortSignal: currentDeadline() },
      );
      if (result.Failed?.length) {
        throw new QueuePublishError(
          `${result.Failed.length} of ${chunk.length} messages were refused: ` +
            result.Failed.map((f) => f.Code).join(', '),
        );
      }
    }
  }
}
