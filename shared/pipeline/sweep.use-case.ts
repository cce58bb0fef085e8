import { randomUUID } from 'node:crypto';
import { boundStageEnteredEvent } from '../ats/bounds';
import type { StageEnteredMessage } from '../queue/messages.schema';
import { errorCode, isPermanent } from './errors';
import { sayConnectionFailure } from './failure-lines';
import { WORKER_TIMING } from './constants';
import { stageSubject, type ConnectionContext, type PipelineDependencies, type QueueLedger } from './ports';
import type { Trigger } from '../config';
import type { StageEnteredEvent } from '../ats/port';

export interface SweepTriggerResult {
  triggerId: string;
  /** Applications read from the ATS's list in this run, and those of them the connector did not know. */
  listed: number;
  enqueued: number;
  /** Applications the connector did not know whose stage change was enqueued lately (its message is pending). */
  pending: number;
  pages: number;
  /**
   * `done`: the list was read to its end; `not-due`: swept less than `everyMinutes` ago; `yielded`: the connection's
   * queue holds candidates' work waiting for the ATS, so the sweep left the budget to it; else why it stopped.
   */
  state: 'done' | 'continues' | 'not-due' | 'yielded' | 'rate-limited' | 'failed';
  reason?: string;
}

export interface SweepResult {
  connectionId: string;
  triggers: SweepTriggerResult[];
}

export interface SweepDependencies extends Pick<PipelineDependencies, 'store' | 'contextFor' | 'logger' | 'now'> {
  ledger: QueueLedger;
  /** Puts stage-entered messages on the stage-events queue. */
  enqueue(messages: StageEnteredMessage[]): Promise<void>;
}

/**
 * The ATS's side of reconciliation: a stage change whose webhook never came (Greenhouse gives up after about 15
 * hours and creates a webhook disabled when its ping fails) leaves a candidate in the trigger's stage for ever.
 * Every `sweep.everyMinutes`, each trigger's stage is listed through the ATS's API and each application the mapping
 * tables do not know for that trigger is enqueued as a stage change; the claims make one found twice harmless.
 * Bounded: `maxPagesPerRun` pages a run, the ATS's pacing respected (a spent window stops the run, not the list),
 * and the place in the list kept in the events table, so a long list spans several runs.
 * Background work: it runs on spare rate budget only. While the connection's queue holds messages deferred for the
 * ATS's rate limit (the ledger's backlog), or the ATS announced its window spent, the run makes no ATS call and the
 * next run goes on. An application whose stage change was enqueued lately (its webhook came; the message waits
 * for its turn) is not enqueued again.
 */
export async function sweepConnection(
  connectionId: string,
  deps: SweepDependencies,
  signal?: AbortSignal,
): Promise<SweepResult> {
  const result: SweepResult = { connectionId, triggers: [] };
  const context = await deps.contextFor(connectionId);
  const list = context?.ats.listApplicationsInStage?.bind(context.ats);
  if (!context || !list || !context.connection.sweep.enabled) return result;
  let backlog: Promise<number | undefined> | undefined;
  const run: SweepRun = {
    connectionId,
    context,
    list,
    deps,
    signal,
    now: deps.now ?? Date.now,
    // Read once a run, and only when a trigger is due.
    backlogUntil: () => (backlog ??= deps.ledger.backlogUntil(connectionId)),
  };
  for (const trigger of context.connection.triggers) result.triggers.push(await sweepTrigger(run, trigger));
  return result;
}

type ListPage = NonNullable<ConnectionContext['ats']['listApplicationsInStage']>;

/** One connection's sweep: what each trigger's sweep runs with. */
interface SweepRun {
  connectionId: string;
  context: ConnectionContext;
  list: ListPage;
  deps: SweepDependencies;
  signal: AbortSignal | undefined;
  now: () => number;
  backlogUntil: () => Promise<number | undefined>;
}

