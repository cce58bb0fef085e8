import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { invitedInterviewId, startTestStack } from '../../helpers/local-stack';

const WORK_DIR = `.local/test-raw-socket-${process.pid}`;
const SEED = Number(process.env.FUZZ_SEED ?? 424242);

/**
 * Sends raw bytes to 127.0.0.1:port and returns the status line's code, or 0 when the server closed the socket
 * without one. `abortAfterWrite` breaks the connection off right after writing, as a client dying mid-upload.
 */
function rawRequest(port: number, bytes: string | Buffer, abortAfterWrite = false): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (status: number) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(status);
    };
    const timer = setTimeout(() => done(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)), 3_000);
    socket.on('connect', () => {
      socket.write(bytes);
      if (abortAfterWrite) setTimeout(() => done(0), 20);
    });
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (status) done(Number(status[1]));
    });
    socket.on('error', () => done(0));
    socket.on('close', () => done(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
  });
}

const request = (method: string, target: string, headers: string[] = [], body = '') =>
  [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headers, '', body].join('\r\n');

/** Cases Node's parser lets through to the handler, and cases it answers itself; none may end the process. */
const HOSTILE: { name: string; bytes: (path: string) => string; abort?: boolean }[] = [
  { name: 'a bad percent-encoding in a path parameter', bytes: (p) => request('POST', `${p}/%E0%A4%A`) },
  { name: 'a lone percent sign', bytes: (p) => request('GET', `${p}/%`) },
  { name: 'an absolute-form target that is no URL', bytes: () => request('GET', 'http://[::1') },
  { name: 'an absolute-form target with a bad port', bytes: () => request('POST', 'http://127.0.0.1:99999999/x') },
  {
    name: 'an upload aborted mid-body',
    bytes: (p) => request('POST', `${p}/x`, ['Content-Type: application/json', 'Content-Length: 100000'], '{"a":'),
    abort: true,
  },
  { name: 'an over-long header value', bytes: (p) => request('GET', p, [`X-Long: ${'a'.repeat(20_000)}`]) },
  { name: 'a request line that is not HTTP', bytes: () => '\u0000\u0001 not http at all\r\n\r\n' },
];

describe('Property: nothing a socket can send stops the local gateway or a sandbox', () => {
  let stack: LocalStack;
  let targets: { name: string; port: number; path: string }[];

  beforeAll(async () => {
    stack = await startTestStack(WORK_DIR, { logLevel: process.env.FUZZ_LOG_LEVEL ?? 'SILENT' });
    const port = (url: string) => Number(new URL(url).port);
    const greenhouse = stack.connections.find((c) => c.ats === 'greenhouse')!;
    targets = [
      { name: 'gateway', port: port(stack.gatewayUrl), path: `/webhooks/ats/${greenhouse.id}` },
      { name: 'interview-service sandbox', port: port(stack.interview.url), path: '/interview' },
      ...Object.entries(stack.ats).map(([kind, view]) => ({
        name: `${kind} sandbox`,
        port: port(view.url),
        path: kind === 'greenhouse' ? '/v3/applications' : '/v1/opportunities',
      })),
    ];
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(WORK_DIR, { recursive: true, force: true });
  });

  it.each(HOSTILE.map((c) => [c.name, c] as const))('%s: answered 4xx or closed, every server', async (_n, hostile) => {
    for (const target of targets) {
      const status = await rawRequest(target.port, hostile.bytes(target.path), hostile.abort);
      // 0: the server closed the socket; any 4xx is an answer (the interview sandbox's gateway answers 403).
      expect(status === 0 || (status >= 400 && status < 500)).toBe(true);
    }
  });

  it('random paths with percent signs and odd bytes never get a 5xx', async () => {
    const segment = fc.stringMatching(/^[%A-Za-z0-9\-._~!$&'()*+,;=:@[\]{}|\\^`"<> ]{0,12}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.nat(targets.length - 1),
        async (parts, i) => {
          const target = targets[i]!;
          const path = `/${parts.map((p) => p.replaceAll(' ', '%20').replaceAll('"', '%22')).join('/')}`;
          const status = await rawRequest(target.port, request('POST', path, ['Content-Length: 0']));
          expect(status === 0 || (status >= 200 && status < 500)).toBe(true);
        },
      ),
      { numRuns: 150, seed: SEED },
    );
  });

  it('is still serving afterwards: health, sandbox state, and a candidate invited end to end', async () => {
    expect((await fetch(`${stack.gatewayUrl}/health`)).status).toBe(200);
    for (const view of Object.values(stack.ats)) expect((await fetch(`${view.url}/_sandbox/state`)).status).toBe(200);
    const email = `after-fuzz-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = stack.ats.greenhouse.addCandidate({ firstName: 'Fay', lastName: 'After', email });
    await stack.ats.greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    await invitedInterviewId(stack, email);
    await stack.waitForQuiet(60_000);
    expect(await stack.dlqDepths()).toEqual({ stage: 0, report: 0 });
  });
});
