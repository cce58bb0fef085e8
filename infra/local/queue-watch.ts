/**
 * What the local event sources and the workers' deferrals saw of each message (by its `enqueueId`, which a deferred
 * copy keeps): so a run that does not drain can say what is left on each queue and why, not only how many.
 * Messages enqueued and never received yet are not seen here; the queues' own counts stand for them.
 */
export interface QueueWatch {
  /** A record handed to a worker. */
  received(body: string, receiveCount: number): void;
  /** The worker's answer for it: acknowledged (done, or deferred as a copy) or failed (back after the timeout). */
  handled(body: string, acknowledged: boolean): void;
  /** A worker sent a copy back to wait `delaySeconds`, for the reason `code`. */
  deferred(message: WatchedMessage, delaySeconds: number, code: string): void;
  /** Distinct messages (enqueue ids) of `kind` a worker received, those `match` accepts when given. */
  distinctReceived(kind: string, match?: (message: Record<string, unknown>) => boolean): number;
  /** Messages whose last copy was sent back to wait, and has not been received since. */
  waiting(): WatchedMessage[];
  /** When the last of those copies is due back; undefined when none waits. */
  lastDueAt(): number | undefined;
  /** One line per group of messages not finished: kind, connection, state and reason, with a count. */
  describeUnfinished(): string[];
}

export interface WatchedMessage {
  kind: string;
  connectionId: string;
  enqueueId?: string | undefined;
  deferrals?: number | undefined;
}

type Entry = WatchedMessage & {
  state: 'in-flight' | 'failed' | 'deferred';
  reason?: string;
  receiveCount?: number;
  dueAt?: number;
};

function parse(body: string): WatchedMessage | undefined {
  try {
    const message = JSON.parse(body) as Partial<WatchedMessage>;
    return typeof message.kind === 'string' && typeof message.connectionId === 'string'
      ? (message as WatchedMessage)
      : undefined;
  } catch {
    return undefined;
  }
}

export function createQueueWatch(now: () => number = Date.now): QueueWatch {
  const entries = new Map<string, Entry>();
  /**
   * Copies sent back to wait, by message and deferral count: kept apart from the message's own entry, so a copy
   * outlives the original coming back (its worker stopped before acknowledging it) and being finished.
   */
  const copies = new Map<string, Entry>();
  const received = new Map<string, Map<string, Record<string, unknown>>>();
  const keyOf = (message: WatchedMessage) => message.enqueueId ?? `${message.kind}#${message.connectionId}`;
  const copyKey = (message: WatchedMessage) => `${keyOf(message)}#${message.deferrals ?? 0}`;
  return {
    received(body, receiveCount) {
      const message = parse(body);
      if (!message) return;
      const key = keyOf(message);
      copies.delete(copyKey(message));
      entries.set(key, { ...message, state: 'in-flight', receiveCount });
      const kind = received.get(message.kind) ?? new Map<string, Record<string, unknown>>();
      received.set(message.kind, kind.set(key, message as unknown as Record<string, unknown>));
    },
    handled(body, acknowledged) {
      const message = parse(body);
      const entry = message && entries.get(keyOf(message));
      // A deferred message is acknowledged too: its copy (kept apart) is what is left.
      if (!message || !entry) return;
      // Only what is unfinished is kept: a stack that serves for hours holds no record of finished messages.
      if (acknowledged) entries.delete(keyOf(message));
      else entry.state = 'failed';
    },
    deferred(message, delaySeconds, code) {
      copies.set(copyKey(message), {
        ...message,
        state: 'deferred',
        reason: code,
        dueAt: now() + delaySeconds * 1000,
      });
    },
    distinctReceived: (kind, match = () => true) => [...(received.get(kind)?.values() ?? [])].filter(match).length,
    waiting: () => [...copies.values()],
    lastDueAt: () => {
      const due = [...copies.values()].map((copy) => copy.dueAt ?? 0);
      return due.length ? Math.max(...due) : undefined;
    },
    describeUnfinished() {
      const groups = new Map<string, { count: number; maxDeferrals: number; nextDueAt: number | undefined }>();
      for (const entry of [...entries.values(), ...copies.values()]) {
        const why =
          entry.state === 'deferred'
            ? `deferred (${entry.reason})`
            : entry.state === 'failed'
              ? `failed, back after the visibility timeout (received ${entry.receiveCount ?? '?'}×)`
              : 'in a worker now';
        const key = `${entry.kind} of ${entry.connectionId}: ${why}`;
        const group = groups.get(key) ?? { count: 0, maxDeferrals: 0, nextDueAt: undefined };
        group.count++;
        group.maxDeferrals = Math.max(group.maxDeferrals, entry.deferrals ?? 0);
        if (entry.dueAt !== undefined) group.nextDueAt = Math.min(group.nextDueAt ?? entry.dueAt, entry.dueAt);
        groups.set(key, group);
      }
      return [...groups.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(
          ([key, g]) =>
            `${g.count} × ${key}; up to ${g.maxDeferrals} deferrals` +
            (g.nextDueAt !== undefined
              ? `; the next back in ${Math.max(0, Math.round((g.nextDueAt - now()) / 1000))} s`
              : ''),
        );
    },
  };
}
