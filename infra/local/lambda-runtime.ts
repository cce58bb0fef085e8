import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import { deferralObserver } from '../../functions/_runtime/deferral';
import type { SideEffectPoint } from '../../shared/pipeline/fault-injection';
import { faultInjection } from '../../shared/pipeline/fault-injection';
import type { QueueMessage } from '../../shared/queue';
import { hasCode } from '../../shared/errors';
import { FUNCTION_ENTRIES, FUNCTION_ENVIRONMENT, type FunctionName } from '../aws/functions';
import type { AwsCall } from './aws-calls';
import { environmentBundle } from './function-bundle';

const ROOT = join(import.meta.dirname, '..', '..');

/** Node's options that load a module before the program: tsx's loader comes in through them. */
const PRELOAD = /^(-r|--require|--import|--loader|--experimental-loader)$/;
const PRELOAD_INLINE = /^(--require|--import|--loader|--experimental-loader)=(.*)$/;
/** tsx as a package or a path segment: `tsx`, `tsx/esm`, `…/node_modules/tsx/dist/loader.mjs`. */
const TSX = /(^|\/)tsx(\/|$)/;

/**
 * The node options an environment starts with: the process's, without the TypeScript loader a local run starts under
 * (tsx's preloads). An environment runs its bundle, plain JavaScript, as Lambda's runtime does; with the loader's
 * hooks, every module an environment loaded went through them, CPU a cold start took from every other function on the
 * machine. Undefined when nothing is to be left out: the environment then inherits the process's options as they are
 * (Node refuses V8 options given to a worker explicitly, and accepts them inherited).
 */
export function environmentExecArgv(execArgv: readonly string[]): string[] | undefined {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i] as string;
    if (PRELOAD.test(arg) && TSX.test(execArgv[i + 1] ?? '')) i++;
    else if (!TSX.test(PRELOAD_INLINE.exec(arg)?.[2] ?? '')) kept.push(arg);
  }
  return kept.length === execArgv.length ? undefined : kept;
}

/**
 * A worker thread for an environment, started with `execArgv`; where Node refuses one of those options in a worker (a
 * V8 option the process was started with), with the process's options inherited, loader and all.
 */
function startThread(url: URL, workerData: EnvironmentData, execArgv: string[] | undefined): Worker {
  if (!execArgv) return new Worker(url, { workerData });
  try {
    return new Worker(url, { workerData, execArgv });
  } catch (error) {
    if (!hasCode(error, 'ERR_WORKER_INVALID_EXEC_ARGV')) throw error;
    return new Worker(url, { workerData });
  }
}

/** What an execution environment is started with (infra/local/lambda-environment.ts). */
export interface EnvironmentData {
  functionName: FunctionName;
  environmentId: string;
  /** The handler module's path. */
  entry: string;
  /** The function's own environment variables (FUNCTION_ENVIRONMENT), over the process's. */
  environment: Record<string, string>;
  recordAwsCalls: boolean;
  /**
   * Three int32s for the synchronous side-effect question: [answered, crash, asked]. `asked` is set for each
   * invocation: 1 while the process has a crash seam (a chaos run), else the environment asks nothing.
   */
  sideEffects: SharedArrayBuffer;
}

export interface ToEnvironment {
  requestId: string;
  event: unknown;
  /** Epoch ms: the function's timeout from the start of this invocation. */
  deadline: number;
}

export type FromEnvironment =
  | { type: 'ready'; initMs: number }
  | { type: 'result'; requestId: string; result: unknown }
  | { type: 'error'; requestId: string; message: string }
  | { type: 'aws-call'; call: AwsCall }
  | { type: 'deferred'; message: QueueMessage; delaySeconds: number; code: string }
  | { type: 'side-effect'; point: SideEffectPoint; key: string };

export interface LocalFunctionStats {
  invocations: number;
  /** Environments started (each a cold init), and how long each init took. */
  coldStarts: number;
  initMs: number[];
  /** Invocations that ran past the function's timeout: their environment was discarded, as Lambda does. */
  timeouts: number;
  /** The invocations' durations added up, from the event handed over to the answer or the timeout (Lambda bills it). */
  busyMs: number;
  /** Environments alive now. */
  readonly environments: number;
  /** Side effects the environments asked the process's crash seam about: only while it has one (a chaos run). */
  sideEffectQuestions: number;
}

/** One function of the stack, run as Lambda runs it: in execution environments that share no module state. */
export interface LocalFunction {
  name: FunctionName;
  stats: LocalFunctionStats;
  /** Runs one invocation with `budgetMs` from its start (after any cold init), in a free environment. */
  invoke(event: unknown, budgetMs: number): Promise<unknown>;
  stop(): Promise<void>;
}

export interface LocalFunctionOptions {
  name: FunctionName;
  /** Environments at most: the concurrency the stack gives the function; more invocations wait for one. */
  maxEnvironments: number;
  /** Where the AWS calls the function makes go, when the IAM check records them. */
  awsCalls?: AwsCall[] | undefined;
  /** Another handler module than the function's own (tests of the runtime itself). */
  entry?: string;
  /** Environment variables over the function's own (FUNCTION_ENVIRONMENT): a local run's settings. */
  environment?: Record<string, string> | undefined;
}

interface Environment {
  id: string;
  worker: Worker;
  ready: Promise<void>;
  busy: boolean;
  /** The side-effect question's answer, shared with the environment (EnvironmentData.sideEffects). */
  answer: Int32Array;
  pending?: { requestId: string; settle: (error: Error | undefined, result?: unknown) => void };
}

/** The longest an environment's cold init may take before it is discarded and the invocation fails (retried). */
const INIT_LIMIT_MS = 30_000;

