import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { createLogger } from '../../shared/observability/logger';
import { invocationKeys, withLogContext } from '../../shared/observability/log-context';
import { reconcileConnection } from '../../shared/pipeline/reconcile.use-case';
import { sweepConnection } from '../../shared/pipeline/sweep.use-case';
import { followUpsDue, followUpsToEnqueue, ledgerSubjectsOf } from '../../shared/pipeline/follow-up-due';
import { WORKER_TIMING } from '../../shared/pipeline/constants';
import { errorCode } from '../../shared/pipeline/errors';
import type { Connection } from '../../shared/config';
import { QueuePublisher, type ReportCreatedMessage } from '../../shared/queue';
import { connectionById, connectionStore, rememberConnections } from '../_runtime/connections';
import { encodeCursor, ReconcileCursor } from '../../shared/mapping/connections.records';
import { type ServedConnection, servedConnection } from '../../shared/config';
import { errorMessage } from '../../shared/errors';
import { connectionContext } from '../_runtime/work-context';
import { ENV, requireEnv } from '../_runtime/env';
import { mappingStore, queueLedger } from '../_runtime/store';
import { pagedSubject, reportSubject } from '../../shared/pipeline/ports';
import { HINT_GRACE_MS, HINT_SUBJECT } from '../../shared/pipeline/changes-hinted.use-case';
import { forEachFairly, sendingFound } from './fair-share';
import { sayConnectionFailure } from '../../shared/pipeline/failure-lines';
import { DynamoOrderStore } from '../../shared/mapping/orders.records';
import { ordersDue } from '../../shared/orders/orders-due';
import { fetchMissedKomboOrders, komboApiFor } from '../../shared/orders/kombo-orders';
import { normaliseEmail } from '../../shared/pipeline/records';
import type { InterviewReport } from '../../shared/interview-service';

/** Orders with work left read per connection and run: the oldest first. */
const ORDERS_PER_RUN = 200;
/**
 * Connections one run reads at most (`RECONCILE_CONNECTIONS_PER_RUN`; DynamoDB's 1 MB pages may give fewer): 10,000
 * customers are one cycle of about 9 runs of one schedule, or one run each of as many schedule segments
 * (docs/deployment.md; `npm run bench -- --connections 10000`).
 */
const CONNECTIONS_PER_RUN = Number(process.env.RECONCILE_CONNECTIONS_PER_RUN) || 2_000;
/** Connections worked on at once: most of a connection's run is waiting for its ATS and the service. */
const CONNECTIONS_AT_ONCE = 8;
let cursor: ReconcileCursor | undefined;
const reconcileCursor = () => (cursor ??= new ReconcileCursor({ table: requireEnv(ENV.eventsTable) }));

const logger = createLogger('reconciler');
/** Built when a connection takes orders: a connector without them never reads the orders table. */
let orders: DynamoOrderStore | undefined;
const orderStore = () => (orders ??= new DynamoOrderStore({ table: requireEnv(ENV.ordersTable) }));
const deps = {
  store: mappingStore(),
  ledger: queueLedger(),
  contextFor: connectionContext,
  logger,
  // A report of an order's interview that completed its order is not enqueued again.
  isOrderReport: async (connectionId: string, report: InterviewReport) => {
    if (!(await connectionById(connectionId))?.orders || !report.candidate_email_id) return false;
    const order = await orderStore().findOrderByInterview(
      report.interview_id,
      normaliseEmail(report.candidate_email_id),
    );
    return order?.connectionId === connectionId && order.reportId === report.report_id;
  },
};
const publisher = new QueuePublisher();
/** Work stops this long before the Lambda deadline, so the run ends with its results said rather than cut off. */
const DEADLINE_MARGIN_MS = 5_000;

export interface RunTotals {
  connections: number;
  enqueued: number;
  swept: number;
  followUps: number;
  failed: string[];
  /**
   * Connections whose run left work for the next: reports not all read (cut short, or an interview's unreadable),
   * or a trigger's list not read to its end (the ATS's window spent, a backlog yielded to, pages left, the list
   * refused for good: that one logged as an error once a day, shared/pipeline/failure-lines.ts).
   */
  unfinished: string[];
  /** Connections the run had no time left for: the next run starts elsewhere and takes them up. */
  notStarted: string[];
}

