import * as v from 'valibot';
import { connectionSchema } from '../config/connection.schema';
import type { StoredConnection } from '../config/connection-source';
import { describeFirstIssue, describeUnknownField, SAFE_ID_PATTERN, unknownFields } from '../validation';
import { changedFields } from '../mapping/connections.import';
import { type SecretStore, writeFields } from '../config/secret-store';
import { issuePartnerKey } from '../orders/partner-calls';
import { randomBytes } from 'node:crypto';
import {
  type ConnectionAudit,
  type ConnectionChange,
  type ConnectionPage,
  cursorId,
  VersionConflictError,
} from '../mapping/connections.records';

/** What the admin API needs of the connections table (shared/mapping/connections.records.ts). */
export interface ConnectionAdminStore {
  read(id: string, consistent?: boolean): Promise<StoredConnection | undefined>;
  page(limit: number, cursor?: string): Promise<ConnectionPage>;
  write(
    id: string,
    next: { document: unknown; enabled: boolean; changed: string[] },
    change: ConnectionChange,
    current?: StoredConnection,
  ): Promise<StoredConnection>;
  remove(current: StoredConnection, change: ConnectionChange): Promise<void>;
  audit(connectionId: string, limit?: number): Promise<ConnectionAudit[]>;
}

/** An answer of the admin API: its status and JSON body. */
export interface AdminAnswer {
  status: number;
  body: Record<string, unknown>;
}

export interface AdminRequest {
  method: string;
  /** The path under `/admin/connections`: `[]`, `[id]`, `[id, 'disable' | 'enable' | 'audit']`. */
  path: string[];
  query: Record<string, string | undefined>;
  /** The parsed JSON body (undefined when there is none). */
  body: unknown;
  /** Who asks: the IAM principal's ARN on AWS, the local key's name on one machine. */
  principal: string;
}

export interface AdminOptions {
  store: ConnectionAdminStore;
  /** The connections' secrets (Secrets Manager, or the local file): written when keys are rotated, never returned. */
  secrets?: Pick<SecretStore, 'read' | 'write'> | undefined;
  /** Every connection's secret is named under it (the deploy settings' secretsPrefix): a write outside it is 400. */
  secretsPrefix?: string | undefined;
}

const PAGE_LIMIT = { default: 50, max: 100 } as const;

const versionSchema = v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(1));
const putSchema = v.object({ connection: v.unknown(), version: v.optional(versionSchema) });
const patchSchema = v.object({
  patch: v.record(v.string(), v.unknown(), 'must be an object of the fields to change'),
  version: versionSchema,
});
const toggleSchema = v.object({ version: v.optional(versionSchema) });

/**
 * The admin API's connections resource: list, get, put (create or replace at a version), patch (a JSON merge patch at
 * a version), disable, enable, delete and the audit. Every write is validated as the connections file is, refused
 * with 409 when the connection is not at the version the caller read, and audited with the caller's principal.
 * Nothing returned holds a secret: a connection names its secret (`secretRef`), never its values.
 */
export async function handleAdminRequest(request: AdminRequest, options: AdminOptions): Promise<AdminAnswer> {
  const { store } = options;
  const [id, action, ...rest] = request.path;
  if (rest.length || (id !== undefined && !SAFE_ID_PATTERN.test(id))) return notFound();
  if (id === undefined) {
    if (request.method !== 'GET') return methodNotAllowed();
    return list(store, request.query);
  }
  const current = await store.read(id, true);
  if (action === 'audit' && request.method === 'GET')
    return { status: 200, body: { connectionId: id, changes: await store.audit(id, PAGE_LIMIT.max) } };
  if (action === 'rotate-keys') {
    if (request.method !== 'POST') return methodNotAllowed();
    return current ? rotateKeys(request, current, options) : notFound(id);
  }
  if (action === 'disable' || action === 'enable') {
    if (request.method !== 'POST') return methodNotAllowed();
    if (!current) return notFound(id);
    const body = v.safeParse(toggleSchema, request.body ?? {});
    if (!body.success) return invalid(describeFirstIssue(body.issues));
    const enabled = action === 'enable';
    const change: ConnectionChange = { principal: request.principal, action, expectedVersion: body.output.version };
    const next = { document: current.document, enabled, changed: current.enabled === enabled ? [] : ['enabled'] };
    return written(await store.write(id, next, change, current), 200);
  }
  if (action !== undefined) return notFound();
  switch (request.method) {
    case 'GET':
      return current ? { status: 200, body: view(current) } : notFound(id);
    case 'PUT':
      return put(request, id, current, options);
    case 'PATCH':
      return patch(request, id, current, options);
    case 'DELETE': {
      if (!current) return notFound(id);
      const version = Number(request.query.version);
      if (!Number.isInteger(version) || version < 1)
        return invalid({ field: 'version', message: 'version: the version you read is required (?version=N)' });
      await store.remove(current, { principal: request.principal, action: 'delete', expectedVersion: version });
      return { status: 200, body: { id, deleted: true, version } };
    }
    default:
      return methodNotAllowed();
  }
}

