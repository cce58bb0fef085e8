import { WORKER_TIMING } from './constants';
import type { PipelineDependencies } from './ports';
import type { ApplicationKey, ApplicationRecord } from './records';

/**
 * Another worker holds the claim, most often on a duplicate delivery processed side by side. Poll it briefly:
 * true when that worker finished (the message can be acknowledged), false when it still holds it or its lease
 * ran out (the message must come back later).
 */
export async function waitForHolder(
  deps: PipelineDependencies,
  key: ApplicationKey,
  finished: (record: ApplicationRecord) => boolean,
  leaseMs: number,
): Promise<boolean> {
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = now() + Math.min(WORKER_TIMING.heldClaimWaitMs, leaseMs / 2);
  while (now() < deadline) {
    await sleep(WORKER_TIMING.jobPollMs);
    const record = await deps.store.getApplication(key);
    if (!record) return false;
    if (finished(record)) return true;
    if (record.leaseUntil === undefined || record.leaseUntil < now()) return false;
  }
  return false;
}
