import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Keys every log line of one invocation, or of one message within it, carries: the Lambda context (the keys
 * Powertools' `addContext` writes: `function_name`, `function_request_id`, `cold_start`) and the delivery's
 * `correlation_id`. Kept in AsyncLocalStorage rather than on the shared logger, because the local runner runs
 * several invocations of one function at once in one process, and a logger-wide key would mix them up.
 */
const store = new AsyncLocalStorage<Readonly<Record<string, unknown>>>();

/** Runs `work` with `keys` added to every log line written inside it (nested calls add to the outer keys). */
export function withLogContext<T>(keys: Readonly<Record<string, unknown>>, work: () => T): T {
  return store.run({ ...store.getStore(), ...keys }, work);
}

export function logContext(): Readonly<Record<string, unknown>> {
  return store.getStore() ?? {};
}

/** The correlation id of the delivery being handled, to hand on with the messages it enqueues. */
export function currentCorrelationId(): string | undefined {
  const id = store.getStore()?.correlation_id;
  return typeof id === 'string' ? id : undefined;
}

const warm = new Set<string>();

/** The Lambda context's keys for a log line; the first invocation of each function in a process is its cold start. */
export function invocationKeys(context: { functionName?: string; awsRequestId?: string } | undefined) {
  const name = context?.functionName ?? 'unknown';
  const coldStart = !warm.has(name);
  warm.add(name);
  return { function_name: name, function_request_id: context?.awsRequestId, cold_start: coldStart };
}