/**
 * On a schedule, for each connection: reports whose webhook never came are enqueued for write-back, applications
 * in a trigger's stage whose stage change never arrived are swept, and due reminders and expiries are enqueued.
 * Each connection gets a fair share of the run's time (./fair-share.ts); one failing connection does not stop the
 * others.
 */
export function handler(event: unknown, context?: Context): Promise<RunTotals> {
  // The run's request id correlates the reports it finds with the write-backs they lead to.
  const correlationId = context?.awsRequestId ?? randomUUID();
  const remaining =
    typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : 60_000;
  const endsAt = Date.now() + remaining - Math.min(DEADLINE_MARGIN_MS, remaining / 5);
  return withLogContext({ ...invocationKeys(context), correlation_id: correlationId }, () =>
    reconcileAll(correlationId, endsAt, scheduleSegment(event)),
  );
}

async function reconcileAll(
  correlationId: string,
  endsAt: number,
  segment: { index: number; of: number },
): Promise<RunTotals> {
  const page = await connectionsThisRun(segment);
  const connections = page.connections.filter((c) => c.enabled).map((c) => c.connection);
  /** Connections a part of whose work stopped before its end, without failing. */
  const left = new Set<string>();
  const totals: RunTotals = {
    connections: connections.length,
    enqueued: 0,
    swept: 0,
    followUps: 0,
    failed: [...page.invalid],
    unfinished: [],
    notStarted: [],
  };
  const { ran, notStarted } = await forEachFairly(
    connections,
    // In the table's order from the cursor: those the run had no time for are the next run's first.
    { remainingMs: () => endsAt - Date.now(), random: () => 0, concurrency: CONNECTIONS_AT_ONCE },
    async (c, signal) => {
      const failures = await Promise.all([
        attempt('reconcile', c, () => reconcileReports(c, { correlationId, signal, totals, left })),
        attempt('sweep', c, () => sweepAndFollowUp(c, { correlationId, signal, totals, left })),
        ...(c.orders ? [attempt('orders', c, () => resumeOrders(c, correlationId, totals))] : []),
        ...(c.orders?.kombo ? [attempt('kombo-orders', c, () => fetchKomboOrders(c, correlationId, signal))] : []),
      ]);
      if (failures.some(Boolean)) totals.failed.push(c.id);
      else if (left.has(c.id)) totals.unfinished.push(c.id);
    },
  );
  totals.notStarted = notStarted.map((c) => c.id);
  await page.done(notStarted.length ? { after: ran.at(-1)?.id } : undefined);
  if (notStarted.length)
    logger.warn('reconciler: the run ended before some connections; the next run takes them up', {
      notStarted: notStarted.length,
    });
  return totals;
}

/**
 * The connections one run serves: a page of the connections table from where the last run of this schedule segment
 * stopped, CONNECTIONS_PER_RUN at most, so every run is bounded whatever the number of customers and the runs of a
 * cycle serve each connection once. `done` saves where the next run starts: after the last connection the run
 * started, or at the first again once the table's end was reached.
 */
async function connectionsThisRun(segment: { index: number; of: number }) {
  const place = reconcileCursor();
  const after = await place.read(segment);
  const page = await connectionStore().page(CONNECTIONS_PER_RUN, after ? encodeCursor(after) : undefined, segment);
  const connections: ServedConnection[] = [];
  const invalid: string[] = [];
  const told: Promise<void>[] = [];
  for (const stored of page.connections) {
    try {
      connections.push(servedConnection(stored));
    } catch (error) {
      const reason = errorMessage(error);
      // Its document is the operator's to fix: an error once a day while it stays so, told all at once.
      told.push(
        sayConnectionFailure(deps, stored.id, {
          message: 'reconciler: a connection is invalid; skipped',
          kind: `invalid ${reason}`,
          error,
          permanent: true,
          attributes: { reason },
        }),
      );
      invalid.push(stored.id);
    }
  }
  await Promise.all(told);
  rememberConnections(page.connections.filter((c) => !invalid.includes(c.id)));
  const last = page.connections.at(-1)?.id;
  return {
    connections,
    invalid,
    done: (stopped: { after: string | undefined } | undefined) =>
      place
        .save(segment, stopped ? (stopped.after ?? after) : page.cursor ? last : undefined)
        .catch((error: unknown) =>
          logger.warn('reconciler: where the next run starts could not be saved', { reason: errorMessage(error) }),
        ),
  };
}

