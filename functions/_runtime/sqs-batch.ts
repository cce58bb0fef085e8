import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { errorCode } from '../../shared/pipeline/errors';
import { errorMessage } from '../../shared/errors';
import type { PipelineLogger } from '../../shared/pipeline/ports';
import type { QueueMessage } from '../../shared/queue';
import {
  deferralObserver,
  isAtsRateLimit,
  isPaced,
  planDeferral,
  planDeferralPastDeadline,
  planPark,
  withCarried,
  type DeferTarget,
} from './deferral';
import { connectionDisabled } from './connections';
import { deferralBatch } from './deferral-batch';
import { describeFirstIssue } from '../../shared/validation';
import { withDeadline } from '../../shared/aws/deadline';
import { deadlinePassed } from '../../shared/http/deadline';
import { closingSignal, deadlineSignal } from './deadline';
import type { PipelineMetrics } from '../../shared/observability/metrics';
import { invocationKeys, withLogContext } from '../../shared/observability/log-context';
import { activity, deliveryEntry } from './activity';
import { WORKER_TIMING } from '../../shared/pipeline/constants';

/**
 * An SQS handler with partial batch responses (Powertools BatchProcessor; AWS "Handling errors for an SQS
 * event source": `batchItemFailures`). A message that is not valid JSON of the schema is poison: it is
 * logged with the offending field and acknowledged, never retried forever. With `defer`, a message whose
 * outside API asked to wait is put back on its queue for that long instead of failing (./deferral.ts).
 */
export function sqsBatchHandler<S extends v.GenericSchema<unknown, QueueMessage>>(
  schema: S,
  handle: MessageHandler<v.InferOutput<S>>,
  logger: PipelineLogger,
  options: { defer?: DeferTarget; metrics?: PipelineMetrics } = {},
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  return async (event, context) => {
    // One processor per invocation: it keeps the batch's outcomes while it runs. Lambda runs one invocation per
    // process, but the local event source runs several at once, and a shared one mixed their failures up.
    const processor = new BatchProcessor(EventType.SQS);
    const signal = deadlineSignal(context);
    const leaseMs = claimLeaseMs(
      typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : 60_000,
    );
    const invocation: Invocation<v.InferOutput<S>> = {
      parse: (document) => v.safeParse(schema, document),
      handle,
      logger,
      ...options,
      signal,
      leaseMs,
      leaseEndsAt: Date.now() + leaseMs,
      // The batch's records that defer go back together, in as few requests as their delays allow (10 to a request).
      deferrals: options.defer ? deferralBatch(options.defer, event.Records.length, signal) : undefined,
    };
    return withLogContext(invocationKeys(context), async () => {
      try {
        return await processPartialResponse(
          event,
          (record: SQSRecord) => processRecord(invocation, record),
          processor,
          { context },
        );
      } finally {
        // What the console shows of this batch (./activity.ts): counts, deferrals, failures, before Lambda's deadline.
        await activity.flush(logger, closingSignal(context));
      }
    });
  };
}

/**
 * A claim this invocation takes outlives its deadline by the time a write sent just before it takes to land
 * (`inFlightSettleMs`), never the queue's visibility timeout (6 × the function timeout).
 */
export const claimLeaseMs = (remainingMs: number): number => remainingMs + WORKER_TIMING.inFlightSettleMs;

type MessageHandler<M> = (
  message: M,
  record: SQSRecord,
  run: { signal: AbortSignal; leaseMs: number; carry: (fields: Record<string, unknown>) => void },
) => Promise<void>;

/** What one invocation's records are handled with. */
interface Invocation<M extends QueueMessage> {
  parse: (document: unknown) => v.SafeParseResult<v.GenericSchema<unknown, M>>;
  handle: MessageHandler<M>;
  logger: PipelineLogger;
  defer?: DeferTarget | undefined;
  metrics?: PipelineMetrics | undefined;
  signal: AbortSignal;
  leaseMs: number;
  leaseEndsAt: number;
  deferrals: ReturnType<typeof deferralBatch> | undefined;
}

