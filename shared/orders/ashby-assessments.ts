import type { Connection } from '../config';
import { normaliseEmail } from '../pipeline/records';
import { cancelBodySchema, startBodySchema } from './ashby-assessments.schemas';
import {
  authenticatePartner,
  PAUSED_ORDER,
  readPartnerBody,
  type OrderTests,
  type PartnerAnswer,
  type PartnerDependencies,
  type PartnerRequest,
} from './partner-calls';
import { ORDER_OPEN_STATES, orderIdFor, orderUuidFor, type OrderRecord } from './records';

/**
 * Ashby Assessments, served by the connector (assessment-partner facts, section 2): Ashby POSTs `assessment.list`,
 * `assessment.start` and `assessment.cancel` to the base URL the partner gave it, with the key the connector issued
 * the customer as the Basic username. Results go back through Ashby's `assessment.update` (shared/orders/announce.ts).
 */
export const ASHBY_CALLS = ['assessment.list', 'assessment.start', 'assessment.cancel'] as const;
export type AshbyCall = (typeof ASHBY_CALLS)[number];

/**
 * Ashby's error envelope, as its own API answers it: `errors` and, beside them, `errorInfo` with a stable `code`
 * (Ashby's assessment OpenAPI; the example in assessment-partner facts).
 */
const refusal = (status: number, code: string, message: string): PartnerAnswer => ({
  status,
  body: { success: false, errors: [message], errorInfo: { code, message } },
});
const badRequest = (message: string) => refusal(400, 'invalid_input', message);
/** Ashby shows a 422's `message` to the recruiter. */
const toRecruiter = (message: string): PartnerAnswer => ({ status: 422, body: { message } });
/** A start again for the same application and type, after orders of it ended: a new order, up to this many. */
const MAX_REORDERS = 20;

export async function handleAshbyPartner(request: PartnerRequest<AshbyCall>, deps: PartnerDependencies) {
  const tenant = await authenticatePartner('ashby', request.headers.authorization, deps);
  if (!tenant) return refusal(401, 'unauthorized', 'the API key is not valid');
  if (request.method !== 'POST') return refusal(405, 'method_not_allowed', `${request.call} takes POST`);
  switch (request.call) {
    case 'assessment.list':
      return {
        status: 200,
        body: {
          success: true,
          results: tenant.tests.map((t) => ({ assessment_type_id: t.id, name: t.name, description: t.name })),
        },
      };
    case 'assessment.start':
      // Ashby shows a 422's message to its user.
      if (tenant.disabled) return toRecruiter(PAUSED_ORDER);
      return start(request, tenant, deps);
    case 'assessment.cancel':
      return cancel(request, tenant.connection, deps);
  }
}

/**
 * Records the order (its id a UUID derived from the application, the assessment type and how many orders of them
 * ended before: Ashby types `assessment_id` `format: uuid`), answers its id at once and queues the rest. A start
 * repeated while the order is open answers the same id (Ashby's retry after an answer it lost still learns it); only
 * an order still waiting for its work is queued again.
 */
async function start(
  request: PartnerRequest<AshbyCall>,
  tenant: { connection: Connection; tests: OrderTests },
  deps: PartnerDependencies,
): Promise<PartnerAnswer> {
  const read = readPartnerBody(request.rawBody, startBodySchema, badRequest);
  if (!read.ok) return read.answer;
  const { assessment_type_id: testId, candidate, application } = read.body;
  const test = tenant.tests.find((t) => t.id === testId);
  if (!test) return toRecruiter(`This AI interview (${testId}) is no longer offered: choose another assessment.`);
  const now = deps.now();
  const name = [candidate.first_name, candidate.last_name].filter(Boolean).join(' ');
  for (let round = 0; round < MAX_REORDERS; round++) {
    const { connection } = tenant;
    const naturalKey = [application.ashby_id, testId, ...(round ? [String(round)] : [])];
    // An order placed before ids were UUIDs keeps its id while it is open: a repeat never orders it twice.
    const earlier = await deps.orders.getOrder({
      connectionId: connection.id,
      orderId: orderIdFor('ashby', connection.id, naturalKey),
    });
    if (earlier && (ORDER_OPEN_STATES as readonly string[]).includes(earlier.state)) {
      if (earlier.state === 'received') await deps.enqueue(earlier);
      return { status: 200, body: { success: true, results: { assessment_id: earlier.orderId } } };
    }
    const order: OrderRecord = {
      connectionId: connection.id,
      orderId: orderUuidFor('ashby', connection.id, naturalKey),
      source: 'ashby',
      testId,
      state: 'received',
      candidateEmail: normaliseEmail(candidate.email),
      candidateName: name || undefined,
      atsCandidateId: candidate.ashby_id,
      atsApplicationId: application.ashby_id,
      steps: {},
      createdAt: now,
      updatedAt: now,
    };
    const { created, record } = await deps.orders.recordOrder(order);
    const open = (ORDER_OPEN_STATES as readonly string[]).includes(record.state);
    if (!created && !open) continue;
    // A start again while the order is open (Ashby's retry of an answer it lost, a second click) gets the same id;
    // the order is queued again only while it waits for its work (the worker makes each step once).
    if (created || record.state === 'received') await deps.enqueue(record);
    deps.logger.info('ashby order received', { connectionId: connection.id, orderId: record.orderId });
    return { status: 200, body: { success: true, results: { assessment_id: record.orderId } } };
  }
  return toRecruiter('This candidate has been assessed too many times for this job.');
}

/** The recruiter cancelled: the order ends (its invitation, if not yet sent, is not sent). */
async function cancel(
  request: PartnerRequest<AshbyCall>,
  connection: Connection,
  deps: PartnerDependencies,
): Promise<PartnerAnswer> {
  const read = readPartnerBody(request.rawBody, cancelBodySchema, badRequest);
  if (!read.ok) return read.answer;
  const key = { connectionId: connection.id, orderId: read.body.assessment_id };
  const { moved, record } = await deps.orders.moveOrder(key, 'cancel', { now: deps.now() });
  if (!record) return refusal(404, 'not_found', 'assessment_id: no such assessment');
  if (moved) deps.logger.info('ashby order cancelled', key);
  return { status: 200, body: { success: true, results: { assessment_id: record.orderId } } };
}
