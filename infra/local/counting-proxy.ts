import { type IncomingMessage, request as httpRequest, type ServerResponse } from 'node:http';
import { listen, type RunningServer } from './sandbox/http-kit';

/**
 * Sends `request` on to `upstream` and its answer back; the body is piped, or `body` when the caller read it
 * already. A failure to reach `upstream` answers 502.
 */
export function forward(upstream: URL, request: IncomingMessage, response: ServerResponse, body?: Buffer): void {
  const onward = httpRequest(
    {
      hostname: upstream.hostname,
      port: upstream.port,
      path: request.url,
      method: request.method,
      headers: { ...request.headers, host: upstream.host },
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  onward.on('error', (error) => {
    if (!response.headersSent) response.writeHead(502);
    response.end(error.message);
  });
  if (body === undefined) request.pipe(onward);
  else onward.end(body);
}

/**
 * A pass-through proxy in front of a local AWS endpoint that counts requests by operation (the
 * `X-Amz-Target` header of the JSON protocols: `DynamoDB_20120810.PutItem`, `AmazonSQS.SendMessage`).
 */
export async function startCountingProxy(
  target: string,
): Promise<RunningServer & { counts: Map<string, number>; reset(): void; total(): number }> {
  const counts = new Map<string, number>();
  const upstream = new URL(target);
  const server = await listen((request, response) => {
    const operation = String(request.headers['x-amz-target'] ?? `${request.method} ${request.url}`)
      .split('.')
      .pop() as string;
    counts.set(operation, (counts.get(operation) ?? 0) + 1);
    forward(upstream, request, response);
  }, 0);
  return Object.assign(server, {
    counts,
    reset: () => counts.clear(),
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
  });
}
