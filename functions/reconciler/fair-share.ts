import { withDeadline } from '../../shared/aws/deadline';

export interface FairShareOptions {
  /** Milliseconds the run has left for work (its deadline less a margin). */
  remainingMs: () => number;
  /** Picks where the round starts; Math.random by default. */
  random?: () => number;
  /** Items worked on at once (1 by default); each still gets its share of the time left. */
  concurrency?: number;
}

export interface FairShareResult<T> {
  /** In the order they ran: the round starts at a random item, so none is always last. */
  ran: T[];
  /** Items not started: the run's time was spent. The next run takes them up. */
  notStarted: T[];
}

/** How long what a connection's share found may take to be sent once the share is spent: within the run's margin. */
export const SEND_FOUND_MS = 2_000;

/**
 * Sends what a connection's share found (its messages, and taking back the ledger's marks of those not sent) under a
 * deadline of its own: the share's time where it has some left, and at least SEND_FOUND_MS. The share's may be spent,
 * since finding stops when it is, and SDK calls under it would abort at once, leaving the reports found unsent and
 * marked pending.
 */
export function sendingFound<T>(work: () => Promise<T>, share?: AbortSignal): Promise<T> {
  const deadline = new AbortController();
  const least = AbortSignal.timeout(SEND_FOUND_MS);
  const spent = () => {
    if (least.aborted && (share === undefined || share.aborted)) deadline.abort(least.reason);
  };
  least.addEventListener('abort', spent, { once: true });
  share?.addEventListener('abort', spent, { once: true });
  return withDeadline(deadline.signal, work);
}

/**
 * Runs `work` for each item (a connection) within one run, fairly. Each item gets its share of the time left, that
 * time divided by the items still to run, as a signal that also bounds every AWS SDK call its work makes
 * (shared/aws/deadline.ts); an item that finishes early leaves its time to the others. So one customer with much
 * data cannot spend the others' time, and one connection's reads never outgrow its share.
 */
export async function forEachFairly<T>(
  items: readonly T[],
  options: FairShareOptions,
  work: (item: T, signal: AbortSignal) => Promise<void>,
): Promise<FairShareResult<T>> {
  const start = Math.min(items.length - 1, Math.floor((options.random ?? Math.random)() * items.length));
  const order = items.length ? [...items.slice(start), ...items.slice(0, start)] : [];
  const ran: T[] = [];
  const lanes = Math.max(1, Math.floor(options.concurrency ?? 1));
  let next = 0;
  let stopped = false;
  const lane = async () => {
    while (next < order.length && !stopped) {
      const left = options.remainingMs();
      if (left <= 0) {
        stopped = true;
        return;
      }
      // Its share: the time left, over the items still to run in each lane.
      const share = Math.floor((left * Math.min(lanes, order.length - next)) / (order.length - next));
      const signal = AbortSignal.timeout(Math.max(1, Math.min(left, share)));
      const item = order[next++] as T;
      ran.push(item);
      await withDeadline(signal, () => work(item, signal));
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, order.length) }, lane));
  return { ran, notStarted: order.slice(ran.length) };
}