/** The run's part of the connections: `{segment, segments}` from its schedule (one rule each), the whole by default. */
function scheduleSegment(event: unknown): { index: number; of: number } {
  const { segment, segments } = (event ?? {}) as { segment?: unknown; segments?: unknown };
  const of = Number.isInteger(segments) && (segments as number) > 0 ? (segments as number) : 1;
  const index =
    Number.isInteger(segment) && (segment as number) >= 0 && (segment as number) < of ? (segment as number) : 0;
  return { index, of };
}

/** What one connection's parts of the run share. */
interface ConnectionRun {
  correlationId: string;
  signal: AbortSignal;
  totals: RunTotals;
  /** Connections a part of whose work stopped before its end, without failing. */
  left: Set<string>;
}

/** Runs one part of a connection's work; true when it failed (logged with its code). */
async function attempt(part: string, connection: Connection, work: () => Promise<void>): Promise<boolean> {
  try {
    await work();
    return false;
  } catch (error) {
    const code = errorCode(error);
    await sayConnectionFailure(deps, connection.id, {
      message: `${part} failed for a connection`,
      kind: `${part} ${code}`,
      error,
      attributes: { code },
    });
    return true;
  }
}

/** The service's side: reports whose webhook never came, enqueued for write-back. */
async function reconcileReports(c: Connection, { correlationId, signal, totals, left }: ConnectionRun) {
  const result = await reconcileConnection(c.id, deps, signal);
  if (result.cutShort || result.failedInterviews.length) left.add(c.id);
  const messages: ReportCreatedMessage[] = result.enqueued.map((report) => ({
    v: 1,
    kind: 'report-created',
    enqueueId: randomUUID(),
    correlationId,
    receivedAt: Date.now(),
    ...report,
  }));
  // Sent though the connection's share is spent (a cut-short read returns what it found): a deadline of its own.
  try {
    await sendingFound(() => publisher.publishAll(requireEnv(ENV.reportQueueUrl), messages), signal);
  } catch (error) {
    // Not sent: the ledger's records are taken back (a deadline of their own too), so the next run enqueues these
    // reports instead of taking them as pending for the grace period.
    const subjects = messages.map((m) => reportSubject(m.reportId));
    await sendingFound(() => deps.ledger.forgetEnqueued(c.id, subjects)).catch(() => undefined);
    throw error;
  }
  totals.enqueued += messages.length;
  // The quiet interviews looked at, recorded once what the run found is sent (a cut-short share included): their next
  // look waits for their cadence. Best effort: one not recorded is looked at again next run.
  if (result.looked.length)
    await sendingFound(
      () => deps.ledger.recordEnqueued(c.id, result.looked.map(pagedSubject), result.at),
      signal,
    ).catch((error: unknown) =>
      logger.warn('reconciler: its looks could not be recorded', { connectionId: c.id, code: errorCode(error) }),
    );
}

/**
 * Kombo pushes no stage change: its hints are read by the invite worker, and the sweep's place is one more read of
 * the changes each run (queued once while one waits), so a lost hint only delays (changes-hinted.use-case.ts).
 */
async function queueChangesRead(c: Connection, correlationId: string): Promise<void> {
  const now = Date.now();
  if (!(await deps.ledger.claimEnqueue(c.id, HINT_SUBJECT, now, HINT_GRACE_MS))) return;
  await publisher
    .publish(requireEnv(ENV.stageQueueUrl), {
      v: 1,
      kind: 'changes-hinted',
      source: 'sweep',
      enqueueId: randomUUID(),
      deliveryId: `sweep-${now}`,
      correlationId,
      connectionId: c.id,
      receivedAt: now,
    })
    .catch(async (error: unknown) => {
      await deps.ledger.forgetEnqueued(c.id, [HINT_SUBJECT]).catch(() => undefined);
      throw error;
    });
}

