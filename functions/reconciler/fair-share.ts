import { withDeadline } from '../../shared/aws/deadline';

export interface FairShareOptions {
  /** Milliseconds the run has left for work (its deadline less a margin). */
  remainingMs: () => number;
  /** Picks where the round starts; Math.random by default. */
  random?: () => number;
}

export interface FairShareResult<T> {
  /** In the order they ran: the round starts at a random item, so none is always last. */
  ran: T[];
  /** Items not started: the run's time was spent. The next run takes them up. */
  notStarted: T[];
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
  for (const [index, item] of order.entries()) {
    const left = options.remainingMs();
    if (left <= 0) return { ran, notStarted: order.slice(index) };
    const signal = AbortSignal.timeout(Math.max(1, Math.floor(left / (order.length - index))));
    ran.push(item);
    await withDeadline(signal, () => work(item, signal));
  }
  return { ran, notStarted: [] };
}
