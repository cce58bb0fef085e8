import * as v from 'valibot';
import type { Connection, ConnectionSecrets } from '../config';
import type { RetryHooks, RetryPolicy } from '../http';
import type { CallGate } from './call-gate';
import type { WebhookParseResult } from './port';
import { describeFirstIssue } from '../validation';

/** What every adapter is built from; tests pass fetch, sleep and retry settings, production passes none. */
export interface AtsAdapterOptions {
  connection: Connection;
  secrets: ConnectionSecrets;
  fetch?: typeof fetch;
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  sleep?: RetryHooks['sleep'];
  /** The connection's pacing, asked before each call (shared/pacing/); none in the doctor and most tests. */
  gate?: CallGate | undefined;
}

/** `field.path: message` of the first issue, for a 400 that names the field. */
const firstIssue = (issues: readonly v.BaseIssue<unknown>[], prefix = ''): string =>
  describeFirstIssue(issues, { prefix, fallbackField: 'body' }).message;

export type BodyReading<T> = { ok: true; value: T } | { ok: false; result: WebhookParseResult };

/** The raw body as JSON of `schema`; otherwise the `invalid` result the webhook answers with 400. */
export function readWebhookBody<S extends v.GenericSchema>(rawBody: Buffer, schema: S): BodyReading<v.InferOutput<S>> {
  let document: unknown;
  try {
    document = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { ok: false, result: { kind: 'invalid', message: 'body: expected a JSON document' } };
  }
  const parsed = v.safeParse(schema, document);
  return parsed.success
    ? { ok: true, value: parsed.output }
    : { ok: false, result: { kind: 'invalid', message: firstIssue(parsed.issues) } };
}

/** The part of a webhook that follows the envelope, read with its own schema. */
export function readPart<S extends v.GenericSchema>(
  value: unknown,
  schema: S,
  prefix: string,
): BodyReading<v.InferOutput<S>> {
  const parsed = v.safeParse(schema, value);
  return parsed.success
    ? { ok: true, value: parsed.output }
    : { ok: false, result: { kind: 'invalid', message: firstIssue(parsed.issues, prefix) } };
}
