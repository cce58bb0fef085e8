import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { createLogger } from '../../shared/observability/logger';
import { invocationKeys, withLogContext } from '../../shared/observability/log-context';
import { reconcileConnection } from '../../shared/pipeline/reconcile.use-case';
import { sweepConnection } from '../../shared/pipeline/sweep.use-case';
import { followUpsDue } from '../../shared/pipeline/follow-up.use-case';
import { QueuePublisher, type ReportCreatedMessage } from '../../shared/queue';
import { connectionRegistry } from '../_runtime/connections';
import { ENV, requireEnv } from '../_runtime/env';
import { connectionContext } from '../_runtime/connections';
import { mappingStore, queueLedger } from '../_runtime/store';
import { reportSubject } from '../../shared/pipeline/ports';
import { deadlineSignal } from '../_runtime/sqs-batch';

const logger = createLogger('reconciler');
const deps = { store: mappingStore(), ledger: queueLedger(), contextFor: connectionContext, logger };
const publisher = new QueuePublisher();

/**
 * On a schedule: reports whose webhook never came are enqueued for write-back. One failing connection does not stop the
 * others.
 */
export function handler(
  _event: unknown,
  context?: Context,
): Promise<{ connections: number; enqueued: number; swept: number; followUps: number; failed: string[] }> {
  // The run's request id correlates the reports it finds with the write-backs they lead to.
  const correlationId = context?.awsRequestId ?? randomUUID();
  return withLogContext({ ...invocationKeys(context), correlation_id: correlationId }, () =>
    reconcileAll(correlationId, context),
  );
}

async function reconcileAll(correlationId: string, context: Context | undefined) {
  const signal = deadlineSignal(context);
  let enqueued = 0;
  let swept = 0;
  let followUps = 0;
  const failed: string[] = [];
  for (const connection of connectionRegistry().all()) {
    try {
      const result = await reconcileConnection(connection.id, deps, signal);
      const messages: ReportCreatedMessage[] = result.enqueued.map((report) => ({
        v: 1,
        kind: 'report-created',
        enqueueId: randomUUID(),
        correlationId,
        receivedAt: Date.now(),
        ...report,
      }));
      try {
        await publisher.publishAll(requireEnv(ENV.reportQueueUrl), messages);
      } catch (error) {
        // Not sent: the ledger's records are taken back, so the next run enqueues these reports instead of taking
        // them as pending for the grace period.
        await deps.ledger
          .forgetEnqueued(
            connection.id,
            messages.map((m) => reportSubject(m.reportId)),
          )
          .catch(() => undefined);
        throw error;
      }
      enqueued += messages.length;
    } catch (error) {
      failed.push(connection.id);
      logger.error('reconcile failed for a connection', {
        connectionId: connection.id,
        code: (error as { code?: string }).code ?? (error as Error).name,
      });
    }
    // The ATS's side: applications in a trigger's stage whose stage change never arrived.
    try {
      const sweep = await sweepConnection(
        connection.id,
        {
          ...deps,
          enqueue: (messages) =>
            publisher.publishAll(
              requireEnv(ENV.stageQueueUrl),
              messages.map((m) => ({ ...m, correlationId })),
            ),
        },
        signal,
      );
      swept += sweep.triggers.reduce((sum, t) => sum + t.enqueued, 0);
      // Invitations with no report: the reminders and expiries now due (the invite worker sends them).
      const due = await followUpsDue(connection, deps, Date.now());
      await publisher.publishAll(
        requireEnv(ENV.stageQueueUrl),
        due.map((followUp) => ({
          v: 1,
          kind: 'follow-up',
          enqueueId: randomUUID(),
          correlationId,
          receivedAt: Date.now(),
          ...followUp,
        })),
      );
      followUps += due.length;
    } catch (error) {
      if (!failed.includes(connection.id)) failed.push(connection.id);
      logger.error('sweep failed for a connection', {
        connectionId: connection.id,
        code: (error as { code?: string }).code ?? (error as Error).name,
      });
    }
  }
  return { connections: connectionRegistry().all().length, enqueued, swept, followUps, failed };
}
