import { AsyncLocalStorage } from 'node:async_hooks';

const workKind = new AsyncLocalStorage<string>();

/**
 * Runs `work` as a message of `kind` (a queue message's `kind`): the ATS pacer learns what each kind of message
 * costs in calls, where one process works several kinds (on one machine; on Lambda each function is its own).
 */
export function withWorkKind<T>(kind: string, work: () => T): T {
  return workKind.run(kind, work);
}

/** The kind of message being worked now; '' outside a worker. */
export function currentWorkKind(): string {
  return workKind.getStore() ?? '';
}
