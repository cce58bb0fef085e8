import { SesMailer } from '../../shared/mail/ses.mailer';
import type { PipelineDependencies, PipelineLogger } from '../../shared/pipeline/ports';
import { connectionContext } from './connections';
import { ENV } from './env';
import { mappingStore } from './store';

/** The workers' collaborators, built once per warm function. */
export function pipelineDependencies(logger: PipelineLogger): PipelineDependencies {
  return {
    store: mappingStore(),
    mailer: new SesMailer({ defaultFrom: process.env[ENV.mailFrom] ?? 'interviews@example.com' }),
    contextFor: connectionContext,
    logger,
  };
}
