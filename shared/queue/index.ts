export * from './messages.schema';
export { QueuePublisher, QueuePublishError } from './queue.publisher';
export type { PublishOptions } from './send-input';
// lazyQueuePublisher is imported by its own path (./lazy-publisher): through this index, the static SDK import
// of QueuePublisher would come along and load the SQS client at cold start, which is what it exists to avoid.
