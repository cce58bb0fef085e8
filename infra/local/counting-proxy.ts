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

/** The queue an SQS request names: its `QueueUrl`'s last segment (`…/000000000000/report-events` → report-events). */
function queueOf(body: Buffer): string | undefined {
  try {
    const url = (JSON.parse(body.toString('utf8')) as { QueueUrl?: unknown }).QueueUrl;
    return typeof url === 'string' ? url.split('/').pop() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A pass-through proxy in front of a local AWS endpoint that counts requests by operation (the
 * `X-Amz-Target` header of the JSON protocols: `DynamoDB_20120810.PutItem`, `AmazonSQS.SendMessage`), and by
 * operation and what each names: for DynamoDB the tables (`byTable`, "UpdateItem applications"), for SQS the queue
 * (`byQueue`, "ReceiveMessage report-events").
 */
export async function startCountingProxy(target: string): Promise<
  RunningServer & {
    counts: Map<string, number>;
    byTable: Map<string, number>;
    byQueue: Map<string, number>;
    reset(): void;
    total(): number;
  }
> {
  const counts = new Map<string, number>();
  const byTable = new Map<string, number>();
  const byQueue = new Map<string, number>();
  const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  const upstream = new URL(target);
  const server = await listen((request, response) => {
    const amzTarget = String(request.headers['x-amz-target'] ?? '');
    const operation = String(amzTarget || `${request.method} ${request.url}`)
      .split('.')
      .pop() as string;
    add(counts, operation);
    const dynamo = amzTarget.startsWith('DynamoDB_');
    if (!dynamo && !amzTarget.startsWith('AmazonSQS.')) {
      forward(upstream, request, response);
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      // Named by the table's own part (prefix-applications → applications).
      if (dynamo) for (const table of tablesOf(body)) add(byTable, `${operation} ${table.split('-').pop()}`);
      const queue = dynamo ? undefined : queueOf(body);
      if (queue) add(byQueue, `${operation} ${queue}`);
      forward(upstream, request, response, body);
    });
  }, 0);
  return Object.assign(server, {
    counts,
    byTable,
    byQueue,
    reset: () => {
      counts.clear();
      byTable.clear();
      byQueue.clear();
    },
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
  });
}
