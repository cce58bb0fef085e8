import { createHash } from 'node:crypto';
import { withDeadline } from '../aws/deadline';
import { isPermanent } from './errors';
import { DAY_MS } from './constants';
import type { PipelineLogger, QueueLedger } from './ports';

/** The ledger's say on whether the failure was told today gets its own time: the share that failed may be spent. */
const CLAIM_MS = 2_000;

/**
 * A connection's own failure the reconciler meets on every run while it lasts (its ATS or the service refusing its
 * key for good, an invalid document): an ERROR line, which the logged-errors alarm counts, the first time in a day
 * the connection fails so (the same part, the same code), and a WARN line on the runs between, so one customer's
 * lasting problem raises the alarm once a day, not every 10 minutes. Anything else (a throttle, an outage, a bug: no
 * verdict for good) is an ERROR every time, as is a failure whose day the queue ledger cannot say (`failing#…`, one
 * conditional write a failing connection and run).
 */
export async function sayConnectionFailure(
  deps: { ledger: Pick<QueueLedger, 'claimEnqueue'>; logger: PipelineLogger; now?: (() => number) | undefined },
  connectionId: string,
  line: { message: string; kind: string; error: unknown; permanent?: boolean; attributes: Record<string, unknown> },
): Promise<void> {
  const attributes = { connectionId, ...line.attributes };
  if (!(line.permanent ?? isPermanent(line.error))) return deps.logger.error(line.message, attributes);
  const digest = createHash('sha256').update(line.kind).digest('hex').slice(0, 16);
  const now = (deps.now ?? Date.now)();
  const first = await withDeadline(AbortSignal.timeout(CLAIM_MS), () =>
    deps.ledger.claimEnqueue(connectionId, `failing#${digest}`, now, DAY_MS),
  ).catch(() => true);
  if (first) deps.logger.error(line.message, attributes);
  else deps.logger.warn(`${line.message} (still; said as an error once a day)`, attributes);
}
