import { createLogger } from '../../shared/observability/logger';
import { ClaimHeldElsewhereError } from '../../shared/pipeline/errors';
import { handleStageEntered } from '../../shared/pipeline/stage-entered.use-case';
import { stageEnteredMessageSchema } from '../../shared/queue/messages.schema';
import { pipelineDependencies } from '../_runtime/pipeline';
import { sqsBatchHandler } from '../_runtime/sqs-batch';

const logger = createLogger('invite-worker');
const deps = pipelineDependencies(logger);

/** SQS stage-events → one interview per job × trigger, one invite per application × trigger. */
export const handler = sqsBatchHandler(
  stageEnteredMessageSchema,
  async (message, _record, run) => {
    const results = await handleStageEntered(message, deps, run);
    for (const result of results) logger.info('stage-entered handled', { connectionId: message.connectionId, deliveryId: message.event.deliveryId, ...result });
    if (results.some((r) => r.outcome === 'held-elsewhere')) throw new ClaimHeldElsewhereError(`application ${message.event.atsApplicationId}`);
  },
  logger,
);
