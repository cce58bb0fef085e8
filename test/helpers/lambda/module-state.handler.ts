import { threadId } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import { afterSideEffect } from '../../../shared/pipeline/fault-injection';

// A handler whose answer shows its module state: how many invocations this environment has run, in which thread,
// the time its context says is left, the environment variable `env` names and the node options it started with.
// `sleepMs` holds the invocation; `fail` throws; `sideEffect` passes the crash seam after a side effect.
let invocations = 0;
const loadedAt = Date.now();

export async function handler(
  event: { sleepMs?: number; fail?: string; env?: string; sideEffect?: boolean },
  context: Context,
): Promise<{
  invocations: number;
  threadId: number;
  loadedAt: number;
  remainingMs: number;
  fn: string;
  env?: string | undefined;
  execArgv: string[];
}> {
  invocations++;
  if (event.fail) throw new Error(event.fail);
  if (event.sideEffect) afterSideEffect('invite-emailed', 'a candidate');
  const remainingMs = context.getRemainingTimeInMillis();
  if (event.sleepMs) await new Promise((resolve) => setTimeout(resolve, event.sleepMs));
  const env = event.env ? process.env[event.env] : undefined;
  return { invocations, threadId, loadedAt, remainingMs, fn: context.functionName, env, execArgv: process.execArgv };
}
