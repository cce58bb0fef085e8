import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import type { Connection, ConnectionSecrets } from '../config';
import { secretEquals } from '../http';
import type { PipelineLogger } from '../pipeline/ports';
import { describeFirstIssue } from '../validation';
import type { OrderRecord, OrderStore } from './records';

/**
 * What the order sources share: the ATS calls the connector (it is the server), authenticated by a key the
 * connector issued the customer, sent as the Basic username with an empty password; the key says which connection.
 */
export interface PartnerRequest<C extends string = string> {
  call: C;
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

export interface PartnerDependencies {
  /** The connection and its secrets, when one of that id exists; `disabled` when an operator turned it off. */
  connectionFor(
    connectionId: string,
  ): Promise<{ connection: Connection; secrets: ConnectionSecrets; disabled?: boolean } | undefined>;
  orders: OrderStore;
  /** Queues the order's work (the interview, the invitation e-mail); the answer waits for nothing more. */
  enqueue(order: OrderRecord): Promise<void>;
  logger: PipelineLogger;
  now(): number;
}

/** The secret holding each source's inbound key. */
const KEY_SECRETS = { greenhouse: 'greenhousePartnerKey', ashby: 'ashbyPartnerKey' } as const;

/** A new key for a connection's partner calls: its id, a dot, 256 random bits (well under Greenhouse's 171 chars). */
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

export type OrderTests = NonNullable<NonNullable<Connection['orders']>['greenhouse']>['tests'];

/**
 * The connection a key belongs to, when it takes orders from `source` and the key is its own (compared in constant
 * time); read before anything else of the request.
 */
export async function authenticatePartner(
  source: keyof typeof KEY_SECRETS,
  authorization: string | undefined,
  deps: Pick<PartnerDependencies, 'connectionFor'>,
): Promise<{ connection: Connection; tests: OrderTests; disabled: boolean } | undefined> {
  const key = partnerKeyOf(authorization);
  const connectionId = key?.slice(0, key.indexOf('.'));
  if (!key || !connectionId) return undefined;
  const found = await deps.connectionFor(connectionId);
  const expected = found?.secrets[KEY_SECRETS[source]];
  const tests = found?.connection.orders?.[source]?.tests;
  if (!found || !tests || !expected || !secretEquals(expected, key)) return undefined;
  return { connection: found.connection, tests, disabled: found.disabled === true };
}

/** The JSON body as `schema`, or the answer (`refuse(message)`, a 400) that names the first field at fault. */
export function readPartnerBody<S extends v.GenericSchema>(
  rawBody: Buffer,
  schema: S,
  refuse: (message: string) => PartnerAnswer,
): { ok: true; body: v.InferOutput<S> } | { ok: false; answer: PartnerAnswer } {
  let document: unknown;
  try {
    document = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { ok: false, answer: refuse('body: expected a JSON document') };
  }
  const parsed = v.safeParse(schema, document);
  if (parsed.success) return { ok: true, body: parsed.output };
  return { ok: false, answer: refuse(describeFirstIssue(parsed.issues, { fallbackField: 'body' }).message) };
}

/**
 * What a recruiter is told of an order placed while an operator has the connection turned off: nothing is recorded or
 * sent, now or once it is on again (a queued order would go out then, long after it was asked for).
 */
export const PAUSED_ORDER = 'AI interviews are paused for this account: nothing was sent. Ask your administrator.';