/** The reminders and expiries due now whose message is not pending already (follow-up-due.ts). */
async function freshFollowUps(c: Connection, now: number) {
  const due = await followUpsDue(c, deps, now);
  if (!due.length) return [];
  const found = await deps.ledger.enqueuedSince(c.id, ledgerSubjectsOf(due), now - WORKER_TIMING.enqueueGraceMs);
  return followUpsToEnqueue(due, found);
}

/** The ATS's side: applications in a trigger's stage whose stage change never arrived; then the follow-ups due. */
async function sweepAndFollowUp(c: Connection, { correlationId, signal, totals, left }: ConnectionRun) {
  const stageQueue = requireEnv(ENV.stageQueueUrl);
  const enqueue = (messages: Parameters<typeof publisher.publishAll>[1]) =>
    publisher.publishAll(
      stageQueue,
      messages.map((m) => ({ ...m, correlationId })),
    );
  if (c.ats === 'kombo' && c.sweep.enabled) await queueChangesRead(c, correlationId);
  const sweep = await sweepConnection(c.id, { ...deps, enqueue }, signal);
  totals.swept += sweep.triggers.reduce((sum, t) => sum + t.enqueued, 0);
  if (sweep.triggers.some((t) => t.state !== 'done' && t.state !== 'not-due')) left.add(c.id);
  // Invitations with no report: the reminders and expiries now due (the invite worker sends them), each enqueued
  // once while its message is pending (the queue ledger), not again by every run behind a paced queue. A share spent
  // by the sweep leaves them to the next run (its reads would abort at once).
  if (signal.aborted) {
    left.add(c.id);
    return;
  }
  const now = Date.now();
  const fresh = await freshFollowUps(c, now).catch((error: unknown) => {
    if (!signal.aborted) throw error;
    left.add(c.id);
    return [];
  });
  if (!fresh.length) return;
  await sendingFound(async () => {
    await publisher.publishAll(
      stageQueue,
      fresh.map(({ followUp }) => ({
        v: 1,
        kind: 'follow-up',
        enqueueId: randomUUID(),
        correlationId,
        receivedAt: now,
        ...followUp,
      })),
    );
    await deps.ledger.recordEnqueued(
      c.id,
      fresh.map((d) => d.subject),
      now,
    );
  }, signal);
  totals.followUps += fresh.length;
}

/** Kombo orders missed while the webhook was down (Kombo keeps them OPEN): recorded and queued as it would have. */
async function fetchKomboOrders(c: Connection, correlationId: string, signal: AbortSignal) {
  const context = await connectionContext(c.id);
  const api = context && komboApiFor(c, context.secrets);
  if (!api) throw new Error(`connection ${c.id}: komboApiKey is not set`);
  await fetchMissedKomboOrders(
    c,
    api,
    {
      orders: orderStore(),
      logger,
      now: Date.now,
      enqueue: (order) =>
        publisher.publish(requireEnv(ENV.stageQueueUrl), {
          v: 1,
          kind: 'order-work',
          action: 'invite',
          enqueueId: randomUUID(),
          correlationId,
          connectionId: order.connectionId,
          receivedAt: Date.now(),
          orderId: order.orderId,
        }),
    },
    signal,
  );
}

/** Assessment orders with work left that no worker holds: their invitation, expiry or announcement queued again. */
async function resumeOrders(c: Connection, correlationId: string, totals: RunTotals) {
  const now = Date.now();
  const due = ordersDue(c, await orderStore().listOrdersWithWork(c.id, ORDERS_PER_RUN), now);
  await publisher.publishAll(
    requireEnv(ENV.stageQueueUrl),
    due.map((work) => ({
      v: 1,
      kind: 'order-work',
      enqueueId: randomUUID(),
      correlationId,
      connectionId: c.id,
      receivedAt: now,
      ...work,
    })),
  );
  totals.followUps += due.length;
}
