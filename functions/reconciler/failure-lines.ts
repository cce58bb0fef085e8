import { createHash } from 'node:crypto';
import type { PipelineLogger, QueueLedger } from '../../shared/pipeline/ports';

const DAY_MS = 86_400_000;

/**
 * A connection's failure the reconciler meets on every run while it lasts (its ATS refuses the key, its document is
 * invalid): an ERROR line, which the logged-errors alarm counts, the first time in a day the connection fails so
 * (the same part, the same code), and a WARN line on the runs between, so the alarm tells of a new failure once a
 * day and not every 10 minutes. The day is kept in the queue ledger (`failing#…`, one conditional write a failing
 * connection and run); where the ledger cannot say, the line is an ERROR.
 */
export async function sayConnectionFailure(
  deps: { ledger: Pick<QueueLedger, 'claimEnqueue'>; logger: PipelineLogger; now?: () => number },
  connectionId: string,
  line: { message: string; kind: string; attributes: Record<string, unknown> },
): Promise<void> {
  const digest = createHash('sha256').update(line.kind).digest('hex').slice(0, 16);
  const now = (deps.now ?? Date.now)();
  const first = await deps.ledger.claimEnqueue(connectionId, `failing#${digest}`, now, DAY_MS).catch(() => true);
  const attributes = { connectionId, ...line.attributes };
  if (first) deps.logger.error(line.message, attributes);
  else deps.logger.warn(`${line.message} (still; said as an error at most once a day)`, attributes);
}
