import { SesMailer } from '../../shared/mail/ses.mailer';
import { DynamoMappingStore } from '../../shared/mapping';
import type { PipelineDependencies, PipelineLogger } from '../../shared/pipeline/ports';
import { connectionContext } from './connections';
import { ENV, tableNames } from './env';

/** The workers' collaborators, built once per warm function. */
export function pipelineDependencies(logger: PipelineLogger): PipelineDependencies {
  const retentionDays = Number(process.env[ENV.retentionDays] ?? '') || undefined;
  return {
    store: new DynamoMappingStore({ tables: tableNames(), retention: retentionDays ? { applicationDays: retentionDays } : undefined }),
    mailer: new SesMailer({ defaultFrom: process.env[ENV.mailFrom] ?? 'interviews@example.com' }),
    contextFor: connectionContext,
    logger,
  };
}
