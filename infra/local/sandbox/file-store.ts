import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { json, readBody, readJson, route, sendJson, type Route, UPLOAD_BODY_BYTES } from './http-kit';

/**
 * The files a sandbox's API took (a report PDF on a candidate's record), kept with their bytes so a person or a test
 * can open them again; the storage host a presigned upload goes to (Ashby's); the next uploads refused on demand.
 */

/** A presigned upload URL lasts 10 minutes (developers.ashbyhq.com /reference/filecreatefileuploadhandle). */
const TTL_MS = 10 * 60_000;
const SIGNING_KEY = randomBytes(32);

export type StoredFile = { id: string; owner: string; name: string; contentType: string; bytes: Buffer } & {
  uploadedAt: string;
};
/** A `multipart/form-data` part: a field's text, or a file. */
export type FormPart = [string, string | File];
/** A file as listed: no bytes, their size and the URL that serves them. */
export type ListedFile = Omit<StoredFile, 'bytes'> & { size: number; url: string };
type Presigned = { handle: string; fields: Record<string, string>; expiresAt: number; length: number } & {
  filename: string;
  contentType: string;
  bytes?: Buffer;
};

const TYPES: Record<string, string> = { pdf: 'application/pdf', html: 'text/html', txt: 'text/plain' };
/** A file's type by its extension, as a vendor that takes no content type infers it. */
export const contentTypeOf = (name: string) =>
  TYPES[/\.(\w+)$/.exec(name)?.[1]?.toLowerCase() ?? ''] ?? 'application/octet-stream';

/** The bytes of strict base64, else undefined (Node's decoder skips what it cannot read; a vendor refuses it). */
export function base64Bytes(text: unknown): Buffer | undefined {
  if (typeof text !== 'string' || !text || text.length % 4 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

/** A `multipart/form-data` body's parts in order, by the platform's own parser (fetch's `formData`); else none. */
export async function formParts(request: IncomingMessage): Promise<FormPart[]> {
  const type = request.headers['content-type'] ?? '';
  const body = await readBody(request, UPLOAD_BODY_BYTES);
  if (!type.startsWith('multipart/form-data')) return [];
  return new Response(body, { headers: { 'content-type': type } }).formData().then(
    (form) => [...form],
    () => [],
  );
}

/** What a public URL serves (a vendor downloads a file given by URL at once); undefined when it serves none. */
export async function download(url: string): Promise<Buffer | undefined> {
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) }).catch(() => undefined);
  return response?.ok ? Buffer.from(await response.arrayBuffer()) : undefined;
}

export class FileStore {
  /** The sandbox's own origin, once it listens: where its files and its storage host are served. */
  public origin = '';
  private readonly files: StoredFile[] = [];
  private readonly presigned: Presigned[] = [];
  private refusing = 0;

  /** `refusal`: what the vendor answers an upload it refuses, thrown while uploads are refused. */
  public constructor(private readonly refusal: Error) {}

  public refuseNext(count: number): number {
    this.refusing = count;
    return count;
  }

  /** Records a file on `owner` (an application, candidate or opportunity), unless uploads are being refused. */
  public add(file: Omit<StoredFile, 'id' | 'uploadedAt'> & { id?: string }): ListedFile {
    if (this.refusing > 0) {
      this.refusing--;
      throw this.refusal;
    }
    const stored = { id: file.id ?? randomUUID(), ...file, uploadedAt: new Date().toISOString() };
    this.files.push(stored);
    return this.shown(stored);
  }

  /** The files of these owners (every file without) as the control route lists them. */
  public list(owners?: readonly string[]): ListedFile[] {
    return this.files.filter((f) => !owners || owners.includes(f.owner)).map((f) => this.shown(f));
  }

  public get(id: string): StoredFile | undefined {
    return this.files.find((f) => f.id === id);
  }

  /** A file without its bytes: their size, and the URL that serves them. */
  private shown({ bytes, ...file }: StoredFile): ListedFile {
    return { ...file, size: bytes.length, url: `${this.origin}/_sandbox/files/${encodeURIComponent(file.id)}` };
  }

