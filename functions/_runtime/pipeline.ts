import type { PipelineDependencies, PipelineLogger } from '../../shared/pipeline/ports';
import { connectionContext } from './connections';
import { mappingStore } from './store';

/**
 * The workers' collaborators, built once per warm function. No mail client here: only the invite worker sends
 * e-mail, and the SES client costs about 50 ms of every cold start that loads it (npm run bench).
 */
export function pipelineDependencies(logger: PipelineLogger): PipelineDependencies {
  return { store: mappingStore(), contextFor: connectionContext, logger };
}