async function list(store: ConnectionAdminStore, query: AdminRequest['query']): Promise<AdminAnswer> {
  const asked = Number(query.limit ?? PAGE_LIMIT.default);
  const limit = Number.isInteger(asked) && asked > 0 ? Math.min(asked, PAGE_LIMIT.max) : PAGE_LIMIT.default;
  // A cursor no page gave would reach the table as a key it refuses (a 500): said here, naming the field.
  if (query.cursor && cursorId(query.cursor) === undefined)
    return invalid({ field: 'cursor', message: 'cursor: not the cursor a page of this list answered' });
  const page = await store.page(limit, query.cursor || undefined);
  const connections = page.connections.map((c) => {
    const { ats } = (c.document ?? {}) as { ats?: unknown };
    return { id: c.id, ats, enabled: c.enabled, version: c.version, updatedAt: c.updatedAt, updatedBy: c.updatedBy };
  });
  return { status: 200, body: { connections, ...(page.cursor ? { cursor: page.cursor } : {}) } };
}

async function put(
  request: AdminRequest,
  id: string,
  current: StoredConnection | undefined,
  options: AdminOptions,
): Promise<AdminAnswer> {
  const body = v.safeParse(putSchema, request.body);
  if (!body.success) return invalid(describeFirstIssue(body.issues));
  const checked = checkDocument(id, body.output.connection, options);
  if ('status' in checked) return checked;
  if (current && body.output.version === undefined)
    return conflict(`connection ${id} exists at version ${current.version}: send that version to replace it`);
  // A version read of a connection gone since (deleted meanwhile): replacing it would make it again unseen.
  if (!current && body.output.version !== undefined)
    return conflict(`connection ${id} no longer exists (deleted since version ${body.output.version} was read)`);
  const change: ConnectionChange = current
    ? { principal: request.principal, action: 'replace', expectedVersion: body.output.version }
    : { principal: request.principal, action: 'create', createOnly: true };
  const next = {
    document: checked.document,
    enabled: current?.enabled ?? true,
    changed: current ? changedFields(current.document, checked.document) : ['*'],
  };
  if (current && !next.changed.length) return unchanged(current, body.output.version);
  return written(await options.store.write(id, next, change, current), current ? 200 : 201);
}

async function patch(
  request: AdminRequest,
  id: string,
  current: StoredConnection | undefined,
  options: AdminOptions,
): Promise<AdminAnswer> {
  if (!current) return notFound(id);
  const body = v.safeParse(patchSchema, request.body);
  if (!body.success) return invalid(describeFirstIssue(body.issues));
  const merged = mergePatch(current.document, body.output.patch);
  const checked = checkDocument(id, merged, options);
  if ('status' in checked) return checked;
  const change = { principal: request.principal, action: 'patch' as const, expectedVersion: body.output.version };
  const next = {
    document: checked.document,
    enabled: current.enabled,
    changed: changedFields(current.document, merged),
  };
  if (!next.changed.length) return unchanged(current, body.output.version);
  return written(await options.store.write(id, next, change, current), 200);
}

/**
 * New values for the keys the connector issues for a connection: the interview webhook's token and, where it takes
 * orders from inside Greenhouse or Ashby, the customer's partner key. Written into the connection's secret (in effect
 * in every function within the secrets' cache, 5 minutes); the answer names them and where they are, never a value.
 */
