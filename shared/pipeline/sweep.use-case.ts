import { randomUUID } from 'node:crypto';
import { boundStageEnteredEvent } from '../ats/bounds';
import type { StageEnteredMessage } from '../queue/messages.schema';
import { errorCode, isPermanent } from './errors';
import type { PipelineDependencies } from './ports';

export interface SweepTriggerResult {
  triggerId: string;
  /** Applications read from the ATS's list in this run, and those of them the connector did not know. */
  listed: number;
  enqueued: number;
  pages: number;
  /** `done`: the list was read to its end; `not-due`: swept less than `everyMinutes` ago; else why it stopped. */
  state: 'done' | 'continues' | 'not-due' | 'rate-limited' | 'failed';
  reason?: string;
}

export interface SweepResult {
  connectionId: string;
  triggers: SweepTriggerResult[];
}

export interface SweepDependencies extends Pick<PipelineDependencies, 'store' | 'contextFor' | 'logger' | 'now'> {
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
  for (const trigger of context.connection.triggers) {
    const outcome: SweepTriggerResult = { triggerId: trigger.id, listed: 0, enqueued: 0, pages: 0, state: 'continues' };
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
    let cursor = progress?.cursor;
    const startedAt = cursor ? (progress?.startedAt ?? now()) : now();
    let found = cursor ? (progress?.found ?? 0) : 0;
    while (outcome.pages < maxPagesPerRun && !signal?.aborted) {
      // The ATS said its window is spent: the list waits for the next run rather than spend a 429.
      if ((context.ats.pacingWaitMs?.() ?? 0) > 0) {
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
      const fresh = page.events.filter((e) => !known.has(e.atsApplicationId));
      if (fresh.length)
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
