import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { listen, matchRoute, sendJson, type RunningServer } from './sandbox/http-kit';
import { lambdaContext } from './sqs-event-source';
import { errorMessage } from '../../shared/errors';

export type HttpHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

export interface GatewayRoute {
  method: string;
  /** The function's name, as its Lambda context gives it to the handler. */
  functionName?: string;
  /**
   * `/webhooks/ats/:connectionId`, the same path parameters the HTTP API passes; `/console-api/*` takes every path
   * under it, as the HTTP API's `{proxy+}`.
   */
  pattern: string;
  handler: HttpHandler;
  /**
   * The caller's principal from the request's `authorization` header, or undefined to refuse it (403) before its body
   * is read, as API Gateway's IAM authorizer does; the function gets it as `requestContext.authorizer.iam.userArn`.
   */
  authorize?: (authorization: string | undefined) => string | undefined;
}

/** API Gateway HTTP APIs accept payloads up to 10 MB; the handlers apply the connector's own 1 MiB cap. */
const GATEWAY_MAX_BYTES = 10 * 1024 * 1024;
const TEXT_TYPES = /^(application\/(json|[\w.+-]*\+json|x-www-form-urlencoded|xml)|text\/)/i;

async function readLimited(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > GATEWAY_MAX_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Text bodies reach the function as UTF-8 strings, others base64-encoded, as API Gateway passes them. */
function toEvent(
  request: IncomingMessage,
  url: URL,
  body: Buffer,
  routeKey: string,
  pathParameters: Record<string, string>,
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers))
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  const isText =
    TEXT_TYPES.test(headers['content-type'] ?? '') && Buffer.from(body.toString('utf8'), 'utf8').equals(body);
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    queryStringParameters: Object.fromEntries(url.searchParams),
    pathParameters,
    isBase64Encoded: !isText,
    body: body.length === 0 ? undefined : isText ? body.toString('utf8') : body.toString('base64'),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: url.host,
      domainPrefix: 'local',
      http: {
        method: request.method ?? 'GET',
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
  };
}

/** A route whose pattern ends in `/*`: every path under it, as API Gateway's `{proxy+}`. */
function matchPrefix<R extends { method: string; pattern: string }>(
  routes: readonly R[],
  request: IncomingMessage,
  url: URL,
): { route: R; params: Record<string, string> } | undefined {
  for (const route of routes) {
    if (route.method !== request.method || !route.pattern.endsWith('/*')) continue;
    const base = route.pattern.slice(0, -1);
    if (url.pathname.startsWith(base) && url.pathname.length > base.length)
      return { route, params: { proxy: url.pathname.slice(base.length) } };
  }
  return undefined;
}

function writeResult(response: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  const body =
    result.body === undefined ? '' : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
  response.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>);
  response.end(body);
}

/** Static files served under a path, as CloudFront serves the console's bucket on AWS. */
export interface StaticFiles {
  /** `/console`: `/console/` answers `index.html`, and `/console` sends the browser there (as CloudFront does). */
  prefix: string;
  dir: string;
  /** Files made at start (the console's `config.json`), by name. */
  generated?: Record<string, string>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
};
/** The console's headers on one machine, as its CloudFront response headers policy sets them on AWS. */
const STATIC_HEADERS = {
  'content-security-policy': "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

function serveStatic(files: StaticFiles, pathname: string, response: ServerResponse): boolean {
  if (pathname !== files.prefix && !pathname.startsWith(`${files.prefix}/`)) return false;
  // index.html loads app.js and app.css by relative paths: under `/console` they would resolve under `/`.
  if (pathname === files.prefix) {
    response.writeHead(301, { location: `${files.prefix}/`, ...STATIC_HEADERS });
    response.end();
    return true;
  }
  const name = pathname.slice(files.prefix.length).replace(/^\/+/, '') || 'index.html';
  const generated = files.generated?.[name];
  const path = join(files.dir, name);
  if (generated === undefined && (name.includes('..') || name.includes('/') || !existsSync(path))) {
    sendJson(response, 404, { message: 'Not Found' });
    return true;
  }
  response.writeHead(200, {
    'content-type': CONTENT_TYPES[extname(name)] ?? 'application/octet-stream',
    ...STATIC_HEADERS,
  });
  response.end(generated ?? readFileSync(path));
  return true;
}

/** The HTTP API on one machine: requests become API Gateway v2 events for the same handlers Lambda runs. */
export async function startHttpGateway(
  routes: GatewayRoute[],
  port: number,
  statics?: StaticFiles,
): Promise<RunningServer> {
  const table = routes.map((route) => ({
    method: route.method,
    pattern: route.pattern,
    handle: () => undefined,
    handler: route.handler,
    functionName: route.functionName,
    authorize: route.authorize,
  }));
  let baseUrl = '';
  const running = await listen((request, response) => {
    const url = new URL(request.url ?? '/', baseUrl);
    if (url.pathname === '/health') return sendJson(response, 200, { status: 'ok' });
    if (statics && request.method === 'GET' && serveStatic(statics, url.pathname, response)) return;
    const match = matchRoute(table, request.method ?? 'GET', url.pathname) ?? matchPrefix(table, request, url);
    if (!match) return sendJson(response, 404, { message: 'Not Found' });
    const route = match.route as (typeof table)[number];
    const principal = route.authorize?.(request.headers.authorization);
    if (route.authorize && !principal) {
      request.resume();
      return sendJson(response, 403, { message: 'Forbidden' });
    }
    return (async () => {
      const body = await readLimited(request);
      if (!body) return sendJson(response, 413, { message: 'Request Entity Too Large' });
      try {
        const event = toEvent(request, url, body, `${route.method} ${route.pattern}`, match.params);
        if (principal) Object.assign(event.requestContext, { authorizer: { iam: { userArn: principal } } });
        writeResult(response, await route.handler(event, lambdaContext(route.functionName ?? 'http-function', 30_000)));
      } catch (error) {
        // API Gateway answers a function error with 500 Internal Server Error.
        console.error(`gateway: ${route.method} ${route.pattern} threw: ${errorMessage(error)}`);
        if (!response.headersSent) sendJson(response, 500, { message: 'Internal Server Error' });
      }
    })();
  }, port);
  baseUrl = running.url;
  return running;
}
