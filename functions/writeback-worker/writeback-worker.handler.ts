import { createLogger } from '../../shared/observability/logger';
import { handleReportCreated } from '../../shared/pipeline/report-created.use-case';
import { reportCreatedMessageSchema } from '../../shared/queue/messages.schema';
import { pipelineDependencies } from '../_runtime/pipeline';
import { sqsBatchHandler } from '../_runtime/sqs-batch';

const logger = createLogger('writeback-worker');
const deps = pipelineDependencies(logger);

/** SQS report-events → the report written back once to the candidate's application. */
export const handler = sqsBatchHandler(
  reportCreatedMessageSchema,
  async (message, record, signal) => {
    const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? '1');
    const result = await handleReportCreated(message, deps, { receiveCount, signal });
    logger.info('report handled', { connectionId: message.connectionId, reportId: message.reportId, ...result });
  },
  logger,
);
