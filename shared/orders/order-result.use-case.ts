import { randomUUID } from 'node:crypto';
import type { InterviewReport } from '../interview-service';
import { WORKER_TIMING } from '../pipeline/constants';
import { ClaimHeldElsewhereError, errorCode, isPermanent } from '../pipeline/errors';
import { afterSideEffect } from '../pipeline/fault-injection';
import type { ConnectionContext, PipelineLogger, RunOptions } from '../pipeline/ports';
import { normaliseEmail } from '../pipeline/records';
import { serviceLink } from '../validation';
import type { OrderAnnouncer } from './announce';
import type { OrderKey, OrderRecord, OrderStore } from './records';

export interface OrderResultDependencies {
  orders: OrderStore;
  /** How the order's ATS is told of its end (shared/orders/announce.ts). */
  announcerFor(context: ConnectionContext, order: OrderRecord): OrderAnnouncer;
  logger: PipelineLogger;
  now?: () => number;
  newOwner?: () => string;
}

/** The order's invitation is not yet recorded done (its message is still under way): the report comes back later. */
export class OrderNotInvitedError extends Error {
  public readonly code = 'order-not-invited';
  public readonly retryable = true;

  public constructor(orderId: string) {
    super(`order ${orderId}: its invitation is still under way`);
    this.name = 'OrderNotInvitedError';
  }
}

export type OrderReportOutcome =
  | 'order-completed'
  | 'order-already-completed'
  | 'order-other-report'
  | 'order-ended'
  | 'order-no-public-link';

/**
 * A report made for an order: the order (found by the test's interview and the candidate's e-mail) completes with
 * its score and public link, then its ATS is told. Undefined when no order of this connection has the report's
 * interview and e-mail. A report that comes after the expiry still completes the order.
 */
export async function completeOrderWithReport(
  context: ConnectionContext,
  report: InterviewReport,
  deps: OrderResultDependencies,
  run: RunOptions = {},
): Promise<OrderReportOutcome | undefined> {
  if (!report.candidate_email_id) return undefined;
  const order = await deps.orders.findOrderByInterview(report.interview_id, normaliseEmail(report.candidate_email_id));
  if (!order || order.connectionId !== context.connection.id) return undefined;
  const log = { connectionId: order.connectionId, orderId: order.orderId, reportId: report.report_id };
  // Greenhouse shows nothing without a public profile link: never complete without one (https, or the service's own).
  const serviceUrl = context.connection.interviewService.baseUrl;
  const profileUrl = serviceLink(report.report_url, serviceUrl);
  if (!profileUrl) return 'order-no-public-link';
  const now = (deps.now ?? Date.now)();
  const score = typeof report.ai_match_score === 'number' ? report.ai_match_score : undefined;
  const data = {
    reportId: report.report_id,
    profileUrl,
    score,
    recordingUrl: serviceLink(report.interview_recording_player_url ?? report.interview_recording_url, serviceUrl),
    proctoringViolations: report.proctoring_violations?.length,
    endedAt: now,
  };
  const { moved, record } = await deps.orders.moveOrder(order, 'complete', { now, data });
  if (!moved) {
    if (!record || record.state === 'cancelled' || record.state === 'failed') {
      deps.logger.warn('order: a report came for an order that ended without it', { ...log, state: record?.state });
      return 'order-ended';
    }
    if (record.state !== 'completed') throw new OrderNotInvitedError(order.orderId);
    if (record.reportId !== report.report_id) {
      deps.logger.warn('order: completed already with another report', log);
      return 'order-other-report';
    }
  }
  // Another worker telling it: this message comes back once its lease ran out, and tells it if that one stopped.
  if ((await announceOrder(order, context, deps, run)) === 'held-elsewhere')
    throw new ClaimHeldElsewhereError(`order ${order.orderId}`, run.leaseMs);
  deps.logger.info('order completed', log);
  return moved ? 'order-completed' : 'order-already-completed';
}

export type AnnounceOutcome = 'announced' | 'refused' | 'held-elsewhere' | 'nothing-to-tell' | 'unknown-order';

/**
 * Tells the ATS how the order ended, under a claim so that one worker does: the end recorded as told (conditional
 * on the order still being in it) lets the claim go. A crash between the call and its record tells the same end
 * again, which the ATS takes as it took the first (a PATCH ping; an update carrying the whole result).
 */
export async function announceOrder(
  key: OrderKey,
  context: ConnectionContext,
  deps: OrderResultDependencies,
  run: RunOptions = {},
): Promise<AnnounceOutcome> {
  const owner = (deps.newOwner ?? randomUUID)();
  const now = (deps.now ?? Date.now)();
  const lease = { owner, now, durationMs: run.leaseMs ?? WORKER_TIMING.applicationLeaseMs };
  const claim = await deps.orders.claimOrder(key, lease, 'announce');
  if (claim.kind === 'missing') return 'unknown-order';
  if (claim.kind !== 'claimed') return claim.kind === 'done' ? 'nothing-to-tell' : 'held-elsewhere';
  const order = claim.record;
  let warnings: string[] = [];
  try {
    warnings = (await deps.announcerFor(context, order).announce(order, run.signal))?.warnings ?? [];
  } catch (error) {
    // The worker's deadline aborting the call is no verdict: the message comes back.
    if (isPermanent(error) && errorCode(error) !== 'aborted') {
      // A refusal for good (the ATS no longer has the test): recorded with its reason, never retried forever.
      const failureReason = `announce-refused: ${errorCode(error)}`;
      await deps.orders.recordOrderStep(key, {
        owner,
        data: { announced: order.state, failureReason },
        release: true,
        now,
      });
      deps.logger.error('order: the ATS refused to be told, for good', { ...key, code: errorCode(error) });
      return 'refused';
    }
    // Handed back at once: the retry (or the reconciler) tells it, not after the lease runs out.
    await deps.orders.recordOrderStep(key, { owner, release: true, now }).catch(() => undefined);
    throw error;
  }
  afterSideEffect('order-announced', `${key.connectionId}#${key.orderId}#${order.state}`);
  await deps.orders.recordOrderStep(key, { owner, data: { announced: order.state }, release: true, now });
  const log = { connectionId: key.connectionId, orderId: key.orderId, state: order.state };
  // Kombo's warnings (shown in its dashboard too): the result was taken; what it could not show is logged.
  if (warnings.length) deps.logger.warn('order: the ATS took the result with warnings', { ...log, warnings });
  deps.logger.info('order: the ATS was told', log);
  return 'announced';
}
