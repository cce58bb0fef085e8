import { SesMailer } from '../../shared/mail/ses.mailer';
import { createLogger } from '../../shared/observability/logger';
import { activity } from '../_runtime/activity';
import { createMetrics } from '../../shared/observability/metrics';
import { ClaimHeldElsewhereError } from '../../shared/pipeline/errors';
import { handleStageEntered } from '../../shared/pipeline/stage-entered.use-case';
import { stageQueueMessageSchema } from '../../shared/queue/messages.schema';
import { handleCandidateDeleted } from '../../shared/pipeline/candidate-deleted.use-case';
import { handleFollowUp } from '../../shared/pipeline/follow-up.use-case';
import { handleApplicationChanged } from '../../shared/pipeline/application-changed.use-case';
import { handleOrderWork } from '../../shared/orders/order-work.use-case';
import { orderDependencies, pipelineDependencies } from '../_runtime/pipeline';
import { deferToOwnQueue } from '../_runtime/deferral';
import { ENV } from '../_runtime/env';
import { sqsBatchHandler } from '../_runtime/sqs-batch';
import { hintDependencies } from '../_runtime/hinted-changes';
import { readHintedChanges } from '../../shared/pipeline/changes-hinted.use-case';

const logger = createLogger('invite-worker');
// Each count also reaches the console's counts of the day (../_runtime/activity.ts).
const metrics = activity.counting(createMetrics());
const deps = {
  ...pipelineDependencies(logger),
  mailer: new SesMailer({ defaultFrom: process.env[ENV.mailFrom] ?? 'interviews@example.com' }),
};
/** Built when the first order comes: a connector without orders never needs the orders table. */
let orderDeps: ReturnType<typeof orderDependencies> | undefined;

/**
 * SQS stage-events → one interview per job × trigger, one invite per application × trigger; deletions purge; the
 * follow-ups of invitations; the work of assessment orders.
 */
export const handler = sqsBatchHandler(
  stageQueueMessageSchema,
  async (message, record, run) => {
    if (message.kind === 'candidate-deleted') {
      await handleCandidateDeleted(message, deps, run.signal);
      return;
    }
    if (message.kind === 'order-work') {
      orderDeps ??= orderDependencies(logger);
      const result = await handleOrderWork(message, { ...deps, ...orderDeps }, run);
      logger.info('order work handled', { connectionId: message.connectionId, action: message.action, ...result });
      if (result.outcome === 'held-elsewhere')
        throw new ClaimHeldElsewhereError(`order ${message.orderId}`, run.leaseMs);
      return;
    }
    if (message.kind === 'application-changed') {
      const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? '1');
      const result = await handleApplicationChanged(message, deps, { receiveCount, ...run });
      logger.info('application change handled', {
        connectionId: message.connectionId,
        change: message.change,
        ...result,
      });
      if (result.outcome === 'left') metrics.count('CandidateLeft', message.connectionId);
      return;
    }
    if (message.kind === 'changes-hinted') {
      const result = await readHintedChanges(message.connectionId, hintDependencies(), run.signal);
      logger.info('changes read', { source: message.source, ...result });
      return;
    }
    if (message.kind === 'follow-up') {
      const result = await handleFollowUp(message, deps, run.signal, run.leaseMs);
      if (result.outcome === 'left') metrics.count('CandidateLeft', message.connectionId);
      logger.info('follow-up handled', { connectionId: message.connectionId, action: message.action, ...result });
      if (result.outcome === 'reminded') metrics.count('Reminded', message.connectionId);
      if (result.outcome === 'expired') metrics.count('Expired', message.connectionId);
      return;
    }
    const results = await handleStageEntered(message, deps, run);
    for (const result of results) {
      logger.info('stage-entered handled', {
        connectionId: message.connectionId,
        deliveryId: message.event.deliveryId,
        ...result,
      });
      if (result.outcome === 'invited') metrics.count('Invited', message.connectionId);
      if (result.outcome === 'failed') metrics.count('Failed', message.connectionId);
    }
    if (results.some((r) => r.outcome === 'held-elsewhere'))
      throw new ClaimHeldElsewhereError(`application ${message.event.atsApplicationId}`, run.leaseMs);
  },
  logger,
  { defer: deferToOwnQueue(ENV.stageQueueUrl), metrics },
);
