import { Duration, type Stack } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { visibilityTimeoutSeconds, WORKER_TIMING } from '../../shared/pipeline/constants';

export interface WorkerQueue {
  queue: Queue;
  dlq: Queue;
}

/**
 * A worker's queue and its dead-letter queue: the visibility timeout six times the worker's, a message moved to
 * the DLQ after `WORKER_TIMING.maxReceiveCount` receives, kept there 14 days.
 */
export function createWorkerQueue(stack: Stack, name: string): WorkerQueue {
  const dlq = new Queue(stack, `${name}Dlq`, {
    retentionPeriod: Duration.days(14),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  const queue = new Queue(stack, `${name}Queue`, {
    visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds()),
    retentionPeriod: Duration.days(4),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    deadLetterQueue: { queue: dlq, maxReceiveCount: WORKER_TIMING.maxReceiveCount },
  });
  return { queue, dlq };
}
