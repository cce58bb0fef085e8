import { WORKER_TIMING } from './constants';

/** Where a waiting worker reads the held record, and its clock. */
export interface HeldRecordReader<R> {
  read: () => Promise<R | undefined>;
  now?: (() => number) | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

/**
 * How long a worker may wait on another: half its own time, which is its claim's length less what the claim keeps past
 * the deadline (`inFlightSettleMs`), and never more than `capMs`.
 */
export const ownWaitMs = (leaseMs: number, capMs: number): number =>
  Math.min(capMs, Math.max(0, leaseMs - WORKER_TIMING.inFlightSettleMs) / 2);

/**
 * Another worker holds the claim, most often on a duplicate delivery processed side by side. Poll it briefly:
 * true when that worker finished (the message can be acknowledged), false when it still holds it or its lease
 * ran out (the message must come back later). At most `heldClaimWaitMs / jobPollMs` reads, whatever the clock says.
 */
export async function waitForHolder<R extends { leaseUntil?: number | undefined }>(
  reader: HeldRecordReader<R>,
  finished: (record: R) => boolean,
  leaseMs: number,
): Promise<boolean> {
  const now = reader.now ?? Date.now;
  const sleep = reader.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const waitMs = ownWaitMs(leaseMs, WORKER_TIMING.heldClaimWaitMs);
  const deadline = now() + waitMs;
  for (let look = 0; look < Math.ceil(waitMs / WORKER_TIMING.jobPollMs) && now() < deadline; look++) {
    await sleep(WORKER_TIMING.jobPollMs);
    const record = await reader.read();
    if (!record) return false;
    if (finished(record)) return true;
    if (record.leaseUntil === undefined || record.leaseUntil < now()) return false;
  }
  return false;
}
