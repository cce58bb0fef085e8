import type { ApplicationRef } from '../ats/port';
import { errorCode, isPermanent } from './errors';
import { afterSideEffect } from './fault-injection';
import type { ConnectionContext, PipelineDependencies } from './ports';
import type { Step } from './steps';
import type { ApplicationRecord } from './records';

/** The statuses recruiters filter on, in the order an application passes them; a status never moves back. */
export const AI_INTERVIEW_STATUSES = ['invited', 'expired', 'completed', 'flagged for review', 'advanced'] as const;
export type AiInterviewStatus = (typeof AI_INTERVIEW_STATUSES)[number];

const RANK: Record<AiInterviewStatus, number> = {
  invited: 1,
  expired: 2,
  completed: 3,
  'flagged for review': 4,
  advanced: 4,
};

/** The tag a status shows as: one per status, so a filter on it finds exactly those applications. */
export const statusTag = (status: AiInterviewStatus): string => `AI interview: ${status}`;

/**
 * Shows `status` in the ATS (`writeBack.status: tags`) with the ATS's own tags, the other statuses' tags removed,
 * and records it. A status ranked below the one shown is never written (a retry cannot flip it back); the same
 * status again is written again, which adds nothing (the adapters add a tag only once).
 */
export async function showStatus(
  context: ConnectionContext,
  record: Pick<ApplicationRecord, 'connectionId' | 'atsApplicationId' | 'triggerId' | 'statusTag'>,
  status: AiInterviewStatus,
  target: ApplicationRef,
  deps: Pick<PipelineDependencies, 'store' | 'logger'>,
  signal?: AbortSignal,
): Promise<void> {
  const setStatusTag = context.ats.setStatusTag?.bind(context.ats);
  if (context.connection.writeBack.status !== 'tags' || !setStatusTag) return;
  // Read again: a write-back may have shown a later status since the caller read the record.
  const stored = (await deps.store.getApplication(record))?.statusTag ?? record.statusTag;
  const shown = AI_INTERVIEW_STATUSES.find((s) => s === stored);
  if (shown && RANK[shown] > RANK[status]) return;
  if (shown === status) return;
  // Every other status is taken off: one shown before a crash may never have been recorded.
  const others = AI_INTERVIEW_STATUSES.filter((s) => s !== status).map(statusTag);
  try {
    await setStatusTag(target, statusTag(status), others, signal);
  } catch (error) {
    // A refusal of the tag (a key without the permission) never undoes the invitation or the write-back it
    // follows: said, and left. Anything that may pass on a retry goes up.
    if (!isPermanent(error)) throw error;
    deps.logger.warn('the status could not be shown in the ATS', {
      connectionId: record.connectionId,
      atsApplicationId: record.atsApplicationId,
      code: errorCode(error),
    });
    return;
  }
  afterSideEffect('status-shown', `${record.connectionId}#${record.atsApplicationId}`);
  await deps.store.recordFollowUp(record, { statusTag: status });
}

/**
 * The status as the last step of an invitation or a write-back (./steps.ts): performed once, recorded with the
 * step that closes the sequence. Without tags configured (or an ATS without them) it is no step at all.
 */
export function statusStep(
  context: ConnectionContext,
  record: Pick<ApplicationRecord, 'statusTag'>,
  status: AiInterviewStatus,
  target: ApplicationRef,
  deps: Pick<PipelineDependencies, 'logger' | 'store'>,
  record_: (statusTag: string, last: boolean) => Promise<void>,
  signal?: AbortSignal,
  key?: Pick<ApplicationRecord, 'connectionId' | 'atsApplicationId' | 'triggerId'>,
): Step<unknown>[] {
  const setStatusTag = context.ats.setStatusTag?.bind(context.ats);
  if (context.connection.writeBack.status !== 'tags' || !setStatusTag) return [];
  const shown = AI_INTERVIEW_STATUSES.find((s) => s === record.statusTag);
  return [
    {
      name: 'status-shown',
      done: shown !== undefined && RANK[shown] >= RANK[status],
      // Setting a tag is idempotent: a started one is simply set again.
      started: false,
      perform: async () => {
        // The invitation and the write-back can run at once: a status shown since (a later one) is kept.
        const stored = key ? (await deps.store.getApplication(key))?.statusTag : undefined;
        const current = AI_INTERVIEW_STATUSES.find((s) => s === stored);
        if (current && RANK[current] >= RANK[status]) return current;
        const others = AI_INTERVIEW_STATUSES.filter((s) => s !== status).map(statusTag);
        try {
          await setStatusTag(target, statusTag(status), others, signal);
        } catch (error) {
          if (!isPermanent(error)) throw error;
          deps.logger.warn('the status could not be shown in the ATS', {
            atsApplicationId: target.atsApplicationId,
            code: errorCode(error),
          });
        }
        return status;
      },
      recordDone: (shownNow, _outcome, last) => record_((shownNow as string | undefined) ?? status, last),
    },
  ];
}
