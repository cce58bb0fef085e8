import { AsyncLocalStorage } from 'node:async_hooks';

const deadline = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `work` under the worker's deadline: every AWS SDK call it makes (the mapping store, the queue, SES) is
 * aborted when `signal` fires, as the outside APIs' calls are, so nothing runs past the invocation's end and the
 * message is retried whole.
 */
export function withDeadline<T>(signal: AbortSignal, work: () => T): T {
  return deadline.run(signal, work);
}

/** The deadline of the work running now, for `client.send(command, { abortSignal })`; none outside a worker. */
export function currentDeadline(): AbortSignal | undefined {
  return deadline.getStore();
}
