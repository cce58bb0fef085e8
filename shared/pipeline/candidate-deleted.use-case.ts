import type { CandidateDeletedMessage } from '../queue/messages.schema';
import type { PipelineDependencies } from './ports';

export interface CandidateDeletedResult {
  outcome: 'purged' | 'unknown-connection' | 'not-confirmed';
  applications: number;
}

/**
 * The ATS deleted or anonymised a candidate: every record the connector holds about them goes. The events
 * table holds delivery ids and report ids only, no personal data; queued messages expire with the queue.
 */
export async function handleCandidateDeleted(
  message: Pick<CandidateDeletedMessage, 'connectionId' | 'enqueueId' | 'atsCandidateId' | 'atsApplicationIds'>,
  deps: Pick<PipelineDependencies, 'store' | 'logger' | 'contextFor'>,
  signal?: AbortSignal,
): Promise<CandidateDeletedResult> {
  const context = await deps.contextFor(message.connectionId);
  if (!context) return { outcome: 'unknown-connection', applications: 0 };
  const confirmation = await context.ats.confirmCandidateDeleted?.(
    {
      deliveryId: message.enqueueId,
      atsCandidateId: message.atsCandidateId,
      atsApplicationIds: message.atsApplicationIds,
    },
    signal,
  );
  if (confirmation && !confirmation.confirmed) {
    deps.logger.warn('candidate deletion not confirmed by the ATS; nothing purged', {
      connectionId: message.connectionId,
      reason: confirmation.reason,
    });
    return { outcome: 'not-confirmed', applications: 0 };
  }
  const removed = await deps.store.purgeCandidate(
    message.connectionId,
    message.atsCandidateId,
    message.atsApplicationIds,
  );
  deps.logger.info('candidate purged', { connectionId: message.connectionId, applications: removed.applications });
  return { outcome: 'purged', ...removed };
}
