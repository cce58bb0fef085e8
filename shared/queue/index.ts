export * from './messages.schema';
export { QueuePublisher, QueuePublishError, type PublishOptions } from './queue.publisher';
// lazyQueuePublisher is imported by its own path (./lazy-publisher): through this index, the static SDK import
// of QueuePublisher would come along and load the SQS client at cold start, which is what it exists to avoid.
