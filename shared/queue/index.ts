export * from './messages.schema';
export { QueuePublisher, QueuePublishError } from './queue.publisher';
