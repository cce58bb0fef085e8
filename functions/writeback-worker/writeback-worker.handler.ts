import { createLogger } from '../../shared/observability/logger';
import { createMetrics } from '../../shared/observability/metrics';
import { ClaimHeldElsewhereError } from '../../shared/pipeline/errors';
import { handleReportCreated } from '../../shared/pipeline/report-created.use-case';
import { reportCreatedMessageSchema } from '../../shared/queue/messages.schema';
import { pipelineDependencies } from '../_runtime/pipeline';
import { deferToOwnQueue } from '../_runtime/deferral';
import { ENV } from '../_runtime/env';
import { sqsBatchHandler } from '../_runtime/sqs-batch';

const logger = createLogger('writeback-worker');
const deps = pipelineDependencies(logger);
const metrics = createMetrics();

/** SQS report-events → the report written back once to the candidate's application. */
export const handler = sqsBatchHandler(
  reportCreatedMessageSchema,
  async (message, record, run) => {
    const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? '1');
    const result = await handleReportCreated(message, deps, { receiveCount, ...run });
    logger.info('report handled', { connectionId: message.connectionId, reportId: message.reportId, ...result });
    const counted = { 'written-back': 'WrittenBack', unmatched: 'Unmatched', failed: 'Failed' } as const;
    if (result.outcome in counted) metrics.count(counted[result.outcome as keyof typeof counted], message.connectionId);
    if (result.advanced) metrics.count('Advanced', message.connectionId);
    if (result.flagged) metrics.count('Flagged', message.connectionId);
    if (result.outcome === 'held-elsewhere')
      throw new ClaimHeldElsewhereError(`report ${message.reportId}`, run.leaseMs);
  },
  logger,
  { defer: deferToOwnQueue(ENV.reportQueueUrl), metrics },
);
