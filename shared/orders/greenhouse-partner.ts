import type { Connection } from '../config';
import { normaliseEmail } from '../pipeline/records';
import {
  authenticatePartner,
  PAUSED_ORDER,
  readPartnerBody,
  type PartnerAnswer,
  type PartnerDependencies,
  type PartnerRequest,
} from './partner-calls';
import {
  idsFromProfileUrl,
  isGreenhouseCompletionUrl,
  responseErrorBodySchema,
  sendTestBodySchema,
} from './greenhouse-partner.schemas';
import { orderIdFor } from './records';

export { issuePartnerKey, partnerKeyOf } from './partner-calls';

/**
 * Greenhouse's Assessment Partner API, served by the connector (assessment-partner facts, section 1): Greenhouse
 * calls `list_tests`, `send_test`, `test_status` and `response_error` with the key the connector issued the customer
 * as its Basic username. One URL set serves every customer: the key says which connection it is.
 */
export const PARTNER_CALLS = ['list_tests', 'send_test', 'test_status', 'response_error'] as const;
export type PartnerCall = (typeof PARTNER_CALLS)[number];

export interface GreenhousePartnerDependencies extends PartnerDependencies {
  /** Counts a malformed answer Greenhouse reported (`response_error`). */
  countResponseError(connectionId: string): void;
}

const unauthorized: PartnerAnswer = { status: 401, body: { errors: ['the API key is not valid'] } };
const badRequest = (message: string): PartnerAnswer => ({ status: 400, body: { errors: [message] } });

/** Authenticates before reading anything else, then answers the call. */
export async function handleGreenhousePartner(
  request: PartnerRequest<PartnerCall>,
  deps: GreenhousePartnerDependencies,
): Promise<PartnerAnswer> {
  const tenant = await authenticatePartner('greenhouse', request.headers.authorization, deps);
  if (!tenant) return unauthorized;
  const expected = request.call === 'send_test' || request.call === 'response_error' ? 'POST' : 'GET';
  if (request.method !== expected) return { status: 405, body: { errors: [`${request.call} takes ${expected}`] } };
  switch (request.call) {
    case 'list_tests':
      return { status: 200, body: tenant.tests.map((t) => ({ partner_test_id: t.id, partner_test_name: t.name })) };
    case 'send_test':
      // Greenhouse documents no refusal a recruiter sees: a 403 naming why, as for a key it may not use.
      if (tenant.disabled) return { status: 403, body: { errors: [PAUSED_ORDER] } };
      return sendTest(request, tenant, deps);
    case 'test_status':
      return testStatus(request, tenant.connection, deps);
    case 'response_error':
      return responseError(request, tenant.connection, deps);
  }
}

/**
 * Records the order once (its id is a digest of the test, the profile URL, the e-mail and the completion url, so the
 * same order sent again is the same record), answers its id at once, and queues the rest while the order waits for
 * its work.
 */
async function sendTest(
  request: PartnerRequest<PartnerCall>,
  tenant: { connection: Connection; tests: readonly { id: string }[] },
  deps: GreenhousePartnerDependencies,
): Promise<PartnerAnswer> {
  const read = readPartnerBody(request.rawBody, sendTestBodySchema, badRequest);
  if (!read.ok) return read.answer;
  const body = read.body;
  if (!isGreenhouseCompletionUrl(body.url, tenant.connection.atsBaseUrl))
    return badRequest('url: must be a Greenhouse URL (https://app.greenhouse.io/…)');
  if (!tenant.tests.some((t) => t.id === body.partner_test_id))
    return { status: 404, body: { errors: [`partner_test_id: no test ${body.partner_test_id}`] } };
  const { candidate } = body;
  const email = normaliseEmail(candidate.email);
  // The completion `url` is the take-home test's own: a recruiter's new "Send Test" carries a new one, so a new order
  // (and a new e-mail); the same url again is the same order.
  const naturalKey = [body.partner_test_id, candidate.greenhouse_profile_url ?? '', email, body.url];
  const now = deps.now();
  // An order placed before the url was part of its key is the same order when its url is the same.
  const earlierId = orderIdFor('greenhouse', tenant.connection.id, naturalKey.slice(0, 3));
  const earlier = await deps.orders.getOrder({ connectionId: tenant.connection.id, orderId: earlierId });
  if (earlier?.completionUrl === body.url) {
    if (earlier.state === 'received') await deps.enqueue(earlier);
    return { status: 200, body: { partner_interview_id: earlier.orderId } };
  }
  const name = [candidate.preferred_name ?? candidate.first_name, candidate.last_name].filter(Boolean).join(' ');
  const { record } = await deps.orders.recordOrder({
    connectionId: tenant.connection.id,
    orderId: orderIdFor('greenhouse', tenant.connection.id, naturalKey),
    source: 'greenhouse',
    testId: body.partner_test_id,
    state: 'received',
    candidateEmail: email,
    candidateName: name || undefined,
    ...idsFromProfileUrl(candidate.greenhouse_profile_url),
    completionUrl: body.url,
    steps: {},
    createdAt: now,
    updatedAt: now,
  });
  // Until its work has begun, every send of the order queues it (the worker makes each step once).
  if (record.state === 'received') await deps.enqueue(record);
  deps.logger.info('greenhouse order received', { connectionId: record.connectionId, orderId: record.orderId });
  return { status: 200, body: { partner_interview_id: record.orderId } };
}

/** The order as recorded, never the interview service: complete with its score and public profile link. */
async function testStatus(
  request: PartnerRequest<PartnerCall>,
  connection: Connection,
  deps: GreenhousePartnerDependencies,
): Promise<PartnerAnswer> {
  const orderId = request.query.get('partner_interview_id');
  const order = orderId ? await deps.orders.getOrder({ connectionId: connection.id, orderId }) : undefined;
  if (!order) return { status: 404, body: { errors: ['partner_interview_id: no such test'] } };
  if (order.state !== 'completed' || !order.profileUrl)
    return { status: 200, body: { partner_status: order.state, partner_profile_url: null, partner_score: null } };
  return {
    status: 200,
    body: {
      partner_status: 'complete',
      partner_profile_url: order.profileUrl,
      partner_score: order.score ?? null,
      // Flat, primitives only (Greenhouse shows it beside the score).
      metadata: { report_id: order.reportId ?? null, test: order.testId },
    },
  };
}

/**
 * A malformed answer Greenhouse reports: logged with its call, how many errors and the first few cut short (e-mails
 * masked: the text is Greenhouse's, about the connector's answer), counted, accepted.
 */
async function responseError(
  request: PartnerRequest<PartnerCall>,
  connection: Connection,
  deps: GreenhousePartnerDependencies,
): Promise<PartnerAnswer> {
  const read = readPartnerBody(request.rawBody, responseErrorBodySchema, badRequest);
  if (!read.ok) return read.answer;
  const body = read.body;
  deps.countResponseError(connection.id);
  deps.logger.warn('greenhouse reported a malformed answer', {
    connectionId: connection.id,
    apiCall: body.api_call,
    errorCount: body.errors.length,
    errors: body.errors.slice(0, 3).map((error) => error.slice(0, 300)),
    orderId: body.partner_interview_id ?? undefined,
  });
  return { status: 200, body: { status: 200 } };
}
