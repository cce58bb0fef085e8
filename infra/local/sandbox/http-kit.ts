import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basicAuth } from '../../../shared/ats/ats-http';
import { errorMessage, isInvalidUrl } from '../../../shared/errors';

/** The same 1 MiB cap the connector's webhook endpoints apply. */
export const MAX_BODY_BYTES = 1024 * 1024;

export class BodyTooLargeError extends Error {
  public constructor() {
    super(`body exceeds ${MAX_BODY_BYTES} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** The largest body an upload is read up to: Lever refuses a file over 30 MB itself; the others state no limit. */
export const UPLOAD_BODY_BYTES = 64 * 1024 * 1024;

/** A body already read, so a request's body can be read twice (once to record its shape, once by its route). */
const readBodies = new WeakMap<IncomingMessage, Buffer>();

export async function readBody(request: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const known = readBodies.get(request);
  if (known && known.length > limit) throw new BodyTooLargeError();
  if (known) return known;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new BodyTooLargeError();
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  readBodies.set(request, body);
  return body;
}

/**
 * Reads the whole body now, as a server has it before its handler runs: a route answered past the client's timeout
 * still does its work with it (the client that gave up loses only the answer). A body that cannot be read is left to
 * the route to refuse.
 */
export async function receiveWholeBody(request: IncomingMessage): Promise<void> {
  await readBody(request, UPLOAD_BODY_BYTES).catch(() => undefined);
}

/** A request's JSON body, `{}` when empty; a body that is not JSON throws (a SyntaxError, the client's mistake). */
export async function readJson(request: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  const text = (await readBody(request, limit)).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/**
 * The shape of one API request as a vendor's reference lists it: the method, the route's path template, the query
 * parameters and the top-level JSON body fields, by name. The sandboxes record the distinct ones they served, so a
 * test can hold every call the connector made against the documented routes.
 */
export interface CallShape {
  method: string;
  route: string;
  query: string[];
  body: string[];
}

/**
 * Read after the route answered: the body as the route read it (a body is never read here first, so a request the
 * client gave up on is handled exactly as before).
 */
export function callShape(request: IncomingMessage, route: string, url: URL): CallShape {
  const method = request.method ?? 'GET';
  let body: unknown;
  const read = readBodies.get(request);
  if (read && method !== 'GET' && method !== 'DELETE') {
    try {
      body = JSON.parse(read.toString('utf8') || '{}') as unknown;
    } catch {
      // A form body (an OAuth token request) or no JSON: no fields to hold against the reference.
    }
  }
  return shapeOf(method, route, url, body);
}

/** A request's shape from its parts: its query's parameter names and its JSON object body's top-level fields. */
export function shapeOf(method: string, route: string, url: URL, body: unknown): CallShape {
  const fields = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).sort() : [];
  return { method, route, query: [...new Set(url.searchParams.keys())].sort(), body: fields };
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text).toString(),
    ...headers,
  });
  response.end(text);
}

export interface RouteContext {
  request: IncomingMessage;
  response: ServerResponse;
  params: Record<string, string>;
  url: URL;
}

export interface Route {
  method: string;
  /** `/interview/:interviewId`: segments starting with `:` are captured. */
  pattern: string;
  /** The query parameters the vendor documents for the route; a sandbox of an ATS refuses any other. */
  query?: readonly string[];
  handle: (context: RouteContext) => Promise<void> | void;
}

/** A route of a table: `'GET /v1/stages'`, its method and path template in one. */
export function route(at: string, handle: Route['handle']): Route {
  const [method = 'GET', pattern = '/'] = at.split(' ');
  return { method, pattern, handle };
}

type Handle = (context: RouteContext) => unknown;
/** A route answering the JSON body its handler returns (200 unless said), unless it answered itself. */
export function json(at: string, ...[first, second]: [Handle] | [number, Handle]): Route {
  const [status, handle] = typeof first === 'number' ? [first, second as Handle] : [200, first];
  return route(at, async (context) => {
    const body = await handle(context);
    if (!context.response.headersSent) sendJson(context.response, status, body);
  });
}

export function matchRoute(
  routes: readonly Route[],
  method: string,
  pathname: string,
): { route: Route; params: Record<string, string> } | undefined {
  const parts = pathname.split('/').filter(Boolean);
  for (const route of routes) {
    if (route.method !== method) continue;
    const expected = route.pattern.split('/').filter(Boolean);
    if (expected.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const matches = expected.every((segment, index) => {
      const actual = parts[index] as string;
      if (segment.startsWith(':')) {
        params[segment.slice(1)] = decodeURIComponent(actual);
        return true;
      }
      return segment === actual;
    });
    if (matches) return { route, params };
  }
  return undefined;
}

export interface RunningServer {
  server: Server;
  url: string;
  port: number;
  close: () => Promise<void>;
}

/** What a client sent that cannot be a request: a bad percent-encoding, a request target that is no URL. */
function isClientMistake(error: unknown): boolean {
  return isInvalidUrl(error);
}

/**
 * The answer to a request whose handling failed: 400 for what the client sent wrong, 500 for the server's own
 * fault, and a closed socket when the client broke off (an aborted body) or the answer had started. Never a throw.
 */
export function answerFailure(request: IncomingMessage, response: ServerResponse, error: unknown): void {
  if (request.destroyed || response.headersSent || response.destroyed) {
    response.destroy();
    return;
  }
  const clientMistake = isClientMistake(error);
  sendJson(response, clientMistake ? 400 : 500, { message: clientMistake ? 'Bad Request' : 'Internal Server Error' });
}

/**
 * Listens on 127.0.0.1 only; port 0 picks a free port (tests), a fixed one serves `npm start`. Whatever a socket
 * sends (a malformed path, an absolute-form target that is no URL, a body cut off mid-way), the handler's throw or
 * rejection becomes an answer or a closed socket, never an exception that ends the process.
 */
export async function listen(
  handler: (request: IncomingMessage, response: ServerResponse) => void | Promise<void>,
  port: number,
  host = '127.0.0.1',
): Promise<RunningServer> {
  const server = createServer((request, response) => {
    // A client that aborts mid-body makes the request emit 'error'; without a listener that would throw.
    request.on('error', () => response.destroy());
    response.on('error', () => response.destroy());
    try {
      const work = handler(request, response);
      if (work instanceof Promise) work.catch((error: unknown) => answerFailure(request, response, error));
    } catch (error) {
      answerFailure(request, response, error);
    }
  });
  // Requests Node cannot parse at all (over-long headers, bad request lines) get its 400 and the socket closes.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    server,
    port: address.port,
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A sandbox's routes: its own (`open`, answered as they are), and its API's, each let in by `gate` first. */
export interface RouteTables {
  open: readonly Route[];
  api: readonly Route[];
  gate(context: RouteContext, route: Route): Promise<void>;
  unrouted(context: RouteContext): void;
  /** Answers what a route threw. */
  failed(context: RouteContext, error: unknown): void;
  /** The path the routes are matched on (a service that ignores a trailing slash drops it). */
  path?(url: URL): string;
}

/** Listens on `port`: a request goes to its `open` route, else to its API route through the gate, else `unrouted`. */
export async function serveRoutes(tables: RouteTables, port: number): Promise<RunningServer> {
  let baseUrl = '';
  const running = await listen((request, response) => {
    const url = new URL(request.url ?? '/', baseUrl);
    const [method, path] = [request.method ?? 'GET', tables.path?.(url) ?? url.pathname];
    const open = matchRoute(tables.open, method, path);
    const api = open ? undefined : matchRoute(tables.api, method, path);
    const context = { request, response, url, params: (open ?? api)?.params ?? {} };
    const work = async () =>
      open ? open.route.handle(context) : api ? tables.gate(context, api.route) : tables.unrouted(context);
    work().catch((error: unknown) => tables.failed(context, error));
  }, port);
  baseUrl = running.url;
  return running;
}

/** mulberry32: a small seeded generator, so sandboxes and chaos runs replay the same faults for one seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A webhook as a sandbox sends it: the JSON body's exact bytes POSTed with `headers` (its signature), answered within
 * `timeoutMs`; the answer's status and text, or why none came.
 */
export async function postWebhook(
  url: string,
  body: string | Buffer,
  options: { headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ status: number; text: string } | { error: string }> {
  const headers = { 'content-type': 'application/json', ...options.headers };
  try {
    const signal = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    const response = await fetch(url, { method: 'POST', headers, body, signal });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    return { error: errorMessage(error) };
  }
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the service's timestamp format. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export function formatDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * A sandbox's call to the connector as the ATS makes it (an assessment partner's endpoint): Basic auth with the key
 * as the username and an empty password, a JSON body, the answer's status and body (JSON where it parses).
 */
export async function callAsAts(
  url: string,
  init: { method: string; key: string; body?: unknown },
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: init.method,
    headers: {
      authorization: basicAuth(init.key),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    // The partner answers from its own records; a busy one is waited for as an ATS's client would.
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  } catch {
    return { status: response.status, body: text };
  }
}