/**
 * A function's execution environments on one machine: a worker thread each, started cold when none is free (up to
 * `maxEnvironments`), reused while warm, discarded when an invocation times out or the environment fails. The
 * environments see the process's environment variables as they were when each started, with the function's own
 * (FUNCTION_ENVIRONMENT) over them.
 */
export function startLocalFunction(options: LocalFunctionOptions): LocalFunction {
  const entry = options.entry ?? join(ROOT, FUNCTION_ENTRIES[options.name]);
  const bundle = environmentBundle(entry);
  const environments: Environment[] = [];
  const waiting: ((environment: Environment) => void)[] = [];
  const stats: LocalFunctionStats = {
    invocations: 0,
    coldStarts: 0,
    initMs: [],
    timeouts: 0,
    busyMs: 0,
    sideEffectQuestions: 0,
    get environments() {
      return environments.length;
    },
  };
  let stopped = false;

  function discard(environment: Environment, reason: Error): void {
    const index = environments.indexOf(environment);
    if (index >= 0) environments.splice(index, 1);
    environment.pending?.settle(reason);
    void environment.worker.terminate();
    // A waiting invocation gets a new environment in the place of this one.
    const next = waiting.shift();
    if (next && !stopped) next(start());
  }

  function start(): Environment {
    const sideEffects = new SharedArrayBuffer(12);
    const answer = new Int32Array(sideEffects);
    const id = `${options.name}-${randomUUID().slice(0, 8)}`;
    const data: EnvironmentData = {
      functionName: options.name,
      environmentId: id,
      entry,
      environment: { ...FUNCTION_ENVIRONMENT[options.name], ...options.environment },
      recordAwsCalls: options.awsCalls !== undefined,
      sideEffects,
    };
    const worker = startThread(new URL(bundle), data, environmentExecArgv(process.execArgv));
    let ready!: () => void;
    let failed!: (error: Error) => void;
    const environment: Environment = {
      id,
      worker,
      busy: true,
      answer,
      ready: new Promise<void>((resolve, reject) => {
        ready = resolve;
        failed = reject;
      }),
    };
    environment.ready.catch(() => undefined);
    // Lambda gives an environment's init 10 s; a busy machine here gets 30 s.
    const initLimit = setTimeout(() => {
      failed(new Error(`${options.name}: its environment did not start within ${INIT_LIMIT_MS} ms`));
      discard(environment, new Error(`${options.name}: its environment did not start`));
    }, INIT_LIMIT_MS);
    environment.ready.then(
      () => clearTimeout(initLimit),
      () => clearTimeout(initLimit),
    );
    stats.coldStarts++;
    environments.push(environment);
    worker.on('message', (message: FromEnvironment) => {
      switch (message.type) {
        case 'ready':
          stats.initMs.push(message.initMs);
          return ready();
        case 'result':
        case 'error':
          if (environment.pending?.requestId !== message.requestId) return;
          return environment.pending.settle(
            message.type === 'error' ? new Error(message.message) : undefined,
            message.type === 'result' ? message.result : undefined,
          );
        case 'aws-call':
          options.awsCalls?.push(message.call);
          return;
        case 'deferred':
          deferralObserver.deferred?.(message.message, message.delaySeconds, message.code);
          return;
        case 'side-effect': {
          stats.sideEffectQuestions++;
          let crash = 0;
          try {
            faultInjection.afterSideEffect?.(message.point, message.key);
          } catch {
            crash = 1;
          }
          Atomics.store(answer, 1, crash);
          Atomics.store(answer, 0, 1);
          Atomics.notify(answer, 0);
        }
      }
    });
    worker.on('error', (error) => {
      failed(error);
      discard(environment, new Error(`${options.name}: its environment failed: ${error.message}`));
    });
    worker.on('exit', () => {
      failed(new Error(`${options.name}: its environment exited`));
      if (environments.includes(environment)) discard(environment, new Error(`${options.name}: environment exited`));
    });
    return environment;
  }

  function acquire(): Promise<Environment> {
    if (stopped) return Promise.reject(new Error(`${options.name} is stopped`));
    const idle = environments.find((e) => !e.busy);
    if (idle) {
      idle.busy = true;
      return Promise.resolve(idle);
    }
    if (environments.length < options.maxEnvironments) return Promise.resolve(start());
    return new Promise((resolve) => waiting.push(resolve));
  }

  function release(environment: Environment): void {
    environment.pending = undefined;
    const next = waiting.shift();
    if (next) next(environment);
    else environment.busy = false;
  }

  return {
    name: options.name,
    stats,
    async invoke(event, budgetMs) {
      const environment = await acquire();
      await environment.ready;
      stats.invocations++;
      const requestId = randomUUID();
      const began = Date.now();
      return new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => {
          stats.timeouts++;
          discard(environment, new Error(`${options.name} timed out after ${budgetMs} ms`));
        }, budgetMs);
        environment.pending = {
          requestId,
          settle: (error, result) => {
            clearTimeout(timer);
            stats.busyMs += Date.now() - began;
            if (environments.includes(environment)) release(environment);
            if (error) reject(error);
            else resolve(result);
          },
        };
        Atomics.store(environment.answer, 2, faultInjection.afterSideEffect ? 1 : 0);
        const message: ToEnvironment = { requestId, event, deadline: Date.now() + budgetMs };
        environment.worker.postMessage(message);
      });
    },
    async stop() {
      stopped = true;
      waiting.length = 0;
      await Promise.all(environments.splice(0).map((e) => e.worker.terminate()));
    },
  };
}

/** A handler with the signature Lambda calls, running each invocation in one of the function's environments. */
export function asHandler<E, R>(fn: LocalFunction): (event: E, context: Context) => Promise<R> {
  return (event, context) => fn.invoke(event, context.getRemainingTimeInMillis()) as Promise<R>;
}
