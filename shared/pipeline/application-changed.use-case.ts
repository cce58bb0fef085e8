import type { ApplicationRef, ApplicationStanding } from '../ats/port';
import type { ApplicationChangedMessage } from '../queue/messages.schema';
import { ClaimHeldElsewhereError, errorCode, isPermanent } from './errors';
import { withinRateWindow } from './pacing';
import type { ConnectionContext, PipelineDependencies, RunOptions } from './ports';
import type { ApplicationRecord } from './records';
import { showStatus } from './status';

export type ApplicationChangedOutcome = 'left' | 'returned' | 'unchanged' | 'nothing-to-do' | 'unknown-connection';

/** Where the connector acts on what the ATS says of an application it holds: its records, the ATS, its status. */
export interface StandingPlace {
  context: ConnectionContext;
  deps: Pick<PipelineDependencies, 'store' | 'logger'>;
  now: () => number;
  signal?: AbortSignal | undefined;
}

/** The application as the ATS knows it, from the connector's record. */
export const targetOf = (record: ApplicationRecord): ApplicationRef => ({
  atsApplicationId: record.atsApplicationId,
  atsCandidateId: record.atsCandidateId,
  atsJobId: record.atsJobId,
  fromStageId: record.stageId,
});

/**
 * Acts on the application's standing as the ATS says it now, for one of its records: an exit is recorded (an
 * invitation moves to `left`, and shows "cancelled"), or an exit undone returns the invitation to where it was (and
 * its status). Answers what changed.
 */
export async function actOnStanding(
  place: StandingPlace,
  record: ApplicationRecord,
  standing: ApplicationStanding,
): Promise<'left' | 'returned' | 'unchanged'> {
  const { context, deps, now, signal } = place;
  const target = targetOf(record);
  const log = {
    connectionId: record.connectionId,
    atsApplicationId: record.atsApplicationId,
    triggerId: record.triggerId,
  };
  if (!standing.active) {
    if (record.state === 'left' || record.exit) return 'unchanged';
    const exit = { kind: standing.exit, reason: standing.reason?.slice(0, 200), at: now() };
    const after = await deps.store.recordExit(record, exit);
    if (after?.state !== 'left') return after?.exit ? 'left' : 'unchanged';
    await showStatus({ context, key: record, target, deps, signal }, 'cancelled');
    deps.logger.info('the candidate left the process: no more reminders or expiry', { ...log, exit: standing.exit });
    return 'left';
  }
  if (record.state !== 'left' && !record.exit) return 'unchanged';
  const after = await deps.store.undoExit(record, now());
  if (record.state === 'left' && (after?.state === 'invited' || after?.state === 'expired')) {
    await showStatus({ context, key: record, target, deps, signal }, after.state);
    deps.logger.info('the candidate is back in the process: the invitation is as it was', {
      ...log,
      state: after.state,
    });
  }
  return 'returned';
}

/** Records an exit or its undo could change: a 'left' hint concerns the others, a 'returned' one those that left. */
const concerned = (record: ApplicationRecord, change: ApplicationChangedMessage['change']): boolean =>
  change === 'left' ? record.state !== 'left' && record.exit === undefined : record.state === 'left' || !!record.exit;

/**
 * The ATS said an application left the process or came back: a hint, acted on only after one read of what the ATS says
 * now (a delivery may be late, reordered, or, on Lever, unsigned beyond its token). Nothing is read when the connector
 * holds no record the change concerns. An invitation still being sent comes back after its claim's lease.
 */
export async function handleApplicationChanged(
  message: ApplicationChangedMessage,
  deps: PipelineDependencies,
  options: RunOptions = {},
): Promise<{ outcome: ApplicationChangedOutcome; reason?: string }> {
  const context = await deps.contextFor(message.connectionId);
  if (!context) return { outcome: 'unknown-connection' };
  const records = (await deps.store.findApplicationsByAtsId(message.connectionId, message.atsApplicationId)).filter(
    (r) => concerned(r, message.change),
  );
  const first = records[0];
  if (!first) return { outcome: 'nothing-to-do' };
  const leaseMs = options.leaseMs ?? 60_000;
  if (message.change === 'left' && records.some((r) => r.state === 'claimed'))
    throw new ClaimHeldElsewhereError(`the invitation of application ${message.atsApplicationId}`, leaseMs);
  const now = deps.now ?? Date.now;
  const place: StandingPlace = { context, deps, now, signal: options.signal };
  try {
    return await withinRateWindow(context, message, options.signal, async () => {
      const standing = await context.ats.readStanding(targetOf(first), options.signal);
      const outcomes: ('left' | 'returned' | 'unchanged')[] = [];
      for (const record of records) outcomes.push(await actOnStanding(place, record, standing));
      return { outcome: outcomes.find((o) => o !== 'unchanged') ?? 'unchanged' };
    });
  } catch (error) {
    if (!isPermanent(error)) throw error;
    deps.logger.warn('application changed: the ATS refused the read', {
      connectionId: message.connectionId,
      atsApplicationId: message.atsApplicationId,
      code: errorCode(error),
    });
    return { outcome: 'unchanged', reason: errorCode(error) };
  }
}
