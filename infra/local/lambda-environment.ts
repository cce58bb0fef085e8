import { parentPort, workerData } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import { deferralObserver } from '../../functions/_runtime/deferral';
import { faultInjection, SimulatedCrash } from '../../shared/pipeline/fault-injection';
import { recordAwsCalls, runAs } from './aws-calls';
import type { EnvironmentData, FromEnvironment, ToEnvironment } from './lambda-runtime';
import { errorMessage } from '../../shared/errors';

/**
 * One execution environment of a function, in its own worker thread: it imports the handler once (the cold
 * init) and keeps its module state between invocations, as Lambda keeps a warm environment; another environment
 * of the same function, or another function, shares nothing with it but the outside services.
 *
 * The local runner's seams reach the parent thread: the AWS calls made (for the IAM check), the deferrals (for the
 * queue watch) and, synchronously, whether the chaos run crashes the worker after a side effect.
 */
const data = workerData as EnvironmentData;
const port = parentPort;
const send = (message: FromEnvironment) => port?.postMessage(message);
type Handler = (event: unknown, context: Context) => Promise<unknown>;

/**
 * Runs the environment: its seams set, then the handler module `load` imports (the cold init), then one invocation per
 * message from the parent. The environment's bundle calls it with its handler (infra/local/function-bundle.ts).
 */
export async function runEnvironment(load: () => Promise<{ handler?: Handler }>): Promise<void> {
  if (!port) throw new Error('lambda-environment runs in a worker thread');
  if (data.recordAwsCalls) recordAwsCalls((call) => send({ type: 'aws-call', call }));
  deferralObserver.deferred = (message, delaySeconds, code) => send({ type: 'deferred', message, delaySeconds, code });
  const answer = new Int32Array(data.sideEffects);
  faultInjection.afterSideEffect = (point, key) => {
    // Asked only while the process has a crash seam: otherwise each side effect waited on a busy parent for nothing.
    if (Atomics.load(answer, 2) === 0) return;
    Atomics.store(answer, 0, 0);
    send({ type: 'side-effect', point, key });
    // The parent answers at once; the bound keeps a parent that stopped from holding the worker for ever.
    if (Atomics.wait(answer, 0, 0, 10_000) === 'timed-out') return;
    if (Atomics.load(answer, 1) === 1) throw new SimulatedCrash(point);
  };
  // A worker thread's process.env is its own copy: the function's variables reach no other environment.
  Object.assign(process.env, data.environment);
  const started = Date.now();
  const handler = (await load()).handler;
  if (typeof handler !== 'function') throw new Error(`${data.entry} exports no handler`);
  send({ type: 'ready', initMs: Date.now() - started });
  port.on('message', (message: ToEnvironment) => {
    void runAs(data.functionName, () => handler(message.event, context(message.requestId, message.deadline))).then(
      (result) => send({ type: 'result', requestId: message.requestId, result }),
      (error: unknown) =>
        send({ type: 'error', requestId: message.requestId, message: errorMessage(error) ?? String(error) }),
    );
  });
}

function context(requestId: string, deadline: number): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: data.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${data.functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${data.functionName}`,
    logStreamName: data.environmentId,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
