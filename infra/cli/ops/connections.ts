import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SignatureV4 } from '@smithy/signature-v4';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { type Connection, fillPlaceholders, parseConnections } from '../../../shared/config';

/** Where the admin API is and how a request is authorized: the local key, or SigV4 with the operator's AWS role. */
export type AdminTarget = ({ url: string; key: string } | { url: string; region: string }) & {
  /** The local stack's `${…}` values for a connections file's placeholders (none on AWS). */
  placeholders?: Record<string, string>;
};

/** An admin API answer's body: the fields these commands read. */
interface AnswerBody {
  error?: string;
  field?: string;
  version?: number;
  cursor?: string;
  connection?: unknown;
  connections?: Summary[];
  changes?: { at: string; action: string; principal: string; version: number; changed?: string[] }[];
}
interface Summary {
  id: string;
  ats: string;
  enabled: boolean;
  version: number;
  updatedAt: number;
  updatedBy: string;
}
type Answer = { status: number; body: AnswerBody };

/** A SHA-256 for SigV4 from node:crypto (the `Checksum` shape @smithy/signature-v4 takes). */
type Bytes = string | ArrayBuffer | ArrayBufferView;
const toBuffer = (data: Bytes) =>
  typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);
class Sha256 {
  private readonly hash;
  public constructor(secret?: Bytes) {
    this.hash = secret ? createHmac('sha256', toBuffer(secret)) : createHash('sha256');
  }
  public update(data: Bytes): void {
    this.hash.update(toBuffer(data));
  }
  public async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
  public reset(): void {}
}

