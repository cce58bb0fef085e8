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

/** The tables a DynamoDB request names (`TableName`, a batch's `RequestItems`, a transaction's items). */
function tablesOf(body: Buffer): string[] {
  try {
    const request = JSON.parse(body.toString('utf8')) as {
      TableName?: string;
      RequestItems?: Record<string, unknown>;
      TransactItems?: Record<string, { TableName?: string }>[];
    };
    const named = [
      request.TableName,
      ...Object.keys(request.RequestItems ?? {}),
      ...(request.TransactItems ?? []).flatMap((item) => Object.values(item).map((part) => part.TableName)),
    ];
    return [...new Set(named.filter((t): t is string => typeof t === 'string'))];
  } catch {
    return [];
  }
}

/**
 * A pass-through proxy in front of a local AWS endpoint that counts requests by operation (the
 * `X-Amz-Target` header of the JSON protocols: `DynamoDB_20120810.PutItem`, `AmazonSQS.SendMessage`), and, for
 * DynamoDB, by operation and the tables each names (`byTable`, "UpdateItem applications").
 */
export async function startCountingProxy(target: string): Promise<
  RunningServer & {
    counts: Map<string, number>;
    byTable: Map<string, number>;
    reset(): void;
    total(): number;
  }
> {
  const counts = new Map<string, number>();
  const byTable = new Map<string, number>();
  const upstream = new URL(target);
  const server = await listen((request, response) => {
    const operation = String(request.headers['x-amz-target'] ?? `${request.method} ${request.url}`)
      .split('.')
      .pop() as string;
    counts.set(operation, (counts.get(operation) ?? 0) + 1);
    if (!String(request.headers['x-amz-target'] ?? '').startsWith('DynamoDB_')) {
      forward(upstream, request, response);
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      // Named by the table's own part (prefix-applications → applications).
      for (const table of tablesOf(body)) {
        const key = `${operation} ${table.split('-').pop()}`;
        byTable.set(key, (byTable.get(key) ?? 0) + 1);
      }
      forward(upstream, request, response, body);
    });
  }, 0);
  return Object.assign(server, {
    counts,
    byTable,
    reset: () => {
      counts.clear();
      byTable.clear();
    },
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
  });
}