  /** An S3-style presigned POST: the URL, the fields to send with the file, and the handle the upload is known by. */
  public presign(upload: { filename: string; contentType: string; contentLength: number }) {
    const [handle, key, expiresAt] = [randomUUID(), `uploads/${randomUUID()}/${upload.filename}`, Date.now() + TTL_MS];
    const conditions = [{ key }, ['content-length-range', upload.contentLength, upload.contentLength]];
    const policy = Buffer.from(JSON.stringify({ expiration: new Date(expiresAt), conditions })).toString('base64');
    const signature = createHmac('sha256', SIGNING_KEY).update(policy).digest('hex');
    const fields = { key, 'Content-Type': upload.contentType, policy, 'x-amz-signature': signature };
    const { filename, contentType, contentLength: length } = upload;
    this.presigned.push({ handle, fields, expiresAt, length, filename, contentType });
    return { handle, url: `${this.origin}/_storage/upload`, fields };
  }

  /** The upload a handle names, once its bytes reached the storage host. */
  public uploaded(handle: string): (Presigned & { bytes: Buffer }) | undefined {
    const found = this.presigned.find((p) => p.handle === handle);
    return found?.bytes ? { ...found, bytes: found.bytes } : undefined;
  }

  /** A POST to the storage host (S3's POST Object): every field signed, before the file; its size as presigned. */
  public async receive(parts: FormPart[]): Promise<{ status: number; code?: string }> {
    const at = parts.findIndex(([name]) => name === 'file');
    const [fields, file] = [Object.fromEntries(parts.slice(0, Math.max(at, 0))), parts[at]?.[1]];
    const upload = this.presigned.find((p) => p.fields.key === fields.key);
    if (!upload || Object.entries(upload.fields).some(([name, value]) => fields[name] !== value))
      return { status: 403, code: 'AccessDenied' };
    if (upload.expiresAt < Date.now()) return { status: 403, code: 'AccessDenied' };
    if (typeof file !== 'object') return { status: 400, code: 'InvalidArgument' };
    if (file.size !== upload.length)
      return { status: 400, code: file.size < upload.length ? 'EntityTooSmall' : 'EntityTooLarge' };
    upload.bytes = Buffer.from(await file.arrayBuffer());
    return { status: 204 };
  }
}

const sendBytes = (response: ServerResponse, file: StoredFile) =>
  response
    .writeHead(200, {
      'content-type': file.contentType,
      'content-length': String(file.bytes.length),
      'content-disposition': `inline; filename="${file.name.replace(/["\\\r\n]/g, '_')}"`,
    })
    .end(file.bytes);

/**
 * The sandbox's file routes: `GET /_sandbox/files?owner=` (the files of that application, candidate or opportunity;
 * `ownersOf` adds the ids an owner's files may hang on), `GET /_sandbox/files/:id` (the bytes),
 * `POST /_sandbox/refuse-uploads {count}` (the next uploads refused as the vendor refuses), the storage host.
 */
export function fileRoutes(store: FileStore, ownersOf = (id: string): string[] => [id]): Route[] {
  return [
    json('GET /_sandbox/files', ({ url }) => {
      const owner = url.searchParams.get('owner');
      return { files: store.list(owner === null ? undefined : ownersOf(owner)) };
    }),
    route('GET /_sandbox/files/:id', ({ response, params }) => {
      const file = store.get(params.id ?? '');
      if (file) sendBytes(response, file);
      else sendJson(response, 404, { error: `no file ${params.id}` });
    }),
    route('POST /_sandbox/refuse-uploads', async ({ request, response }) => {
      const { count = 1 } = await readJson(request);
      if (!Number.isInteger(count) || Number(count) < 0) return sendJson(response, 400, { error: 'count: an integer' });
      sendJson(response, 200, { refusing: store.refuseNext(Number(count)) });
    }),
    route('POST /_storage/upload', async ({ request, response }) => {
      const { status, code } = await store.receive(await formParts(request));
      const error = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code></Error>`;
      response.writeHead(status, code ? { 'content-type': 'application/xml' } : {}).end(code ? error : undefined);
    }),
  ];
}
