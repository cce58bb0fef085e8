import { errorCode, errorMessage, isPermanent, mayHaveSucceeded } from '../errors';
import { refusesKey, stoppedUnsent } from './errors';
import type { PipelineDependencies } from './ports';
import type { ApplicationKey } from './records';

/** Work a message claimed on one application: who holds it, what its lines carry, how it hands the claim back. */
export interface ClaimedWork {
  key: ApplicationKey;
  owner: string;
  log: Record<string, unknown>;
  /** Left on the application when the work hands its claim back unsent; undefined when it did not start clean. */
  cleanStop: string | undefined;
  /** The log line of a permanent failure, e.g. "report: write-back failed permanently". */
  failedLine: string;
}

export type FailedOutcome = { outcome: 'failed'; reason: string };

/**
 * How claimed work ends when one of its steps throws, the same for every use case:
 * - the lease passed to another worker: `onLeaseLost` says what that means here;
 * - a retryable error: rethrown for SQS to retry; when nothing was sent (a rate limit before the call), the claim
 *   is handed back at once, with the clean-stop mark, so the next delivery resumes without a lookup;
 * - the connection's key refused: the claim handed back, and rethrown for SQS to retry;
 * - a permanent error: the application is marked failed with the code and reason, and an ERROR line says so.
 */
export async function endClaimedWork<T>(
  work: ClaimedWork,
  error: unknown,
  deps: Pick<PipelineDependencies, 'store' | 'logger'>,
  onLeaseLost: () => Promise<T> | T,
): Promise<T | FailedOutcome> {
  if (errorCode(error) === 'lease-lost') return onLeaseLost();
  if (refusesKey(error)) {
    // The connection's key refused is no verdict on this work (key-refused.ts): the claim is handed back, unclean where
    // the refused call may have landed, and the message comes back (at last to the DLQ, redriven once the key works);
    // the use case says it.
    const cleanStop = mayHaveSucceeded(error) ? undefined : work.cleanStop;
    await deps.store.releaseClaim(work.key, work.owner, cleanStop).catch(() => undefined);
    throw error;
  }
  if (!isPermanent(error)) {
    if (stoppedUnsent(error))
      await deps.store.releaseClaim(work.key, work.owner, work.cleanStop).catch(() => undefined);
    throw error;
  }
  await deps.store.markApplicationFailed(work.key, work.owner, `${errorCode(error)}: ${errorMessage(error)}`);
  deps.logger.error(work.failedLine, { ...work.log, code: errorCode(error) });
  return { outcome: 'failed', reason: errorCode(error) };
}
