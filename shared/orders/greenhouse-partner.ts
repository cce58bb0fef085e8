import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import type { Connection, ConnectionSecrets } from '../config';
import { secretEquals } from '../http';
import type { PipelineLogger } from '../pipeline/ports';
import { normaliseEmail } from '../pipeline/records';
import { describeFirstIssue } from '../validation';
import { idsFromProfileUrl, responseErrorBodySchema, sendTestBodySchema } from './greenhouse-partner.schemas';
import { orderIdFor, type OrderRecord, type OrderStore } from './records';

/**
 * Greenhouse's Assessment Partner API, served by the connector (assessment-partner facts, section 1): Greenhouse
 * calls `list_tests`, `send_test`, `test_status` and `response_error` with the key the connector issued the customer
 * as its Basic username. One URL set serves every customer: the key says which connection it is.
 */
export const PARTNER_CALLS = ['list_tests', 'send_test', 'test_status', 'response_error'] as const;
export type PartnerCall = (typeof PARTNER_CALLS)[number];

export interface PartnerRequest {
  call: PartnerCall;
  method: string;
  /** Lower-cased header names. */
  headers: Readonly<Record<string, string | undefined>>;
  query: URLSearchParams;
  rawBody: Buffer;
}

export interface PartnerAnswer {
  status: number;
  body: unknown;
}

export interface GreenhousePartnerDependencies {
  /** The connection and its secrets, when one of that id exists. */
  connectionFor(connectionId: string): Promise<{ connection: Connection; secrets: ConnectionSecrets } | undefined>;
  orders: OrderStore;
  /** Queues the order's work (the interview, the invitation e-mail); the answer waits for nothing more. */
  enqueue(order: OrderRecord): Promise<void>;
  logger: PipelineLogger;
  /** Counts a malformed answer Greenhouse reported (`response_error`). */
  countResponseError(): void;
  now(): number;
}

/** A new key for a connection's Greenhouse partner calls: its id, a dot, 256 random bits (well under 171 chars). */
export function issuePartnerKey(connectionId: string): string {
  return `${connectionId}.${randomBytes(32).toString('base64url')}`;
}

/** The key of `Authorization: Basic base64(<key>:)`, the password empty; undefined for anything else. */
export function partnerKeyOf(authorization: string | undefined): string | undefined {
  const match = /^Basic ([A-Za-z0-9+/=]{1,400})$/.exec(authorization?.trim() ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  return decoded.endsWith(':') && decoded.indexOf(':') === decoded.length - 1 ? decoded.slice(0, -1) : undefined;
}

const unauthorized: PartnerAnswer = { status: 401, body: { errors: ['the API key is not valid'] } };

/** The connection a key belongs to, when the key is that connection's own (compared in constant time). */
async function authenticate(request: PartnerRequest, deps: GreenhousePartnerDependencies) {
  const key = partnerKeyOf(request.headers.authorization);
  const connectionId = key?.slice(0, key.indexOf('.'));
  if (!key || !connectionId) return undefined;
  const found = await deps.connectionFor(connectionId);
  const expected = found?.secrets.greenhousePartnerKey;
  if (!found?.connection.orders?.greenhouse || !expected || !secretEquals(expected, key)) return undefined;
  return { connection: found.connection, tests: found.connection.orders.greenhouse.tests };
}

/** Authenticates before reading anything else, then answers the call. */
export async function handleGreenhousePartner(
  request: PartnerRequest,
  deps: GreenhousePartnerDependencies,
): Promise<PartnerAnswer> {
  const tenant = await authenticate(request, deps);
  if (!tenant) return unauthorized;
  const expected = request.call === 'send_test' || request.call === 'response_error' ? 'POST' : 'GET';
  if (request.method !== expected) return { status: 405, body: { errors: [`${request.call} takes ${expected}`] } };
  switch (request.call) {
    case 'list_tests':
      return { status: 200, body: tenant.tests.map((t) => ({ partner_test_id: t.id, partner_test_name: t.name })) };
    case 'send_test':
      return sendTest(request, tenant, deps);
    case 'test_status':
      return testStatus(request, tenant.connection, deps);
    case 'response_error':
      return responseError(request, tenant.connection, deps);
  }
}

/** The JSON body as `schema`, or the 400 that names the first field at fault. */
function readBody<S extends v.GenericSchema>(rawBody: Buffer, schema: S): v.InferOutput<S> | PartnerAnswer {
  let document: unknown;
  try {
    document = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { status: 400, body: { errors: ['body: expected a JSON document'] } };
  }
  const parsed = v.safeParse(schema, document);
  if (parsed.success) return parsed.output;
  return { status: 400, body: { errors: [describeFirstIssue(parsed.issues, { fallbackField: 'body' }).message] } };
}

const isAnswer = (value: unknown): value is PartnerAnswer =>
  typeof value === 'object' && value !== null && 'status' in value && 'body' in value;

/**
 * Records the order once (its id is a digest of the test, the profile URL and the e-mail, so the same order sent
 * again is the same record), answers its id at once, and queues the rest while the order waits for its work.
 */
async function sendTest(
  request: PartnerRequest,
  tenant: { connection: Connection; tests: readonly { id: string }[] },
  deps: GreenhousePartnerDependencies,
): Promise<PartnerAnswer> {
  const body = readBody(request.rawBody, sendTestBodySchema);
  if (isAnswer(body)) return body;
  if (!tenant.tests.some((t) => t.id === body.partner_test_id))
    return { status: 404, body: { errors: [`partner_test_id: no test ${body.partner_test_id}`] } };
  const { candidate } = body;
  const email = normaliseEmail(candidate.email);
  const naturalKey = [body.partner_test_id, candidate.greenhouse_profile_url ?? '', email];
  const now = deps.now();
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
  request: PartnerRequest,
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

/** A malformed answer Greenhouse reports: logged with its call and errors (e-mails masked), counted, accepted. */
async function responseError(
  request: PartnerRequest,
  connection: Connection,
  deps: GreenhousePartnerDependencies,
): Promise<PartnerAnswer> {
  const body = readBody(request.rawBody, responseErrorBodySchema);
  if (isAnswer(body)) return body;
  deps.countResponseError();
  deps.logger.warn('greenhouse reported a malformed answer', {
    connectionId: connection.id,
    apiCall: body.api_call,
    errors: body.errors,
    orderId: body.partner_interview_id ?? undefined,
  });
  return { status: 200, body: { status: 200 } };
}