async function rotateKeys(
  request: AdminRequest,
  current: StoredConnection,
  options: AdminOptions,
): Promise<AdminAnswer> {
  const parsed = v.safeParse(connectionSchema, current.document);
  if (!parsed.success) return invalid(describeFirstIssue(parsed.issues, { prefix: 'connection' }));
  const connection = parsed.output;
  if (!options.secrets) return { status: 501, body: { error: 'no secret store: keys cannot be rotated here' } };
  const secret = await options.secrets.read(connection.secretRef);
  if (!secret || typeof secret !== 'object')
    return { status: 409, body: { error: `secret ${connection.secretRef} does not exist: create it first` } };
  const rotated: Record<string, string> = { interviewWebhookToken: randomBytes(24).toString('hex') };
  if (connection.orders?.greenhouse) rotated.greenhousePartnerKey = issuePartnerKey(connection.id);
  if (connection.orders?.ashby) rotated.ashbyPartnerKey = issuePartnerKey(connection.id);
  await writeFields(options.secrets, connection.secretRef, rotated);
  const keys = Object.keys(rotated);
  // Whatever stops the change log's write (races, a throttled or unreachable table), the rotation stands.
  const stored = await recordRotation(current, keys, request.principal, options.store).catch(() => undefined);
  // The keys are new whatever the change log says: answered 200, with what the log lacks (never a 409 to retry).
  const unrecorded = stored
    ? {}
    : { warning: 'the keys are rotated, but the change log could not record it (the connection kept changing?)' };
  return {
    status: 200,
    body: {
      id: current.id,
      version: stored?.version ?? current.version,
      rotated: keys,
      secretRef: connection.secretRef,
      ...unrecorded,
      next:
        "Point the interview service's webhook at the new token (npm run ops -- urls shows the URL's form; read the " +
        'token from the secret) and give the customer their new partner key; the old ones stop within 5 minutes.',
    },
  };
}

/**
 * The rotation in the change log, at the version that stands: the keys are new already, so a change another caller
 * made meanwhile is read again and the rotation recorded on it (its document as it is), never answered as a conflict.
 * Undefined when other changes won every try (or the connection went): the keys stay rotated all the same.
 */
async function recordRotation(
  current: StoredConnection,
  keys: string[],
  principal: string,
  store: ConnectionAdminStore,
): Promise<StoredConnection | undefined> {
  let at: StoredConnection | undefined = current;
  for (let attempt = 1; at && attempt <= ROTATION_RECORD_TRIES; attempt++) {
    const change: ConnectionChange = { principal, action: 'rotate-keys', expectedVersion: at.version };
    const next = { document: at.document, enabled: at.enabled, changed: keys.map((k) => `secret.${k}`) };
    try {
      return await store.write(at.id, next, change, at);
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
      at = await store.read(at.id, true);
    }
  }
  return undefined;
}

/** How often a rotation is recorded again on the version another change made meanwhile. */
const ROTATION_RECORD_TRIES = 5;

/** The document as the connections file would take it, naming the first field that is wrong (400). */
function checkDocument(id: string, document: unknown, options: AdminOptions): { document: unknown } | AdminAnswer {
  const parsed = v.safeParse(connectionSchema, document);
  if (!parsed.success) return invalid(describeFirstIssue(parsed.issues, { prefix: 'connection' }));
  // A field the schema does not know is a typo: a rule misspelt would be a rule silently gone.
  const [unknown] = unknownFields(connectionSchema, document);
  if (unknown)
    return invalid({ field: `connection.${unknown.path}`, message: `connection.${describeUnknownField(unknown)}` });
  if (parsed.output.id !== id)
    return invalid({ field: 'connection.id', message: `connection.id: must be ${id}, the id in the path` });
  if (options.secretsPrefix && !parsed.output.secretRef.startsWith(options.secretsPrefix))
    return invalid({
      field: 'connection.secretRef',
      message: `connection.secretRef: must be under ${options.secretsPrefix} (the functions read only those secrets)`,
    });
  return { document };
}

/**
 * RFC 7396 JSON merge patch: an object merges, null removes, anything else replaces. Every key is the result's own
 * (`__proto__` too: never its prototype), so the document's check sees what JSON would store, and names a stray key.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else {
      const merged = mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value);
      Object.defineProperty(result, key, { value: merged, enumerable: true, writable: true, configurable: true });
    }
  }
  return result;
}

function view(stored: StoredConnection): Record<string, unknown> {
  const { id, version, enabled, updatedAt, updatedBy, document } = stored;
  return { id, version, enabled, updatedAt, updatedBy, connection: document };
}

const written = (stored: StoredConnection, status: number): AdminAnswer => ({ status, body: view(stored) });
/** A write that changes nothing writes nothing, and is still refused when made from a stale version. */
const unchanged = (current: StoredConnection, version: number | undefined): AdminAnswer =>
  version !== undefined && version !== current.version
    ? conflict(`connection ${current.id} is at version ${current.version}: read it again and apply the change to it`)
    : written(current, 200);
const invalid = (issue: { field: string; message: string }): AdminAnswer => ({
  status: 400,
  body: { error: issue.message, field: issue.field },
});
const conflict = (message: string): AdminAnswer => ({ status: 409, body: { error: message } });
const notFound = (id?: string): AdminAnswer => ({
  status: 404,
  body: { error: id ? `no connection ${id}` : 'no such route' },
});
const methodNotAllowed = (): AdminAnswer => ({ status: 405, body: { error: 'method not allowed here' } });
