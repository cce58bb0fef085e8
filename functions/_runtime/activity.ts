import { type ActivityCount, DynamoActivity, type TimelineEntry } from '../../shared/mapping/activity.records';
import type { PipelineMetric, PipelineMetrics } from '../../shared/observability/metrics';
import type { PipelineLogger } from '../../shared/pipeline/ports';
import { errorName } from '../../shared/errors';

/** The pipeline's counts the console shows, by the metric they come from. */
const COUNTED: Partial<Record<PipelineMetric, ActivityCount>> = {
  Invited: 'Invited',
  WrittenBack: 'WrittenBack',
  Failed: 'Failed',
  Deferred: 'Deferred',
};

/**
 * A connection's deferrals alone (no other count, webhook or write-back) wait in the environment up to this long
 * before they are written, with its next flush after that or with its next other count: a burst at an ATS's rate
 * limit defers most messages several times, and a write each would cost the console's tally more DynamoDB requests
 * than the work itself (Workable at 10 per 10 s: 3.2 of 18.6 a candidate). The count of an environment that stops
 * meanwhile is lost: the console's Deferred is a sign of waiting, never a ledger (the Deferred metric counts each).
 */
const DEFERRALS_HELD_MS = 60_000;

interface Pending {
  /** When the first of them happened: they are counted on its day (an invocation lasts minutes at most). */
  at: number;
  counts: Partial<Record<ActivityCount, number>>;
  webhookAt?: number;
  writeBackAt?: number;
}

/**
 * What one invocation saw, for the console (shared/mapping/activity.records.ts): counted and noted while it runs,
 * written once when it ends (one write per connection for the counts, 25 timeline entries to a request), but for a
 * connection's deferrals alone, held a while (DEFERRALS_HELD_MS). A write that fails loses only what the console
 * would have shown: it never fails the work, and is logged by its code.
 */
export class ActivityTally {
  private pending = new Map<string, Pending>();
  private entries: TimelineEntry[] = [];

  public constructor(private readonly store: () => Pick<DynamoActivity, 'addDay' | 'addTimeline'> | undefined) {}

  public count(count: ActivityCount, connectionId: string, at = Date.now()): void {
    const day = this.day(connectionId, at);
    day.counts[count] = (day.counts[count] ?? 0) + 1;
    if (count === 'WrittenBack') day.writeBackAt = at;
  }

  public webhook(connectionId: string, at = Date.now()): void {
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
    const entries = this.entries;
    this.entries = [];
    if (!store) {
      this.pending = new Map();
      return;
    }
    const pending = new Map([...this.pending].filter(([, p]) => !heldBack(p)));
    for (const connectionId of pending.keys()) this.pending.delete(connectionId);
    if (!pending.size && !entries.length) return;
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

/** Deferrals alone, counted within the last DEFERRALS_HELD_MS: kept for a later flush. */
const heldBack = (p: Pending): boolean =>
  Object.keys(p.counts).every((count) => count === 'Deferred') &&
  p.webhookAt === undefined &&
  p.writeBackAt === undefined &&
  Date.now() - p.at < DEFERRALS_HELD_MS;

let store: DynamoActivity | undefined;
/** The function's tally: written to the activity table (`ACTIVITY_TABLE`); nowhere when the table is not set. */
export const activity = new ActivityTally(() => {
  const table = process.env.ACTIVITY_TABLE;
  if (!table) return undefined;
  store ??= new DynamoActivity(table);
  return store;
});
