import type { CandidateDeletedMessage } from '../queue/messages.schema';
import type { PipelineDependencies } from './ports';

export interface CandidateDeletedResult {
  outcome: 'purged' | 'unknown-connection';
  applications: number;
}

/**
 * The ATS deleted or anonymised a candidate: every record the connector holds about them goes. The events
 * table holds delivery ids and report ids only, no personal data; queued messages expire with the queue.
 */
export async function handleCandidateDeleted(
  message: Pick<CandidateDeletedMessage, 'connectionId' | 'atsCandidateId' | 'atsApplicationIds'>,
  deps: Pick<PipelineDependencies, 'store' | 'logger' | 'contextFor'>,
): Promise<CandidateDeletedResult> {
  if (!(await deps.contextFor(message.connectionId))) return { outcome: 'unknown-connection', applications: 0 };
  const removed = await deps.store.purgeCandidate(
    message.connectionId,
    message.atsCandidateId,
    message.atsApplicationIds,
  );
  deps.logger.info('candidate purged', { connectionId: message.connectionId, applications: removed.applications });
  return { outcome: 'purged', ...removed };
}
