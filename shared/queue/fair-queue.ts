import type { QueueMessage } from './messages.schema';

/**
 * The tenant SQS fair queues see in a message (its `MessageGroupId` on a standard queue): the connection, so one
 * customer's burst does not delay another's messages (Amazon SQS Developer Guide, "Amazon SQS fair queues"). The
 * local SQS emulator keeps the attribute and delivers in order regardless.
 */
export const fairQueueTenant = (message: QueueMessage): string => message.connectionId;
