import { errorCode } from '../errors';
import { sayConnectionFailure } from './failure-lines';
import { KEY_REFUSED_SUBJECT, type PipelineLogger, type QueueLedger } from './ports';

/** What holding work for a refused key needs: the ledger where the workers have it (the unit tests may not). */
export interface KeyRefusalDependencies {
  ledger?: Pick<QueueLedger, 'claimEnqueue' | 'recordEnqueued'> | undefined;
  logger: PipelineLogger;
  now?: (() => number) | undefined;
}

/**
 * Work the ATS refused for the connection's key is held, not failed: its caller leaves it due (the reconciler enqueues
 * it again), so it goes through by itself once an operator fixes the key. The refusal is recorded in the queue
 * ledger, where the reconciler sees it and sends the connection one follow-up a run while it lasts, and said once:
 * an ERROR the first time in a day for the connection, WARN lines between (failure-lines.ts).
 */
export async function sayKeyRefused(
  deps: KeyRefusalDependencies,
  connectionId: string,
  line: { message: string; error: unknown; attributes: Record<string, unknown> },
): Promise<void> {
  const now = (deps.now ?? Date.now)();
  const attributes = { ...line.attributes, code: errorCode(line.error) };
  if (!deps.ledger) return deps.logger.error(line.message, { connectionId, ...attributes });
  await deps.ledger.recordEnqueued(connectionId, [KEY_REFUSED_SUBJECT], now).catch(() => undefined);
  await sayConnectionFailure({ ledger: deps.ledger, logger: deps.logger, now: deps.now }, connectionId, {
    message: line.message,
    kind: `ats key ${errorCode(line.error)}`,
    error: line.error,
    permanent: true,
    attributes,
  });
}
