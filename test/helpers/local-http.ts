import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen, readBody, type RunningServer } from '../../infra/local/sandbox/http-kit';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A scripted HTTP server on 127.0.0.1 that records what it receives. */
export async function startRecordingServer(
  respond: (request: RecordedRequest, response: ServerResponse) => void = (_r, response) => {
    response.writeHead(200).end('ok');
  },
): Promise<RunningServer & { received: RecordedRequest[] }> {
  const received: RecordedRequest[] = [];
  const record = async (request: IncomingMessage, response: ServerResponse) => {
    const body = (await readBody(request)).toString('utf8');
    const recorded = { method: request.method ?? 'GET', url: request.url ?? '/', headers: request.headers, body };
    received.push(recorded);
    respond(recorded, response);
  };
  // A request that breaks off mid-body closes its own socket instead of rejecting into nowhere.
  const server = await listen((request, response) => {
    record(request, response).catch(() => response.destroy());
  }, 0);
  return Object.assign(server, { received });
}

/** Polls `condition` every 25 ms until it holds or `timeoutMs` passes. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
