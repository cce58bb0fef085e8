import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { LocalFunction } from './lambda-runtime';
import type { QueueWatch } from './queue-watch';
import { errorMessage } from '../../shared/errors';
import { createFairBuffer } from './fair-buffer';

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
  /**
   * The maximum batching window (the stack's, WORKER_TIMING.batchingWindowSeconds): how long a batch is gathered
   * before the function runs.
   */
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
  /**
   * A message's tenant (its `MessageGroupId`), read from its body: the queue is served as an SQS fair queue
   * (infra/local/fair-buffer.ts). Without it, in the emulator's order.
   */
  tenantOf?: ((body: string) => string) | undefined;
}

/**
 * An SQS event source reads two batches at once at the least (its maximum concurrency is 2 to 1,000: AWS Lambda,
 * "Configuring scaling behavior for SQS event source mappings"), and does not account for the function's reserved
 * concurrency: a batch read while every environment is busy waits for one (Lambda retries a throttled invocation
 * until the batch's visibility timeout). So a function run in one environment has its next batch gathered while it
 * works, not after.
 */
const MIN_EVENT_SOURCE_BATCHES = 2;

/**
 * How many batches a worker's event source reads at once: its environments, two at the least; in one process (no
 * environments to wait for), its concurrency.
 */
export function eventSourceBatches(runtime: 'environments' | 'one-process', environments: number): number {
  return runtime === 'environments' ? Math.max(MIN_EVENT_SOURCE_BATCHES, environments) : environments;
}

/** The most messages the event source reads ahead of its invocations to serve a fair queue. */
const FAIR_READ_AHEAD = 1_000;

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
   * waits for the next message (SQS answers as soon as one is there) and gathers its batch, and the other pollers
   * ask nothing; once messages come in full batches, every poller takes batches until one comes back short (the
   * queue drained).
   */
  let idle = true;
  let watching = false;
  /**
   * A receive's signal: stopped with the source, or given up 5 s after its long poll should have answered, so a poll
   * the emulator never answers cannot leave the queue unwatched (the next poll takes over).
   */
  const receiveSignal = (waitSeconds: number) =>
    AbortSignal.any([controller.signal, AbortSignal.timeout((waitSeconds + 5) * 1000)]);
  const receive = (max: number, waitSeconds: number) =>
    client.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        // local-aws-sqs answers the receive count only through AttributeNames.
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
      { abortSignal: receiveSignal(waitSeconds) },
    );
  const batchSize = options.batchSize ?? 10;
  // Messages read ahead and not yet handed to an invocation: fair queues only. One that has waited there twice the
  // function's timeout goes first whatever its connection, well within its visibility timeout (six times it).
  const fair = options.tenantOf ? createFairBuffer(options.tenantOf, 2 * timeoutMs) : undefined;
  /** When a receive last found the queue empty (every poller of the source). */
  let emptyAt = 0;
  /** A fair queue's next batch: everything visible read ahead (bounded), then the batch picked fairly. */
  async function fairBatch(received: Message[], full: boolean): Promise<Message[]> {
    if (!fair) return received;
    fair.add(received);
    // Bounded: each receive takes up to a batch, and the buffer is capped.
    for (let more = full; more && fair.size < FAIR_READ_AHEAD && !controller.signal.aborted; ) {
      const ahead = (await receive(batchSize, 0)).Messages ?? [];
      if (!ahead.length) emptyAt = Date.now();
      fair.add(ahead);
      more = ahead.length === batchSize;
    }
    return fair.take(batchSize);
  }
  async function poll(): Promise<void> {
    while (!controller.signal.aborted) {
      try {
        const quiet = idle && !fair?.size;
        if (quiet && watching) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          continue;
        }
        if (quiet) watching = true;
        // local-aws-sqs holds a long poll until it can fill the whole batch (SQS answers as soon as any message is
        // there): an idle queue is watched for one message at a time, up to SQS's 20-s wait, then that message's
        // batch is gathered for the batching window; a busy one is read in batches with the stack's maximum batching
        // window. While messages read ahead wait, the queue is asked without waiting, and only once a batching window
        // has passed since it was last found empty: reading ahead costs no more receives than Lambda's pollers make.
        const windowMs = (options.waitTimeSeconds ?? 1) * 1000;
        const askQueue = !fair?.size || Date.now() - emptyAt >= windowMs;
        const messages: Message[] = [];
        try {
          const received = askQueue
            ? await receive(quiet ? 1 : batchSize, quiet ? 20 : fair?.size ? 0 : windowMs / 1000)
            : { Messages: [] };
          messages.push(...(received.Messages ?? []));
          if (askQueue && !messages.length) emptyAt = Date.now();
          if (quiet && messages.length && batchSize > 1) {
            // As Lambda's batching window: the first message of a quiet queue waits for others to join its batch,
            // up to the window (local-aws-sqs answers this receive once the batch is full or the wait is over). No
            // other poller watches meanwhile: local-aws-sqs would give it one of the group this batch gathers (SQS
            // answers each poll with what is there), and a group back for its turns would run as two batches.
            const more = await receive(batchSize - messages.length, options.waitTimeSeconds ?? 1);
            messages.push(...(more.Messages ?? []));
          }
        } finally {
          if (quiet) watching = false;
        }
        // A batch that came back short found the queue drained: as Lambda scales its pollers down, one watches.
        idle = messages.length < batchSize;
        const batch = await fairBatch(messages, !idle);
        if (batch.length) {
          try {
            if (Math.random() < (options.duplicateRate ?? 0)) {
              stats.duplicated += batch.length;
              await Promise.all([invoke(batch), invoke(batch)]);
            } else {
              await invoke(batch);
            }
          } finally {
            fair?.done(batch);
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
