import { createLogger } from '../../shared/observability/logger';
import { activity } from '../_runtime/activity';
import { createMetrics } from '../../shared/observability/metrics';
import { ClaimHeldElsewhereError } from '../../shared/pipeline/errors';
import { handleReportCreated } from '../../shared/pipeline/report-created.use-case';
import { reportCreatedMessageSchema } from '../../shared/queue/messages.schema';
import type { PipelineDependencies } from '../../shared/pipeline/ports';
import { completeOrderWithReport } from '../../shared/orders/order-result.use-case';
import { orderDependencies, pipelineDependencies } from '../_runtime/pipeline';
import { deferToOwnQueue } from '../_runtime/deferral';
import { ENV } from '../_runtime/env';
import { sqsBatchHandler } from '../_runtime/sqs-batch';

const logger = createLogger('writeback-worker');
/** Built when the first order's report comes: a connector without orders never reads the orders table. */
let orderDeps: ReturnType<typeof orderDependencies> | undefined;
const deps = {
  ...pipelineDependencies(logger),
  // A report no application has is looked for among orders only where the connection takes orders.
  orderReport: async (...[context, report, run]: Parameters<NonNullable<PipelineDependencies['orderReport']>>) => {
    if (!context.connection.orders) return undefined;
    orderDeps ??= orderDependencies(logger);
    return completeOrderWithReport(context, report, orderDeps, run);
  },
};
// Each count also reaches the console's counts of the day (../_runtime/activity.ts).
const metrics = activity.counting(createMetrics());

/** SQS report-events → the report written back once to the candidate's application. */
export const handler = sqsBatchHandler(
  reportCreatedMessageSchema,
  async (message, record, run) => {
    const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? '1');
    const result = await handleReportCreated(message, deps, { receiveCount, ...run });
    logger.info('report handled', { connectionId: message.connectionId, reportId: message.reportId, ...result });
    const counted = {
      'written-back': 'WrittenBack',
      unmatched: 'Unmatched',
      failed: 'Failed',
      order: 'OrderCompleted',
    } as const;
    if (result.outcome in counted) metrics.count(counted[result.outcome as keyof typeof counted], message.connectionId);
    if (result.advanced) metrics.count('Advanced', message.connectionId);
    if (result.flagged) metrics.count('Flagged', message.connectionId);
    if (result.outcome === 'held-elsewhere')
      throw new ClaimHeldElsewhereError(`report ${message.reportId}`, run.leaseMs);
  },
  logger,
  { defer: deferToOwnQueue(ENV.reportQueueUrl), metrics },
);
