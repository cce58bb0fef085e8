import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { LocalFunction } from './lambda-runtime';
import type { QueueWatch } from './queue-watch';
import { errorMessage } from '../../shared/errors';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface SqsEventSourceOptions {
  name: string;
  queueUrl: string;
  queueArn: string;
  /** The function: its execution environments (which time an invocation out themselves), or a bare handler. */
  handler: SqsHandler | LocalFunction;
  batchSize?: number;
  /** Parallel invocations at most, like the event source's maximum concurrency. */
  maxConcurrency?: number;
  functionTimeoutMs?: number;
  /** The maximum batching window (the stack sets 1 s): how long a batch is gathered before the function runs. */
  waitTimeSeconds?: number;
  client?: SQSClient;
  /** Share of batches also handed to a second, concurrent invocation (SQS delivers at least once). */
  duplicateRate?: number | undefined;
  /**
   * A share of invocations that start with little time left (`remainingMs`), as a function whose cold start or
   * earlier records used most of its timeout: outside answers then straddle the deadline.
   */
  shortDeadline?: { rate: number; remainingMs: number } | undefined;
  /** Told of every record handed to the worker and of its outcome (infra/local/queue-watch.ts). */
  watch?: Pick<QueueWatch, 'received' | 'handled'> | undefined;
}

export interface SqsEventSourceStats {
  invocations: number;
  records: number;
  failures: number;
  errors: number;
  inFlight: number;
  duplicated: number;
}

export interface SqsEventSource {
  stats: SqsEventSourceStats;
  stop(): Promise<void>;
}

function toRecord(message: Message, queueArn: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId as string,
    receiptHandle: message.ReceiptHandle as string,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: process.env.AWS_REGION ?? 'us-east-1',
  };
}

/** A Lambda context as the runtime hands it to a handler: its name, a request id and the time left. */
export function lambdaContext(name: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * Feeds a worker from a queue as the Lambda event source does: batches, `batchItemFailures` left on the queue
 * to reappear after the visibility timeout (the queue's redrive policy moves them to the DLQ after
 * maxReceiveCount), successes deleted, and a whole-batch failure when the function throws or times out.
 */
export function startSqsEventSource(options: SqsEventSourceOptions): SqsEventSource {
  const client = options.client ?? new SQSClient({});
  const stats: SqsEventSourceStats = { invocations: 0, records: 0, failures: 0, errors: 0, inFlight: 0, duplicated: 0 };
  const controller = new AbortController();
  const timeoutMs = options.functionTimeoutMs ?? 30_000;

  async function invoke(messages: Message[]): Promise<void> {
    const records = messages.map((m) => toRecord(m, options.queueArn));
    stats.invocations++;
    stats.records += records.length;
    stats.inFlight++;
    for (const record of records)
      options.watch?.received(record.body, Number(record.attributes.ApproximateReceiveCount));
    let failedIds = new Set<string>(records.map((r) => r.messageId));
    const short = options.shortDeadline;
    const budgetMs = short && Math.random() < short.rate ? Math.min(short.remainingMs, timeoutMs) : timeoutMs;
    try {
      const handler = options.handler;
      const result =
        'invoke' in handler
          ? ((await handler.invoke({ Records: records }, budgetMs)) as SQSBatchResponse | undefined)
          : await Promise.race([
              handler({ Records: records }, lambdaContext(options.name, budgetMs)),
              new Promise<never>((_, reject) =>
                setTimeout(() => reject(new Error(`${options.name} timed out after ${budgetMs} ms`)), budgetMs).unref(),
              ),
            ]);
      failedIds = new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      stats.errors++;
      console.error(`${options.name}: invocation failed, the batch stays on the queue: ${errorMessage(error)}`);
    } finally {
      stats.inFlight--;
    }
    stats.failures += failedIds.size;
    for (const record of records) options.watch?.handled(record.body, !failedIds.has(record.messageId));
    const done = records.filter((r) => !failedIds.has(r.messageId));
    if (done.length) {
      // A receipt handle another invocation already used may be refused; SQS would do the same.
      await client
        .send(
          new DeleteMessageBatchCommand({
            QueueUrl: options.queueUrl,
            Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
          }),
        )
        .catch((error: unknown) => console.error(`${options.name}: delete failed: ${errorMessage(error)}`));
    }
  }

  /**
   * As Lambda's event source: while the queue is empty, one long poll (by any poller not running an invocation)
   * waits for the next message (SQS answers as soon as one is there) and the other pollers ask nothing; once
   * messages come in full batches, every poller takes batches until one comes back short (the queue drained).
   */
  let idle = true;
  let watching = false;
  /**
   * A receive's signal: stopped with the source, or given up 5 s after its long poll should have answered, so a poll
   * the emulator never answers cannot leave the queue unwatched (the next poll takes over).
   */
  const receiveSignal = (waitSeconds: number) =>
    AbortSignal.any([controller.signal, AbortSignal.timeout((waitSeconds + 5) * 1000)]);
  async function poll(): Promise<void> {
    while (!controller.signal.aborted) {
      try {
        const quiet = idle;
        if (quiet && watching) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          continue;
        }
        if (quiet) watching = true;
        const received = await client
          .send(
            new ReceiveMessageCommand({
              QueueUrl: options.queueUrl,
              // local-aws-sqs holds a long poll until it can fill the whole batch (SQS answers as soon as any
              // message is there): an idle queue is watched for one message at a time, up to SQS's 20-s wait,
              // then that message's batch is gathered for the batching window; a busy one is read in batches
              // with the stack's 1-second maximum batching window.
              MaxNumberOfMessages: quiet ? 1 : (options.batchSize ?? 10),
              WaitTimeSeconds: quiet ? 20 : (options.waitTimeSeconds ?? 1),
              // local-aws-sqs answers the receive count only through AttributeNames.
              AttributeNames: ['All'],
              MessageSystemAttributeNames: ['All'],
            }),
            { abortSignal: receiveSignal(20) },
          )
          .finally(() => {
            if (quiet) watching = false;
          });
        const batchSize = options.batchSize ?? 10;
        if (quiet && received.Messages?.length && batchSize > 1) {
          // As Lambda's batching window: the first message of a quiet queue waits for others to join its batch,
          // up to the window (local-aws-sqs answers this receive once the batch is full or the wait is over).
          const more = await client.send(
            new ReceiveMessageCommand({
              QueueUrl: options.queueUrl,
              MaxNumberOfMessages: batchSize - received.Messages.length,
              WaitTimeSeconds: options.waitTimeSeconds ?? 1,
              AttributeNames: ['All'],
              MessageSystemAttributeNames: ['All'],
            }),
            { abortSignal: receiveSignal(options.waitTimeSeconds ?? 1) },
          );
          received.Messages.push(...(more.Messages ?? []));
        }
        // A batch that came back short found the queue drained: as Lambda scales its pollers down, one watches.
        idle = (received.Messages?.length ?? 0) < batchSize;
        if (received.Messages?.length) {
          if (Math.random() < (options.duplicateRate ?? 0)) {
            stats.duplicated += received.Messages.length;
            await Promise.all([invoke(received.Messages), invoke(received.Messages)]);
          } else {
            await invoke(received.Messages);
          }
        }
      } catch (error) {
        if (controller.signal.aborted) return;
        console.error(`${options.name}: receive failed: ${errorMessage(error)}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  const pollers = Array.from({ length: options.maxConcurrency ?? 2 }, () => poll());
  return {
    stats,
    async stop() {
      controller.abort();
      await Promise.allSettled(pollers);
    },
  };
}