/** One admin API call: a bounded wait, the answer's status and JSON (or text as `error`). */
export async function adminCall(target: AdminTarget, method: string, path: string, body?: unknown): Promise<Answer> {
  const url = new URL(`${target.url}${path}`);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json', host: url.host };
  if ('key' in target) headers.authorization = `Bearer ${target.key}`;
  else {
    const signer = new SignatureV4({
      service: 'execute-api',
      region: target.region,
      credentials: defaultProvider(),
      sha256: Sha256,
    });
    const signed = await signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      ...(payload ? { body: payload } : {}),
    });
    Object.assign(headers, signed.headers);
  }
  const response = await fetch(url, { method, headers, body: payload, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  try {
    return { status: response.status, body: text ? JSON.parse(text) : {} };
  } catch {
    return { status: response.status, body: { error: text.slice(0, 500) } };
  }
}

const encode = encodeURIComponent;

/** Every connection, page after page (bounded: the API answers 100 at most a page, and 1,000 pages are read). */
async function listAll(target: AdminTarget): Promise<Summary[]> {
  const all: Summary[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const answer = await adminCall(target, 'GET', `?limit=100${cursor ? `&cursor=${encode(cursor)}` : ''}`);
    if (answer.status !== 200) throw new Error(describe(answer));
    all.push(...(answer.body.connections ?? []));
    cursor = answer.body.cursor;
    // By id, as an operator looks one up (the table's own order is its hash's).
    if (!cursor) return all.sort((a, b) => a.id.localeCompare(b.id));
  }
  throw new Error('more than 1,000 pages of connections: not listed further');
}

const describe = (answer: Answer) =>
  `${answer.status}: ${answer.body.error ?? JSON.stringify(answer.body)}` +
  (answer.body.field ? ` (field ${answer.body.field})` : '');

/**
 * Why no partner key is issued for the connection, given the admin API's answer for it (none where it is out of
 * reach): a connection it does not know, or one that takes no orders from inside its ATS. Undefined: issue it.
 */
export function partnerKeyRefusal(id: string, answer: Answer | undefined): string | undefined {
  if (answer?.status === 404 && String(answer.body?.error ?? '').startsWith('no connection'))
    return `no connection ${id} in the connections table (see: npm run ops -- connections list)`;
  const orders = (answer?.body?.connection as { orders?: { greenhouse?: unknown; ashby?: unknown } } | undefined)
    ?.orders;
  if (answer?.status === 200 && !orders?.greenhouse && !orders?.ashby)
    return `${id} takes no orders from inside its ATS: set its orders.greenhouse or orders.ashby first`;
  if (answer !== undefined && answer.status !== 200 && answer.status !== 404)
    return `the admin API answered ${answer.status}: ${id} could not be checked, so no key is issued`;
  return undefined;
}

/** A file named on the command line that is not there, said as such (not Node's ENOENT line). */
export function noSuchFile(error: unknown): string | undefined {
  const { code, path } = error as { code?: unknown; path?: unknown };
  return code === 'ENOENT' && typeof path === 'string' ? `${path}: no such file` : undefined;
}

/** A connections file as the stack takes it: the local stack's `${…_SANDBOX_URL}` filled in (`placeholders`). */
export function connectionsOfFile(file: string, placeholders: Readonly<Record<string, string>>): Connection[] {
  return parseConnections(JSON.parse(fillPlaceholders(readFileSync(file, 'utf8'), placeholders)), file);
}

/** The connections of a file, each validated as `cdk deploy` validates it, with the file's own placeholders. */
function documentsOf(file: string, placeholders: Readonly<Record<string, string>>): { id: string }[] {
  const document = JSON.parse(fillPlaceholders(readFileSync(file, 'utf8'), placeholders)) as {
    connections?: { id: string }[];
  };
  parseConnections(document, file);
  return document.connections ?? [];
}

const SUBCOMMANDS = ['list', 'get', 'put', 'import', 'export', 'disable', 'enable', 'rotate-keys', 'audit'];
/** What each connections command takes, named when it is missing. */
const ARGUMENTS: Record<string, string> = { put: 'FILE', import: 'FILE' };

/**
 * `npm run ops -- connections list|get ID|put FILE|import FILE [--prune]|export|disable ID|enable ID|audit ID`:
 * each through the admin API, so every change is validated, versioned and audited as the API's own. Answers the
 * lines to print and the exit code.
 */
export async function connectionsCommand(
  target: AdminTarget,
  args: { sub: string | undefined; arg: string | undefined; prune?: boolean },
): Promise<{ lines: string[]; code: number }> {
  const { sub, arg } = args;
  const failed = (answer: Answer) => ({ lines: [describe(answer)], code: answer.status === 409 ? 3 : 1 });
  if (sub === 'list') {
    const all = await listAll(target);
    return {
      lines: [
        ...all.map(
          (c) =>
            `${c.id} (${c.ats}): ${c.enabled ? 'enabled' : 'DISABLED'}, version ${c.version}, ` +
            `changed ${new Date(c.updatedAt).toISOString()} by ${c.updatedBy}`,
        ),
        `${all.length} connection(s)`,
      ],
      code: 0,
    };
  }
  if (sub === 'export') {
    const all = await listAll(target);
    const connections = [];
    for (const c of all) {
      const answer = await adminCall(target, 'GET', `/${encode(c.id)}`);
      if (answer.status !== 200) return failed(answer);
      connections.push(answer.body.connection);
    }
    return { lines: [JSON.stringify({ connections }, null, 2)], code: 0 };
  }
  if (!sub || !SUBCOMMANDS.includes(sub))
    return {
      lines: [`${['connections', sub].filter(Boolean).join(' ')}: unknown (${SUBCOMMANDS.join(', ')})`],
      code: 2,
    };
  if (!arg)
    return { lines: [`connections ${sub}: needs ${ARGUMENTS[sub] ?? 'an argument'} (see npm run ops)`], code: 2 };
  // Only an import prunes: a put of one file must not read as having deleted what the file leaves out.
  if (args.prune && sub !== 'import')
    return { lines: [`connections ${sub}: --prune goes with import only (import FILE --prune)`], code: 2 };
  if (sub === 'put' || sub === 'import')
    return putAll(target, documentsOf(arg, target.placeholders ?? {}), sub, args.prune ?? false);
  if (sub === 'get') {
    const answer = await adminCall(target, 'GET', `/${encode(arg)}`);
    return answer.status === 200 ? { lines: [JSON.stringify(answer.body, null, 2)], code: 0 } : failed(answer);
  }
  if (sub === 'disable' || sub === 'enable') {
    const answer = await adminCall(target, 'POST', `/${encode(arg)}/${sub}`, {});
    if (answer.status !== 200) return failed(answer);
    return { lines: [`${arg}: ${sub}d (version ${answer.body.version})`], code: 0 };
  }
  if (sub === 'rotate-keys') {
    const answer = await adminCall(target, 'POST', `/${encode(arg)}/rotate-keys`, {});
    if (answer.status !== 200) return failed(answer);
    const body = answer.body as AnswerBody & {
      rotated?: string[];
      secretRef?: string;
      next?: string;
      warning?: string;
    };
    const rotated = `${arg}: ${body.rotated?.join(', ')} rotated in secret ${body.secretRef}`;
    return { lines: [rotated, ...(body.warning ? [`warning: ${body.warning}`] : []), body.next ?? ''], code: 0 };
  }
  if (sub === 'audit') {
    const answer = await adminCall(target, 'GET', `/${encode(arg)}/audit`);
    if (answer.status !== 200) return failed(answer);
    const changes = answer.body.changes ?? [];
    return {
      lines: changes.map(
        (c) =>
          `${String(c.at).split('#')[0]} ${c.action} by ${c.principal}: version ${c.version}` +
          (c.changed?.length ? `, ${c.changed.join(', ')}` : ''),
      ),
      code: 0,
    };
  }
  return { lines: [`connections ${sub}: unknown (${SUBCOMMANDS.join(', ')})`], code: 2 };
}

/**
 * `put`: each connection created, or replaced at the version it has now; `import`: the same, but an unchanged one is
 * left alone and, with `--prune`, a connection the file does not hold is deleted.
 */
async function putAll(
  target: AdminTarget,
  documents: { id: string }[],
  mode: 'put' | 'import',
  prune: boolean,
): Promise<{ lines: string[]; code: number }> {
  const lines: string[] = [];
  let code = 0;
  for (const document of documents) {
    const current = await adminCall(target, 'GET', `/${encode(document.id)}`);
    if (mode === 'import' && current.status === 200 && sameJson(current.body.connection, document)) {
      lines.push(`${document.id}: unchanged (version ${current.body.version})`);
      continue;
    }
    const version = current.status === 200 ? current.body.version : undefined;
    const answer = await adminCall(target, 'PUT', `/${encode(document.id)}`, { connection: document, version });
    if (answer.status >= 300) {
      lines.push(`${document.id}: ${describe(answer)}`);
      code = answer.status === 409 ? 3 : 1;
    } else {
      // A put of what is stored writes nothing (the admin API answers the version it has): said so, as import says it.
      const outcome = answer.status === 201 ? 'created' : answer.body.version === version ? 'unchanged' : 'replaced';
      lines.push(`${document.id}: ${outcome} (version ${answer.body.version})`);
    }
  }
  if (mode === 'import' && prune) {
    const inFile = new Set(documents.map((d) => d.id));
    for (const c of await listAll(target)) {
      if (inFile.has(c.id)) continue;
      const answer = await adminCall(target, 'DELETE', `/${encode(c.id)}?version=${c.version}`);
      lines.push(`${c.id}: ${answer.status === 200 ? 'deleted (not in the file)' : describe(answer)}`);
    }
  }
  return { lines, code };
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Every connection in the table, validated, through the admin API (what `ops urls` and the doctor check). */
export async function tableConnections(target: AdminTarget): Promise<Connection[]> {
  const { lines, code } = await connectionsCommand(target, { sub: 'export', arg: undefined });
  if (code !== 0) throw new Error(`the admin API: ${lines.join('; ')}`);
  // Stored before unknown fields were refused, a connection may hold one: the tools read it as the functions do.
  return parseConnections(JSON.parse(lines.join('\n')), 'the connections table', { unknownFields: 'ignore' });
}
