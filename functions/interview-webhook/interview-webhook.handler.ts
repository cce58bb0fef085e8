import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import * as v from 'valibot';
import { secretEquals } from '../../shared/http/signature';
import { EVENT_KINDS } from '../../shared/interview-service/constants';
import {
  deliveredCandidateEmail,
  reportCreatedDataSchema,
  webhookDeliverySchema,
} from '../../shared/interview-service/schemas';
import { errorCode } from '../../shared/pipeline/errors';
import { createLogger } from '../../shared/observability/logger';
import { currentCorrelationId } from '../../shared/observability/log-context';
import { QueuePublisher, type ReportCreatedMessage } from '../../shared/queue';
import { disabledAnswer, webhookConnection } from '../_runtime/webhook-connection';
import { ENV, requireEnv } from '../_runtime/env';
import { httpHandler, jsonResponse, MAX_WEBHOOK_BYTES, rawBody } from '../_runtime/http';
import { describeFirstIssue } from '../../shared/validation';
import { WORKER_TIMING } from '../../shared/pipeline/constants';
import { reportSubject } from '../../shared/pipeline/ports';
import { mappingStore, queueLedger } from '../_runtime/store';
import { markDeliveredReport } from '../../shared/pipeline/interview-taken';
import { withDeadline } from '../../shared/aws/deadline';
import { errorName } from '../../shared/errors';

const publisher = new QueuePublisher();
const logger = createLogger('interview-webhook');
const ledger = queueLedger();
const store = mappingStore();
/** How long the report's mark on its invitation may take before the delivery is answered without it. */
const MARK_WITHIN_MS = 2_000;

/**
 * `POST /webhooks/interview/{connectionId}/{token}`: the service signs nothing, so the connection's secret token in the
 * URL authenticates the delivery. Only the ids and the candidate's e-mail (to find their invitation, and them should
 * the report not be given) are taken from the body; the worker re-reads the report through the API. A report whose
 * message is already pending (a repeated delivery, or one the reconciler found first) is acknowledged without a second
 * message: the queue ledger records each report enqueued. Where the connection follows its invitations up, the
 * report's invitation is marked first, so no reminder or expiry goes while the report waits in the queue
 * (shared/pipeline/interview-taken.ts).
 */
export const handler = httpHandler(receive);

async function receive(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const { connectionId = '', token = '' } = event.pathParameters ?? {};
  const body = rawBody(event);
  if (body.length > MAX_WEBHOOK_BYTES) return jsonResponse(413, { error: `body exceeds ${MAX_WEBHOOK_BYTES} bytes` });
  const loaded = await webhookConnection(connectionId, logger);
  if (!loaded.ok) return loaded.response;
  if (!secretEquals(loaded.context.secrets.interviewWebhookToken, token)) {
    logger.warn('interview webhook refused: bad token', { connectionId });
    return jsonResponse(401, { error: 'unknown token' });
  }
  const disabled = await disabledAnswer(connectionId, logger);
  if (disabled) return disabled;
  let document: unknown;
  try {
    document = JSON.parse(body.toString('utf8'));
  } catch {
    return jsonResponse(400, { error: 'body: expected a JSON document' });
  }
  const delivery = v.safeParse(webhookDeliverySchema, document);
  if (!delivery.success)
    return jsonResponse(400, { error: describeFirstIssue(delivery.issues, { fallbackField: 'body' }).message });
  if (delivery.output.event !== EVENT_KINDS.reportCreated)
    return jsonResponse(200, { status: 'ignored', reason: `event ${delivery.output.event} is not handled` });
  const ids = v.safeParse(
    v.pick(reportCreatedDataSchema, ['report_id', 'interview_id', 'candidate_id']),
    delivery.output.data,
  );
  if (!ids.success) return jsonResponse(400, { error: describeFirstIssue(ids.issues, { prefix: 'data' }).message });
  const candidateEmail = deliveredCandidateEmail(delivery.output.data);
  const { interview_id: interviewId, candidate_id: candidateId, report_id: reportId } = ids.output;
  // Best effort, and bounded: the delivery is answered whether or not the mark was made.
  await withDeadline(AbortSignal.timeout(MARK_WITHIN_MS), () =>
    markDeliveredReport({
      context: loaded.context,
      deps: { store, logger },
      log: { connectionId, reportId, interviewId },
      delivery: { reportId, interviewId, candidateId, candidateEmail },
    }),
  );
  return enqueue({
    v: 1,
    kind: 'report-created',
    enqueueId: randomUUID(),
    correlationId: currentCorrelationId(),
    connectionId,
    receivedAt: Date.now(),
    source: 'webhook',
    reportId,
    interviewId,
    candidateId,
    ...(candidateEmail ? { candidateEmail } : {}),
  });
}

/**
 * On the report queue, unless the queue ledger finds this report pending (its webhook came lately, or the
 * reconciler found it); 503 when SQS did not take it, the ledger's record taken back.
 */
async function enqueue(message: ReportCreatedMessage): Promise<APIGatewayProxyStructuredResultV2> {
  const { connectionId, reportId } = message;
  const subject = reportSubject(reportId);
  const claimed = await ledger
    .claimEnqueue(connectionId, subject, message.receivedAt, WORKER_TIMING.enqueueGraceMs)
    .catch((error: unknown) => {
      // The ledger only saves duplicates: without it the report is enqueued all the same.
      logger.warn('interview webhook: the queue ledger could not be read', { connectionId, code: errorCode(error) });
      return true;
    });
  if (!claimed) {
    logger.info('interview webhook: report already pending', { connectionId, reportId });
    return jsonResponse(200, { status: 'accepted', pending: true });
  }
  try {
    await publisher.publish(requireEnv(ENV.reportQueueUrl), message);
  } catch (error) {
    // Not sent: the record is taken back so the service's retry (or the reconciler) enqueues it.
    await ledger.forgetEnqueued(connectionId, [subject]).catch(() => undefined);
    logger.error('interview webhook: could not enqueue', { connectionId, reportId, code: errorName(error) });
    return jsonResponse(503, { error: 'try again later' });
  }
  logger.info('interview webhook: report enqueued', { connectionId, reportId });
  return jsonResponse(200, { status: 'accepted' });
}
