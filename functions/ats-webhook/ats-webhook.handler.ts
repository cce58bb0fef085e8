import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createLogger } from '../../shared/observability/logger';
import { currentCorrelationId } from '../../shared/observability/log-context';
import { mayMatchTriggers } from '../../shared/pipeline/trigger-matching';
import { stageNamesReader } from '../../shared/pipeline/stage-names';
import {
  QueuePublisher,
  type ApplicationChangedMessage,
  type CandidateDeletedMessage,
  type StageEnteredMessage,
  type ChangesHintedMessage,
} from '../../shared/queue';
import { HINT_GRACE_MS, HINT_SUBJECT } from '../../shared/pipeline/changes-hinted.use-case';
import { disabledAnswer, webhookConnection } from '../_runtime/webhook-connection';
import { boundStageEnteredEvent } from '../../shared/ats/bounds';
import { deliveryIdOf } from '../../shared/validation';
import type { AtsAdapter, StageEnteredEvent } from '../../shared/ats/port';
import { ENV, requireEnv } from '../_runtime/env';
import { httpHandler, jsonResponse, lowerCaseHeaders, MAX_WEBHOOK_BYTES, rawBody } from '../_runtime/http';
import { mappingStore, queueLedger } from '../_runtime/store';
import { errorCode } from '../../shared/pipeline/errors';
import { type DeliveryReplay, stageSubject, type WebhookContext } from '../../shared/pipeline/ports';
import { errorName } from '../../shared/errors';
import { withDeadline } from '../../shared/aws/deadline';
import { deadlineSignal } from '../_runtime/deadline';
import { activity } from '../_runtime/activity';

const publisher = new QueuePublisher();
const MAX_DELETED_APPLICATION_IDS = 100;
const store = mappingStore();
const ledger = queueLedger();
const sharedStageNames = stageNamesReader(store);
const logger = createLogger('ats-webhook');

/**
 * `POST /webhooks/ats/{connectionId}`: authenticate over the raw bytes, parse, match a trigger, enqueue.
 * Answers exactly 200 when accepted (Greenhouse retries anything else) and 5xx when the queue is down, so the
 * ATS delivers again (Ashby does not retry 4xx).
 */
export const handler = httpHandler(async (event, context) => {
  // The send to SQS gives up shortly before the function's timeout (the workers' margin), so a slow queue still
  // leaves time to take the replay key back and answer 503, and the ATS's next delivery is accepted.
  const signal = context ? deadlineSignal(context) : undefined;
  try {
    return await receive(event, signal);
  } finally {
    await activity.flush(logger, signal);
  }
});

async function receive(
  event: APIGatewayProxyEventV2,
  sendWithin?: AbortSignal,
): Promise<APIGatewayProxyStructuredResultV2> {
  const connectionId = event.pathParameters?.connectionId ?? '';
  const body = rawBody(event);
  if (body.length > MAX_WEBHOOK_BYTES) return jsonResponse(413, { error: `body exceeds ${MAX_WEBHOOK_BYTES} bytes` });
  const loaded = await webhookConnection(connectionId, logger);
  if (!loaded.ok) return loaded.response;
  const { context } = loaded;
  const request = { headers: lowerCaseHeaders(event), rawBody: body };
  const verification = context.ats.verifyWebhook(request, Date.now());
  if (!verification.valid) {
    logger.warn('ats webhook refused', { connectionId, reason: verification.reason });
    return jsonResponse(401, { error: verification.reason });
  }
  activity.webhook(connectionId);
  const disabled = await disabledAnswer(connectionId, logger);
  if (disabled) return disabled;
  const parsed = context.ats.parseWebhook(request);
  // A stage change no trigger can match is answered before anything is recorded: where the delivery names its stage
  // by id alone (Lever), by the names the invite worker shared.
  if (parsed.kind === 'stage-entered' && !mayMatchTriggers(context.connection, await named(context, parsed.event)))
    return jsonResponse(200, { status: 'ignored', reason: 'no-matching-trigger' });
  const replay = verification.replayKey
    ? { key: verification.replayKey, ttlSeconds: verification.replayTtlSeconds ?? 3600 }
    : undefined;
  if (replay && !(await store.rememberReplayKey(connectionId, replay.key, Date.now(), replay.ttlSeconds))) {
    logger.warn('ats webhook refused: delivery seen before', { connectionId });
    return jsonResponse(401, { error: 'this delivery was seen before' });
  }
  if (parsed.kind === 'invalid') return jsonResponse(400, { error: parsed.message });
  if (parsed.kind === 'ping') return jsonResponse(200, { status: 'pong' });
  if (parsed.kind === 'ignored') return jsonResponse(200, { status: 'ignored', reason: parsed.reason });
  if (parsed.kind === 'changes-hinted') return hinted(connectionId, parsed.event.deliveryId, sendWithin);
  if (parsed.kind === 'integration-changed') return integrationChanged(connectionId, parsed.event.state);
  // A stage change's subject in the queue ledger (the sweep does not enqueue it again while its message is pending).
  const subject = parsed.kind === 'stage-entered' ? stageSubject(parsed.event.atsApplicationId) : undefined;
  return enqueue(connectionId, messageOf(connectionId, parsed, body), { subject, replay, sendWithin });
}

/**
 * The connection's link to its ATS changed state (Kombo's integration): an ERROR for the operator where it no longer
 * works (the `…LoggedErrors` alarm), what to do named in it; back to `ACTIVE`, an INFO line. Nothing is enqueued: the
 * work it held back goes on by itself once the link works again.
 */