async function processRecord<M extends QueueMessage>(invocation: Invocation<M>, record: SQSRecord): Promise<void> {
  try {
    let document: unknown;
    try {
      document = JSON.parse(record.body);
    } catch {
      invocation.logger.error('poison message: body is not JSON', { messageId: record.messageId });
      return;
    }
    await withLogContext({ correlation_id: correlationOf(document, record) }, () =>
      handleRecord(invocation, document, record),
    );
  } finally {
    invocation.deferrals?.settled();
  }
}

async function handleRecord<M extends QueueMessage>(
  invocation: Invocation<M>,
  document: unknown,
  record: SQSRecord,
): Promise<void> {
  const { logger, signal, leaseMs } = invocation;
  const parsed = invocation.parse(document);
  if (!parsed.success) {
    const { field, message } = describeFirstIssue(parsed.issues);
    logger.error('poison message: does not match its schema', { messageId: record.messageId, field, problem: message });
    return;
  }
  if (await parked(invocation, parsed.output, record)) return;
  noteArrival(parsed.output);
  // What this record's run found, for its copy should it go back for later: its own, whatever error it throws.
  let carried: Record<string, unknown> | undefined;
  const carry = (fields: Record<string, unknown>) => {
    carried = { ...carried, ...fields };
  };
  try {
    // The deadline reaches the AWS SDK calls too (shared/aws/deadline.ts), not only the outside APIs'.
    await withDeadline(signal, () => invocation.handle(parsed.output, record, { signal, leaseMs, carry }));
  } catch (error) {
    if (await deferred(invocation, { message: parsed.output, carried }, record, error)) return;
    logger.warn('message failed; SQS will retry it', {
      ...messageKeys(parsed.output, record),
      code: errorCode(error),
      ...callOf(error),
    });
    noteFailure(parsed.output, record, errorCode(error));
    throw error;
  }
}

/**
 * Puts the message back on its queue for later when its outside API asked to wait or the deadline cut the work
 * short; false when it is not to be deferred, or SQS did not take the copy (the record then fails, SQS brings it
 * back, and nothing is lost).
 */
async function deferred<M extends QueueMessage>(
  invocation: Invocation<M>,
  { message, carried }: { message: M; carried: Record<string, unknown> | undefined },
  record: SQSRecord,
  error: unknown,
): Promise<boolean> {
  const { defer, deferrals, logger } = invocation;
  if (!defer || !deferrals) return false;
  const plan =
    planDeferral(message, error, defer.random) ??
    planDeferralPastDeadline(message, deadlinePassed(invocation.signal), invocation.leaseEndsAt);
  if (!plan) return false;
  const planned = { ...plan, message: withCarried(plan.message, carried) };
  if (!(await deferrals.send(planned))) {
    logger.warn('could not defer the message', { messageId: record.messageId, code: 'queue-publish-failed' });
    return false;
  }
  // Kept back by the pacing (its turn is later) is the rate limit shared as declared: counted apart from the console's
  // "deferred", which an invocation would otherwise write for that alone (one write each, on a long paced run).
  invocation.metrics?.count(isPaced(error) ? 'Paced' : 'Deferred', message.connectionId);
  const application = applicationOf(message);
  // On the candidate's timeline once, at the message's first deferral: at an ATS's rate limit a message may go back
  // several times, and each note would be a write; the later ones are counted (the Deferred metric).
  if (application && !message.deferrals)
    activity.note({
      connectionId: message.connectionId,
      atsApplicationId: application,
      kind: 'deferred',
      detail: `${message.kind}: back on the queue in ${planned.delaySeconds} s`,
      code: errorCode(error),
    });
  deferralObserver.deferred?.(planned.message, planned.delaySeconds, errorCode(error));
  if (isAtsRateLimit(error)) await defer.backlog?.(message.connectionId, Date.now() + planned.delaySeconds * 1000);
  logger.info('message deferred: an outside API asked to wait, or the deadline cut the work short', {
    ...messageKeys(message, record),
    code: errorCode(error),
    ...callOf(error),
    delaySeconds: planned.delaySeconds,
    deferrals: planned.message.deferrals,
  });
  return true;
}

