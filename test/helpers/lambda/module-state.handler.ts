import { threadId } from 'node:worker_threads';
import type { Context } from 'aws-lambda';

// A handler whose answer shows its module state: how many invocations this environment has run, in which thread,
// and the time its context says is left. `sleepMs` holds the invocation; `fail` throws.
let invocations = 0;
const loadedAt = Date.now();

export async function handler(
  event: { sleepMs?: number; fail?: string },
  context: Context,
): Promise<{ invocations: number; threadId: number; loadedAt: number; remainingMs: number; fn: string }> {
  invocations++;
  if (event.fail) throw new Error(event.fail);
  const remainingMs = context.getRemainingTimeInMillis();
  if (event.sleepMs) await new Promise((resolve) => setTimeout(resolve, event.sleepMs));
  return { invocations, threadId, loadedAt, remainingMs, fn: context.functionName };
}