function integrationChanged(connectionId: string, state: string): APIGatewayProxyStructuredResultV2 {
  if (state === 'ACTIVE')
    logger.info('ats webhook: the connection works again through its integration', { connectionId });
  else
    logger.error(
      state === 'DELETED'
        ? 'ats webhook: the integration was deleted; connect the customer again (a connect link) or disable it'
        : 'ats webhook: the integration no longer works; ask the customer to relink it in Kombo',
      { connectionId, state },
    );
  return jsonResponse(200, { status: 'noted', state });
}

type Accepted = StageEnteredMessage | CandidateDeletedMessage | ApplicationChangedMessage;

/**
 * A hint that applications changed (Kombo's `data-changed`): one read of the changes queued, unless one is waiting
 * already (the queue ledger); a hint lost or refused only delays, as the sweep makes the same read on its schedule.
 */
async function hinted(
  connectionId: string,
  deliveryId: string,
  sendWithin: AbortSignal | undefined,
): Promise<APIGatewayProxyStructuredResultV2> {
  const now = Date.now();
  if (!(await ledger.claimEnqueue(connectionId, HINT_SUBJECT, now, HINT_GRACE_MS)))
    return jsonResponse(200, { status: 'accepted', reason: 'a read of the changes is already queued' });
  const message: ChangesHintedMessage = {
    v: 1,
    enqueueId: randomUUID(),
    correlationId: currentCorrelationId(),
    connectionId,
    receivedAt: now,
    kind: 'changes-hinted',
    source: 'webhook',
    deliveryId: deliveryIdOf(deliveryId, Buffer.from(deliveryId)),
  };
  try {
    const send = () => publisher.publish(requireEnv(ENV.stageQueueUrl), message);
    await (sendWithin ? withDeadline(sendWithin, send) : send());
  } catch (error) {
    logger.error('ats webhook: could not enqueue', { connectionId, kind: message.kind, code: errorName(error) });
    await ledger.forgetEnqueued(connectionId, [HINT_SUBJECT]).catch(() => undefined);
    return jsonResponse(503, { error: 'try again later' });
  }
  logger.info('ats webhook: enqueued', { connectionId, kind: message.kind });
  return jsonResponse(200, { status: 'accepted' });
}

/** The delivery's stage named from the shared names, where its adapter names stages by id alone. */
function named(context: WebhookContext, event: StageEnteredEvent): Promise<StageEnteredEvent> | StageEnteredEvent {
  return context.ats.knownStageNames ? sharedStageNames(context.connection.id, event) : event;
}

type Delivery = Extract<
  ReturnType<AtsAdapter['parseWebhook']>,
  { kind: 'stage-entered' | 'candidate-deleted' | 'application-changed' }
>;

/** The queue message of an accepted delivery. */
function messageOf(connectionId: string, parsed: Delivery, body: Buffer): Accepted {
  const envelope = { v: 1, enqueueId: randomUUID(), correlationId: currentCorrelationId(), connectionId } as const;
  // The worker notes these on the application's timeline (functions/_runtime/activity.ts, `deliveryEntry`).
  const delivered = { ...envelope, origin: 'webhook', receivedAt: Date.now() } as const;
  if (parsed.kind === 'stage-entered')
    return { ...delivered, kind: 'stage-entered', event: boundStageEnteredEvent(parsed.event, body) };
  if (parsed.kind === 'application-changed') {
    const { atsApplicationId, change } = parsed.event;
    const deliveryId = deliveryIdOf(parsed.event.deliveryId, body);
    return { ...delivered, kind: 'application-changed', deliveryId, atsApplicationId, change };
  }
  return {
    ...envelope,
    kind: 'candidate-deleted',
    receivedAt: Date.now(),
    atsCandidateId: parsed.event.atsCandidateId,
    // The purge finds every application by the candidate's index; the ids named here only add to it. Capped,
    // so a message stays far below SQS's 256 KiB whatever list the body carried.
    atsApplicationIds: [...new Set(parsed.event.atsApplicationIds)].slice(0, MAX_DELETED_APPLICATION_IDS),
  };
}

/**
 * On the stage queue, then recorded in the queue ledger; 503 when SQS did not take it (the ATS delivers again).
 * The ledger says a stage change's message is pending only once it was sent: a delivery cut short before (the
 * function's timeout, a lost answer) leaves no record, so the next sweep finds the application. Its replay key,
 * claimed before, is taken back when the send fails, so the ATS's next delivery is accepted.
 */
async function enqueue(
  connectionId: string,
  message: Accepted,
  where: { subject: string | undefined; replay: DeliveryReplay | undefined; sendWithin: AbortSignal | undefined },
): Promise<APIGatewayProxyStructuredResultV2> {
  const { subject, replay, sendWithin } = where;
  try {
    const send = () => publisher.publish(requireEnv(ENV.stageQueueUrl), message);
    await (sendWithin ? withDeadline(sendWithin, send) : send());
  } catch (error) {
    logger.error('ats webhook: could not enqueue', { connectionId, kind: message.kind, code: errorName(error) });
    if (replay) await store.forgetReplayKey(connectionId, replay.key).catch(() => undefined);
    // 5xx: Ashby does not retry 4xx, and every ATS retries a 5xx.
    return jsonResponse(503, { error: 'try again later' });
  }
  if (subject) {
    await ledger
      .recordEnqueued(connectionId, [subject], message.receivedAt)
      .catch((error: unknown) =>
        logger.warn('ats webhook: the queue ledger could not be written', { connectionId, code: errorCode(error) }),
      );
  }
  logger.info('ats webhook: enqueued', { connectionId, kind: message.kind });
  return jsonResponse(200, { status: 'accepted' });
}
