import type { AssessmentUpdate } from '../ats/port';
import type { ConnectionContext } from '../pipeline/ports';
import { isPermanent, OutwardCallError } from '../errors';
import { sendHttpRequest } from '../http';
import type { KomboResult } from './kombo-client';
import { komboApiFor } from './kombo-orders';
import type { OrderRecord } from './records';
import { isGreenhouseCompletionUrl } from './greenhouse-partner.schemas';

/** Tells the ATS how an order ended, where the ATS shows assessments. Sending the same end again changes nothing. */
export interface OrderAnnouncer {
  /** Answers what the ATS warned of, if anything (Kombo's `warnings`), to be logged. */
  announce(order: OrderRecord, signal: AbortSignal | undefined): Promise<{ warnings: string[] } | undefined>;
}

const TIMEOUT_MS = 10_000;

/**
 * Greenhouse: `PATCH <url from send_test>`, no body, with the credential Greenhouse issued for it (never the inbound
 * key: Greenhouse answers that with 403); Greenhouse then calls `test_status`, which answers from the order.
 */
export function greenhouseAnnouncer(context: ConnectionContext): OrderAnnouncer {
  return {
    async announce(order, signal) {
      const key = context.secrets.greenhouseCompletionKey;
      if (!key)
        throw new OutwardCallError(
          'not-configured',
          `connection ${context.connection.id}: greenhouseCompletionKey is not set, so Greenhouse cannot be told`,
          { retryable: true, definitelyNotSent: true },
        );
      // The credential goes to Greenhouse alone: an order stored with another URL is refused, and a redirect is
      // followed once, only to Greenhouse (below).
      if (!order.completionUrl || !isGreenhouseCompletionUrl(order.completionUrl, context.connection.atsBaseUrl))
        throw new OutwardCallError('no-completion-url', `order ${order.orderId} has no Greenhouse completion URL`, {
          retryable: false,
          definitelyNotSent: true,
        });
      const patch = (url: string) =>
        sendHttpRequest({
          url,
          method: 'PATCH',
          headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
          timeoutMs: TIMEOUT_MS,
          redirect: 'manual',
          signal,
        });
      let response = await patch(order.completionUrl);
      // One redirect is followed, and only to Greenhouse (another of its hosts, a region).
      const moved = URL.parse(response.headers.get('location') ?? '', order.completionUrl)?.href;
      const redirected = response.status >= 300 && response.status < 400 && moved !== undefined;
      if (redirected && isGreenhouseCompletionUrl(moved, context.connection.atsBaseUrl)) response = await patch(moved);
      if (response.status >= 200 && response.status < 300) return undefined;
      throw announceRefused('greenhouse', response.status, response.headers);
    },
  };
}

/**
 * A refusal: a wrong credential (401, 403) is retried, as an operator puts the right one in the secret; a 429 or
 * a 5xx is retried after the wait asked for; any other 4xx is for good.
 */
export function announceRefused(source: string, status: number, headers: Headers): OutwardCallError {
  const retryAfter = Number(headers.get('retry-after'));
  const credential = status === 401 || status === 403;
  const message = credential
    ? `${source} refused the completion credential (${status}): check the connection's secret`
    : `${source} answered ${status} to the completion`;
  return new OutwardCallError(credential ? 'announce-unauthorized' : 'announce-refused', message, {
    status,
    retryable: credential || status === 429 || status >= 500,
    rateLimited: status === 429,
    retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
    definitelyNotSent: status < 500,
  });
}

/** One of Ashby's assessment items: `identifier` stable per partner, `value` a primitive. */
const item = (identifier: string, label: string, type: string, value: string | number | boolean) => ({
  identifier,
  label,
  type,
  value,
});

/**
 * Ashby: `assessment.update` with the customer's Ashby key. Completed: the result (the AI match score), the report
 * as the profile link, the status; expired or failed: `cancelled_reason`, which marks the assessment cancelled.
 */
export function ashbyAnnouncer(context: ConnectionContext): OrderAnnouncer {
  return {
    async announce(order, signal) {
      const update = context.ats.updateAssessment;
      if (!update)
        throw new OutwardCallError('not-supported', `${context.connection.ats} takes no assessment update`, {
          retryable: false,
          definitelyNotSent: true,
        });
      await update(ashbyUpdateOf(order, Date.now()), signal);
      return undefined;
    },
  };
}