/**
 * A message of a disabled connection goes back on its queue untouched (nothing sent to its ATS or candidates), to
 * look again after a while; false when the connection is on (or unknown: its handler says so), or when SQS did not
 * take the copy (the record then fails and comes back).
 */
async function parked<M extends QueueMessage>(invocation: Invocation<M>, message: M, record: SQSRecord) {
  const disabled = await connectionDisabled(message.connectionId).catch(() => false);
  if (!invocation.deferrals || !disabled) return false;
  const plan = planPark(message);
  if (!(await invocation.deferrals.send(plan))) throw new Error("a disabled connection's message could not be parked");
  invocation.logger.info('message parked: its connection is disabled', {
    messageId: record.messageId,
    delaySeconds: plan.delaySeconds,
  });
  return true;
}

/**
 * A webhook's delivery on its application's timeline (./activity.ts), until the message first goes back for later: a
 * retry notes the same entry again, keyed by the message.
 */
function noteArrival(message: QueueMessage): void {
  if (message.deferrals) return;
  const entry = deliveryEntry(message);
  if (entry) activity.note(entry);
}

/**
 * A failed attempt on the application's timeline; on the queue's last receive, the message goes to the dead-letter
 * queue next, and is counted so (the count comes from `AttributeNames`, which every SQS answers it through).
 */
function noteFailure(message: QueueMessage, record: SQSRecord, code: string): void {
  const last = Number(record.attributes?.ApproximateReceiveCount ?? 0) >= WORKER_TIMING.maxReceiveCount;
  if (last) activity.count('DeadLettered', message.connectionId);
  const application = applicationOf(message);
  if (!application) return;
  activity.note({
    connectionId: message.connectionId,
    atsApplicationId: application,
    kind: last ? 'dead-lettered' : 'attempt-failed',
    detail: last
      ? `${message.kind}: failed its last try, to the dead-letter queue`
      : `${message.kind}: failed, retried`,
    code,
  });
}

/** What a failed or deferred message's log line names it by: ids only, never a candidate's details. */
function messageKeys(message: QueueMessage, record: SQSRecord) {
  const report = (message as { reportId?: unknown }).reportId;
  return {
    messageId: record.messageId,
    kind: message.kind,
    connectionId: message.connectionId,
    ...(applicationOf(message) ? { atsApplicationId: applicationOf(message) } : {}),
    ...(typeof report === 'string' ? { reportId: report } : {}),
  };
}

/**
 * The outside call an error names (an ATS or service error's `METHOD url` before its status; URLs are redacted and
 * carry ids only), so a line says which call failed, not only its code.
 */
function callOf(error: unknown): { call?: string } {
  const named = /^(GET|POST|PUT|PATCH|DELETE) \S+(?=: )/.exec(errorMessage(error));
  return named ? { call: named[0].slice(0, 160) } : {};
}

/** The ATS application a message is about, where it names one. */
export function applicationOf(message: QueueMessage): string | undefined {
  const named = message as { atsApplicationId?: unknown; event?: { atsApplicationId?: unknown } };
  const id = named.atsApplicationId ?? named.event?.atsApplicationId;
  return typeof id === 'string' ? id : undefined;
}

const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/** The delivery's correlation id, carried in the message since its webhook; the message's own id otherwise. */
function correlationOf(document: unknown, record: SQSRecord): string {
  const id = (document as { correlationId?: unknown } | null)?.correlationId;
  return typeof id === 'string' && CORRELATION_ID.test(id) ? id : record.messageId;
}
