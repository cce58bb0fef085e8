import { type ActivityCount, DynamoActivity, type TimelineEntry } from '../../shared/mapping/activity.records';
import type { PipelineMetric, PipelineMetrics } from '../../shared/observability/metrics';
import type { PipelineLogger } from '../../shared/pipeline/ports';
import { errorName } from '../../shared/errors';
import type { QueueMessage } from '../../shared/queue';

/** The pipeline's counts the console shows, by the metric they come from. */
const COUNTED: Partial<Record<PipelineMetric, ActivityCount>> = {
  Invited: 'Invited',
  WrittenBack: 'WrittenBack',
  Failed: 'Failed',
  Deferred: 'Deferred',
};

/**
 * A connection's last webhook is written at most this often by one environment: the console shows it to the minute,
 * and a burst of deliveries would otherwise write the connection's one day item once each.
 */
export const WEBHOOK_MARK_MS = 60_000;

interface Pending {
  /** When the first of them happened: they are counted on its day (an invocation lasts minutes at most). */
  at: number;
  counts: Partial<Record<ActivityCount, number>>;
  webhookAt?: number;
  writeBackAt?: number;
}

/**
 * What one invocation saw, for the console (shared/mapping/activity.records.ts): counted and noted while it runs,
 * written once when it ends (one write per connection for the counts, 25 timeline entries to a request). A write
 * that fails loses only what the console would have shown: it never fails the work, and is logged by its code.
 */
export class ActivityTally {
  private pending = new Map<string, Pending>();
  private entries: TimelineEntry[] = [];
  /** When this environment last marked each connection's last webhook. */
  private readonly webhookMarked = new Map<string, number>();

  public constructor(private readonly store: () => Pick<DynamoActivity, 'addDay' | 'addTimeline'> | undefined) {}

  public count(count: ActivityCount, connectionId: string, at = Date.now()): void {
    const day = this.day(connectionId, at);
    day.counts[count] = (day.counts[count] ?? 0) + 1;
    if (count === 'WrittenBack') day.writeBackAt = at;
  }

  /** A webhook came: marked as the connection's last unless this environment marked one in the last minute. */
  public webhook(connectionId: string, at = Date.now()): void {
    if (at - (this.webhookMarked.get(connectionId) ?? Number.NEGATIVE_INFINITY) < WEBHOOK_MARK_MS) return;
    this.webhookMarked.set(connectionId, at);
    this.day(connectionId, at).webhookAt = at;
  }

  public note(entry: Omit<TimelineEntry, 'at'> & { at?: number }): void {
    this.entries.push({ ...entry, at: entry.at ?? Date.now() });
  }

  /** The pipeline's metrics, each also counted here where the console shows it. */
  public counting(metrics: PipelineMetrics): PipelineMetrics {
    return {
      count: (metric, connectionId) => {
        metrics.count(metric, connectionId);
        const counted = COUNTED[metric];
        if (counted) this.count(counted, connectionId);
      },
    };
  }

  /**
   * Writes what was counted and noted, within `signal` (the invocation's deadline, ahead of Lambda's): a record cut
   * short by it is dropped, never the invocation's answer delayed past its deadline (SQS would bring the batch back).
   */
  public async flush(logger: PipelineLogger, signal?: AbortSignal): Promise<void> {
    const store = this.store();
    const [pending, entries] = [this.pending, this.entries];
    this.pending = new Map();
    this.entries = [];
    if (!store || (!pending.size && !entries.length)) return;
    if (signal?.aborted) {
      logger.info("activity: no time left for the console's record", { code: 'deadline' });
      return;
    }
    const writes = [...pending].map(([connectionId, p]) =>
      store.addDay(connectionId, p.at, p.counts, { webhookAt: p.webhookAt, writeBackAt: p.writeBackAt, signal }),
    );
    if (entries.length) writes.push(store.addTimeline(entries, signal));
    for (const result of await Promise.allSettled(writes))
      if (result.status === 'rejected')
        logger.warn("activity: the console's record could not be written", { code: errorName(result.reason) });
  }

  private day(connectionId: string, at: number): Pending {
    const day = this.pending.get(connectionId) ?? { at, counts: {} };
    this.pending.set(connectionId, day);
    return day;
  }
}

/**
 * A webhook's delivery on its application's timeline, at the time the webhook came, noted by the worker that first
 * handles its message (the webhook function answers without the write): the stage it names, never the candidate. Its
 * key is the message's own, so the message handled twice notes one entry.
 */
export function deliveryEntry(message: QueueMessage): TimelineEntry | undefined {
  if (message.origin !== 'webhook') return undefined;
  const { connectionId, receivedAt: at, enqueueId: key } = message;
  const entry = { connectionId, at, key, kind: 'webhook' as const };
  if (message.kind === 'stage-entered') {
    const { atsApplicationId, stage } = message.event;
    return { ...entry, atsApplicationId, detail: `webhook: entered ${stage.name ?? stage.id ?? 'a stage'}` };
  }
  if (message.kind !== 'application-changed') return undefined;
  const detail = `webhook: the candidate ${message.change === 'left' ? 'left the process' : 'came back'}`;
  return { ...entry, atsApplicationId: message.atsApplicationId, detail };
}

let store: DynamoActivity | undefined;
/** The function's tally: written to the activity table (`ACTIVITY_TABLE`); nowhere when the table is not set. */
export const activity = new ActivityTally(() => {
  const table = process.env.ACTIVITY_TABLE;
  if (!table) return undefined;
  store ??= new DynamoActivity(table);
  return store;
});