/** The `assessment.update` body telling Ashby how the order ended. */
export function ashbyUpdateOf(order: OrderRecord, now: number): AssessmentUpdate {
  const base = { assessment_id: order.orderId, timestamp: now };
  if (order.state !== 'completed')
    return {
      ...base,
      cancelled_reason: item(
        'cancelled_reason',
        'Cancelled',
        'string',
        order.state === 'expired'
          ? 'The candidate did not take the AI interview in time'
          : 'The invitation could not be sent',
      ),
    };
  return {
    ...base,
    assessment_status: item('status', 'Status', 'string', 'Completed'),
    assessment_result:
      order.score === undefined
        ? item('ai_match_score', 'AI match score', 'string', 'not scored')
        : item('ai_match_score', 'AI match score', 'numeric_score', order.score),
    assessment_profile_url: item('report', 'AI interview report', 'url', order.profileUrl ?? ''),
    metadata: [item('test', 'Test', 'string', order.testId)],
  };
}

/**
 * Kombo: one final `PUT /assessment/orders/{id}/result`. Kombo takes a result only while the order is OPEN, so the
 * order is looked up first: a result PUT before a crash, or whose answer was lost, is found there and not PUT again;
 * an order the ATS closed meanwhile is a refusal for good, recorded.
 */
export function komboAnnouncer(context: ConnectionContext): OrderAnnouncer {
  return {
    async announce(order, signal) {
      const api = komboApiFor(context.connection, context.secrets);
      if (!api)
        throw new OutwardCallError(
          'not-configured',
          `connection ${context.connection.id}: komboApiKey is not set, so Kombo cannot be told`,
          { retryable: true, definitelyNotSent: true },
        );
      const { atsOrderId, integrationId } = order;
      if (!atsOrderId || !integrationId)
        throw new OutwardCallError('no-kombo-order', `order ${order.orderId} has no Kombo order id`, {
          retryable: false,
          definitelyNotSent: true,
        });
      const result = komboResultOf(order, new URL(context.connection.interviewService.baseUrl).origin);
      const statusInKombo = async () =>
        (await api.listOrders(integrationId, { ids: [atsOrderId] }, signal)).statuses.find((o) => o.id === atsOrderId)
          ?.status;
      const before = await statusInKombo();
      if (before === result.status) return undefined;
      // Completed after its expiry was told: Kombo keeps an order's end, so the cancellation stands (said, not failed).
      if (before === 'CANCELLED' && order.announced === 'expired')
        return { warnings: ['Kombo keeps the order CANCELLED (its expiry was told): the late result is not shown'] };
      if (before !== undefined && before !== 'OPEN')
        throw new OutwardCallError('kombo-order-closed', `the order is ${before} in Kombo: no result is taken`, {
          retryable: false,
          definitelyNotSent: true,
        });
      try {
        return { warnings: await api.putResult(integrationId, atsOrderId, result, signal) };
      } catch (error) {
        // Refused because it closed just now: by this very result (another worker's PUT), or by the ATS.
        if (!signal?.aborted && isPermanent(error) && (await statusInKombo()) === result.status) return undefined;
        throw error;
      }
    },
  };
}

/** The result Kombo is PUT: completed with the score, the report and what the interview found; else cancelled. */
export function komboResultOf(order: OrderRecord, fallbackUrl: string): KomboResult {
  const completedAt = new Date(order.endedAt ?? order.updatedAt).toISOString();
  const text = (label: string, value: string) => ({ type: 'TEXT' as const, label, value });
  if (order.state !== 'completed')
    return {
      status: 'CANCELLED',
      // Required even so: the interview the candidate was sent, or the service's site when none was.
      result_url: order.inviteUrl ?? fallbackUrl,
      completed_at: completedAt,
      attributes: [
        text(
          'Reason',
          order.state === 'expired'
            ? 'The candidate did not take the AI interview in time'
            : 'The invitation could not be sent',
        ),
      ],
    };
  const attributes = [text('AI interview report', order.profileUrl ?? '')];
  if (order.proctoringViolations !== undefined)
    attributes.push(
      text('Proctoring', order.proctoringViolations ? `${order.proctoringViolations} violation(s)` : 'no violations'),
    );
  if (order.recordingUrl) attributes.push(text('Recording', order.recordingUrl));
  return {
    status: 'COMPLETED',
    result_url: order.profileUrl ?? fallbackUrl,
    completed_at: completedAt,
    // The AI match score is out of 100; one outside it is held to it rather than refused.
    ...(order.score === undefined ? {} : { score: Math.min(100, Math.max(0, order.score)), max_score: 100 }),
    attributes,
  };
}

/** The announcer of the order's source. */
export function orderAnnouncer(context: ConnectionContext, order: OrderRecord): OrderAnnouncer {
  switch (order.source) {
    case 'greenhouse':
      return greenhouseAnnouncer(context);
    case 'ashby':
      return ashbyAnnouncer(context);
    case 'kombo':
      return komboAnnouncer(context);
  }
}
