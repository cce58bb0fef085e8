import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import { secretEquals } from '../../shared/http/signature';
import { EVENT_KINDS } from '../../shared/interview-service/constants';
import { reportCreatedDataSchema, webhookDeliverySchema } from '../../shared/interview-service/schemas';
import { errorCode } from '../../shared/pipeline/errors';
import { createLogger } from '../../shared/observability/logger';
import { currentCorrelationId, invocationKeys, withLogContext } from '../../shared/observability/log-context';
import { gatherDelaySeconds, QueuePublisher, type ReportCreatedMessage } from '../../shared/queue';
import { webhookConnection } from '../_runtime/webhook-connection';
import { ENV, requireEnv } from '../_runtime/env';
import { jsonResponse, MAX_WEBHOOK_BYTES, rawBody } from '../_runtime/http';
import { describeFirstIssue } from '../../shared/validation';
import { WORKER_TIMING } from '../../shared/pipeline/constants';
import { type ConnectionContext, reportSubject } from '../../shared/pipeline/ports';
import { bookReportTurn } from '../../shared/pipeline/report-turn';
import { turnDelaySeconds } from '../_runtime/deferral';
import { deadlineSignal } from '../_runtime/deadline';
import { queueLedger } from '../_runtime/store';
import { errorName } from '../../shared/errors';

const publisher = new QueuePublisher();
const logger = createLogger('interview-webhook');
const ledger = queueLedger();

/**
 * `POST /webhooks/interview/{connectionId}/{token}`: the service signs nothing, so the connection's secret
 * token in the URL authenticates the delivery. Only the ids are taken from the body; the worker re-reads the
 * report through the API. A report whose message is already pending (a repeated delivery, or one the reconciler
 * found first) is acknowledged without a second message: the queue ledger records each report enqueued.
 */
export function handler(event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> {
  // One correlation id per delivery (API Gateway's request id): the worker's lines about it carry the same.
  const correlation = { correlation_id: event.requestContext?.requestId ?? randomUUID() };
  return withLogContext({ ...invocationKeys(context), ...correlation }, () => receive(event));
}

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
  return enqueue(loaded.context, {
    v: 1,
    kind: 'report-created',
    enqueueId: randomUUID(),
    correlationId: currentCorrelationId(),
    connectionId,
    receivedAt: Date.now(),
    source: 'webhook',
    reportId: ids.output.report_id,
    interviewId: ids.output.interview_id,
    candidateId: ids.output.candidate_id,
  });
}

/**
 * On the report queue, unless the queue ledger finds this report pending (its webhook came lately, or the
 * reconciler found it); 503 when SQS did not take it, the ledger's record taken back. Out of sight until the next
 * multiple of the gathering period on the clock (WORKER_TIMING.reportGatherSeconds), with the other reports of it;
 * or, where its connection's ATS schedule is booked far ahead, until shortly before the turn booked for it here.
 */
async function enqueue(
  context: ConnectionContext,
  message: ReportCreatedMessage,
): Promise<APIGatewayProxyStructuredResultV2> {
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
  const gatherDelay = gatherDelaySeconds(gatherSeconds());
  const booked = await turnAhead(context, message, gatherDelay);
  try {
    await publisher.publish(requireEnv(ENV.reportQueueUrl), booked?.message ?? message, {
      delaySeconds: booked ? turnDelaySeconds(booked.returnInMs) : gatherDelay,
    });
  } catch (error) {
    // Not sent: the record is taken back so the service's retry (or the reconciler) enqueues it.
    await ledger.forgetEnqueued(connectionId, [subject]).catch(() => undefined);
    logger.error('interview webhook: could not enqueue', { connectionId, reportId, code: errorName(error) });
    return jsonResponse(503, { error: 'try again later' });
  }
  logger.info('interview webhook: report enqueued', { connectionId, reportId });
  return jsonResponse(200, { status: 'accepted' });
}

/**
 * The report's read before its turn is booked here takes this long at most: the report is recorded as pending in the
 * queue ledger already, and a webhook cut by its timeout before it enqueues would leave it to the reconciler.
 */
const BOOK_AHEAD_READ_MS = 2_000;
/** After a look found a connection's schedule free soon, the next report books no turn ahead for this long. */
const QUIET_RECHECK_MS = 30_000;
const quietUntil = new Map<string, number>();

/**
 * The report's turn, booked here where its connection's ATS schedule is booked far ahead (a burst's backlog), so the
 * message is received once, for its turn (bookReportTurn). A schedule found free sooner is not looked at again for
 * QUIET_RECHECK_MS: no read of the report or of the schedule per report while a connection is quiet. A read or a
 * write that fails only leaves the message to book its turn when it runs.
 */
async function turnAhead(context: ConnectionContext, message: ReportCreatedMessage, gatherDelaySeconds: number) {
  const { connectionId } = message;
  if (!context.pacer || (quietUntil.get(connectionId) ?? 0) > Date.now()) return undefined;
  try {
    const booked = await bookReportTurn(message, context, {
      visibleInMs: gatherDelaySeconds * 1000,
      workerDeadline: writebackDeadline(),
      signal: AbortSignal.timeout(BOOK_AHEAD_READ_MS),
    });
    if (booked.message) return booked;
    if (booked.freeSoon) quietUntil.set(connectionId, Date.now() + QUIET_RECHECK_MS);
    return undefined;
  } catch (error) {
    logger.warn('interview webhook: no turn booked ahead', { connectionId, code: errorCode(error) });
    return undefined;
  }
}

/**
 * When a write-back worker invoked now would stop (its invocation's deadline, with the margin the worker keeps): the
 * time it has to wait for a turn. The stack names the worker's timeout (WRITEBACK_TIMEOUT_SECONDS).
 */
function writebackDeadline(): AbortSignal {
  const text = process.env[ENV.writebackTimeoutSeconds]?.trim();
  const seconds = text ? Number(text) : Number.NaN;
  const timeoutMs = (Number.isFinite(seconds) && seconds > 0 ? seconds : WORKER_TIMING.workerTimeoutSeconds) * 1000;
  return deadlineSignal({ getRemainingTimeInMillis: () => timeoutMs });
}

/** The function's gathering period (REPORT_GATHER_SECONDS, set by the stack); the stack's default when unset. */
function gatherSeconds(): number {
  const text = process.env[ENV.reportGatherSeconds]?.trim();
  const set = text ? Number(text) : Number.NaN;
  return Number.isFinite(set) && set >= 0 ? set : WORKER_TIMING.reportGatherSeconds;
}
