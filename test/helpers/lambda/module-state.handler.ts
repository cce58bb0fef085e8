import { threadId } from 'node:worker_threads';
import type { Context } from 'aws-lambda';

// A handler whose answer shows its module state: how many invocations this environment has run, in which thread,
// the time its context says is left, and the environment variable `env` names. `sleepMs` holds the invocation;
// `fail` throws.
let invocations = 0;
const loadedAt = Date.now();

export async function handler(
  event: { sleepMs?: number; fail?: string; env?: string },
  context: Context,
): Promise<{
  invocations: number;
  threadId: number;
  loadedAt: number;
  remainingMs: number;
  fn: string;
  env?: string | undefined;
}> {
  invocations++;
  if (event.fail) throw new Error(event.fail);
  const remainingMs = context.getRemainingTimeInMillis();
  if (event.sleepMs) await new Promise((resolve) => setTimeout(resolve, event.sleepMs));
  const env = event.env ? process.env[event.env] : undefined;
  return { invocations, threadId, loadedAt, remainingMs, fn: context.functionName, env };
}
