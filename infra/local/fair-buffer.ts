import type { Message } from '@aws-sdk/client-sqs';

/**
 * SQS fair queues, as the local event source models them (Amazon SQS Developer Guide, "Amazon SQS fair queues"):
 * when one tenant (a message's `MessageGroupId` on a standard queue) holds a disproportionate share of the messages
 * in flight, SQS delivers the other tenants' messages first, so a quiet tenant's messages do not wait behind a noisy
 * one's backlog. The local emulator delivers in order; the event source reads ahead into this buffer (the messages
 * stay in flight on the emulator, as they would wait in the queue) and forms each batch from the tenants with the
 * fewest messages in the function's invocations, oldest first within a tenant.
 */
export interface FairBuffer {
  readonly size: number;
  add(messages: readonly Message[]): void;
  /** Up to `count` messages, fairly; they count as in flight for their tenants until `done`. */
  take(count: number): Message[];
  done(messages: readonly Message[]): void;
}

interface Buffered {
  message: Message;
  tenant: string;
  at: number;
  seq: number;
}

/**
 * `tenantOf` reads a message's tenant from its body. A message buffered longer than `maxWaitMs` goes first whatever
 * its tenant, so none outlives its visibility timeout in the buffer.
 */
export function createFairBuffer(
  tenantOf: (body: string) => string,
  maxWaitMs: number,
  now: () => number = Date.now,
): FairBuffer {
  let buffered: Buffered[] = [];
  const inFlight = new Map<string, number>();
  const tenants = new Map<Message, string>();
  let seq = 0;
  const load = (tenant: string) => inFlight.get(tenant) ?? 0;
  return {
    get size() {
      return buffered.length;
    },
    add(messages) {
      for (const message of messages) {
        const tenant = tenantOf(message.Body ?? '');
        buffered.push({ message, tenant, at: now(), seq: seq++ });
      }
    },
    take(count) {
      const taken: Message[] = [];
      const aged = now() - maxWaitMs;
      const rank = (b: Buffered) => [b.at <= aged ? 0 : 1, load(b.tenant), b.seq] as const;
      const before = (a: Buffered, b: Buffered) => {
        const [x, y] = [rank(a), rank(b)];
        return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
      };
      while (taken.length < count && buffered.length) {
        const best = buffered.reduce((first, item) => (before(item, first) < 0 ? item : first));
        buffered = buffered.filter((item) => item !== best);
        inFlight.set(best.tenant, load(best.tenant) + 1);
        tenants.set(best.message, best.tenant);
        taken.push(best.message);
      }
      return taken;
    },
    done(messages) {
      for (const message of messages) {
        const tenant = tenants.get(message);
        if (tenant === undefined) continue;
        tenants.delete(message);
        inFlight.set(tenant, load(tenant) - 1);
      }
    },
  };
}

/**
 * The tenant of one of the connector's messages: its connection, as the publishers name it in `MessageGroupId`
 * (shared/queue/fair-queue.ts). A body that names none is a tenant of its own kind, served like any other.
 */
export function connectionOfBody(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    const id = typeof parsed === 'object' && parsed !== null ? (parsed as { connectionId?: unknown }).connectionId : '';
    return typeof id === 'string' ? id : '';
  } catch {
    return '';
  }
}
