import { randomUUID } from 'node:crypto';
import { boundStageEnteredEvent } from '../ats/bounds';
import type { StageEnteredMessage } from '../queue/messages.schema';
import { errorCode, isPermanent } from './errors';
import { WORKER_TIMING } from './constants';
import { stageSubject, type PipelineDependencies, type QueueLedger } from './ports';

/**
 * The calls one page of a sweep makes at most (Greenhouse: the open jobs and their stages on a pass's first page,
 * then the stage's rows, their applications, candidates and jobs): a page starts only when the ATS's announced
 * window has room for all of them, so none stops half read and is read again.
 */
const SWEEP_PAGE_CALLS = 6;

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
  const now = deps.now ?? Date.now;
  const { everyMinutes, maxPagesPerRun } = context.connection.sweep;
  let backlog: Promise<number | undefined> | undefined;
  for (const trigger of context.connection.triggers) {
    const outcome: SweepTriggerResult = {
      triggerId: trigger.id,
      listed: 0,
      enqueued: 0,
      pending: 0,
      pages: 0,
      state: 'continues',
    };
    result.triggers.push(outcome);
    const progress = await deps.store.getSweepProgress(connectionId, trigger.id);
    if (
      !progress?.cursor &&
      progress?.completedAt !== undefined &&
      now() - progress.completedAt < everyMinutes * 60_000
    ) {
      outcome.state = 'not-due';
      continue;
    }
    // Read once a run, and only when a trigger is due.
    backlog ??= deps.ledger.backlogUntil(connectionId);
    if (((await backlog) ?? 0) > now()) {
      outcome.state = 'yielded';
      continue;
    }
    let cursor = progress?.cursor;
    const startedAt = cursor ? (progress?.startedAt ?? now()) : now();
    let found = cursor ? (progress?.found ?? 0) : 0;
    while (outcome.pages < maxPagesPerRun && !signal?.aborted) {
      // The ATS said its window is spent: the list waits for the next run rather than spend a 429.
      if ((context.pacer?.waitMs(SWEEP_PAGE_CALLS) ?? 0) > 0) {
        outcome.state = 'rate-limited';
        break;
      }
      let page: Awaited<ReturnType<typeof list>>;
      try {
        page = await list({ stage: trigger.stage, jobs: trigger.jobs }, cursor, signal);
      } catch (error) {
        outcome.state = isPermanent(error) ? 'failed' : 'rate-limited';
        outcome.reason = errorCode(error);
        // A refusal for good is an operator's to fix; a busy or rate-limited ATS is left to the next run.
        const log = isPermanent(error) ? deps.logger.error : deps.logger.info;
        log('sweep: the ATS list could not be read', { connectionId, triggerId: trigger.id, code: outcome.reason });
        break;
      }
      outcome.pages++;
      outcome.listed += page.events.length;
      const known = await deps.store.knownApplications(
        page.events.map((e) => ({ connectionId, atsApplicationId: e.atsApplicationId, triggerId: trigger.id })),
      );
      const unknown = page.events.filter((e) => !known.has(e.atsApplicationId));
      const pending = unknown.length
        ? await deps.ledger.enqueuedSince(
            connectionId,
            unknown.map((e) => stageSubject(e.atsApplicationId)),
            now() - WORKER_TIMING.enqueueGraceMs,
          )
        : new Set<string>();
      const fresh = unknown.filter((e) => !pending.has(stageSubject(e.atsApplicationId)));
      outcome.pending += unknown.length - fresh.length;
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
      outcome.enqueued += fresh.length;
      found += fresh.length;
      cursor = page.next;
      await deps.store.saveSweepProgress(
        connectionId,
        trigger.id,
        cursor ? { cursor, startedAt, found } : { startedAt, completedAt: now(), found },
      );
      if (!cursor) {
        outcome.state = 'done';
        break;
      }
    }
    if (outcome.enqueued)
      deps.logger.info('sweep: stage changes that never arrived, enqueued', {
        connectionId,
        triggerId: trigger.id,
        enqueued: outcome.enqueued,
      });
  }
  return result;
}
