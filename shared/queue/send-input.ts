import type { SendMessageCommandInput } from '@aws-sdk/client-sqs';
import type { QueueMessage } from './messages.schema';

export interface PublishOptions {
  /** 0 to 900 (SQS SendMessage DelaySeconds): the message stays out of sight that long. */
  delaySeconds?: number;
}

/** The SendMessage request for one message; no SDK code here, so a lazy publisher can share it. */
export function sendMessageInput(
  queueUrl: string,
  message: QueueMessage,
  options: PublishOptions = {},
): SendMessageCommandInput {
  return { QueueUrl: queueUrl, MessageBody: JSON.stringify(message), DelaySeconds: options.delaySeconds };
}