/** One trigger: not due, yielded to the queue's backlog, or its list read from where the last run left it. */
async function sweepTrigger(run: SweepRun, trigger: Trigger): Promise<SweepTriggerResult> {
  const { connectionId, deps, now } = run;
  const outcome: SweepTriggerResult = {
    triggerId: trigger.id,
    listed: 0,
    enqueued: 0,
    pending: 0,
    pages: 0,
    state: 'continues',
  };
  const progress = await deps.store.getSweepProgress(connectionId, trigger.id);
  const everyMs = run.context.connection.sweep.everyMinutes * 60_000;
  if (!progress?.cursor && progress?.completedAt !== undefined && now() - progress.completedAt < everyMs)
    return { ...outcome, state: 'not-due' };
  if (((await run.backlogUntil()) ?? 0) > now()) return { ...outcome, state: 'yielded' };
  const place = {
    cursor: progress?.cursor,
    startedAt: progress?.cursor ? (progress.startedAt ?? now()) : now(),
    found: progress?.cursor ? (progress.found ?? 0) : 0,
  };
  await readPages(run, trigger, place, outcome);
  if (outcome.enqueued)
    deps.logger.info('sweep: stage changes that never arrived, enqueued', {
      connectionId,
      triggerId: trigger.id,
      enqueued: outcome.enqueued,
    });
  return outcome;
}

/** Pages of the trigger's list, up to `maxPagesPerRun`, each one's unknown applications enqueued, the place kept. */
async function readPages(
  run: SweepRun,
  trigger: Trigger,
  place: { cursor: string | undefined; startedAt: number; found: number },
  outcome: SweepTriggerResult,
): Promise<void> {
  const { connectionId, context, deps, signal, now } = run;
  while (outcome.pages < context.connection.sweep.maxPagesPerRun && !signal?.aborted) {
    let page: Awaited<ReturnType<ListPage>>;
    try {
      // A page takes the calls its profile declares, on a near turn only: a busy schedule keeps it for the next run.
      if (context.turns && !(await context.turns.takeNear('sweepPage', signal))) {
        outcome.state = 'rate-limited';
        return;
      }
      page = await run.list({ stage: trigger.stage, jobs: trigger.jobs }, place.cursor, signal);
    } catch (error) {
      outcome.state = isPermanent(error) ? 'failed' : 'rate-limited';
      outcome.reason = errorCode(error);
      // A refusal for good is an operator's to fix (an error once a day while it lasts); a busy or rate-limited ATS
      // is left to the next run.
      const attributes = { triggerId: trigger.id, code: outcome.reason };
      if (!isPermanent(error))
        deps.logger.info('sweep: the ATS list could not be read', { connectionId, ...attributes });
      else
        await sayConnectionFailure(deps, connectionId, {
          message: 'sweep: the ATS list could not be read',
          kind: `sweep ${trigger.id} ${outcome.reason}`,
          error,
          attributes,
        });
      return;
    }
    outcome.pages++;
    outcome.listed += page.events.length;
    const { enqueued, pending } = await enqueueUnknown(run, trigger, page.events);
    outcome.pending += pending;
    outcome.enqueued += enqueued;
    place.found += enqueued;
    place.cursor = page.next;
    const { startedAt, found, cursor } = place;
    const saved = cursor ? { cursor, startedAt, found } : { startedAt, completedAt: now(), found };
    await deps.store.saveSweepProgress(connectionId, trigger.id, saved);
    if (!cursor) {
      outcome.state = 'done';
      return;
    }
  }
}

/**
 * A page's applications the mapping tables do not know for the trigger, enqueued as stage changes, except those
 * whose stage change was enqueued lately (pending: the message waits for its turn).
 */
async function enqueueUnknown(
  run: SweepRun,
  trigger: Trigger,
  events: StageEnteredEvent[],
): Promise<{ enqueued: number; pending: number }> {
  const { connectionId, deps, now } = run;
  const known = await deps.store.knownApplications(
    events.map((e) => ({ connectionId, atsApplicationId: e.atsApplicationId, triggerId: trigger.id })),
  );
  const unknown = events.filter((e) => !known.has(e.atsApplicationId));
  const subjects = unknown.map((e) => stageSubject(e.atsApplicationId));
  const pending = unknown.length
    ? await deps.ledger.enqueuedSince(connectionId, subjects, now() - WORKER_TIMING.enqueueGraceMs)
    : new Set<string>();
  const fresh = unknown.filter((e) => !pending.has(stageSubject(e.atsApplicationId)));
  if (fresh.length) {
    await deps.enqueue(
      fresh.map((event) => ({
        v: 1,
        kind: 'stage-entered',
        enqueueId: randomUUID(),
        connectionId,
        receivedAt: now(),
        event: boundStageEnteredEvent(event),
      })),
    );
    await deps.ledger.recordEnqueued(
      connectionId,
      fresh.map((e) => stageSubject(e.atsApplicationId)),
      now(),
    );
  }
  return { enqueued: fresh.length, pending: unknown.length - fresh.length };
}
