import type { ConnectionAdminStore } from '../../shared/admin/connection-admin';
import type { ConsoleActivity, ConsoleDependencies, StageSource } from '../../shared/admin/console-api';
import type { DeadLetter, QueueName } from '../../shared/admin/dead-letters';
import type { StoredConnection } from '../../shared/config';
import type { ActivityDay, ConnectLink, DoctorResult, TimelineEntry } from '../../shared/mapping/activity.records';
import {
  type ConnectionAudit,
  cursorId,
  encodeCursor,
  VersionConflictError,
} from '../../shared/mapping/connections.records';
import type { ApplicationRecord } from '../../shared/pipeline/records';
import { connectionDocument } from './connections';
import { NOW } from './pipeline-records';

/** The connections table in memory, with the same version rule (a write at a version it no longer has is refused). */
export function memoryConnectionStore(): ConnectionAdminStore & { audits: ConnectionAudit[] } {
  const items = new Map<string, StoredConnection>();
  const audits: ConnectionAudit[] = [];
  // Each connection made gets its own time, as the table's: one deleted and made again has another.
  let made = 0;
  return {
    audits,
    async read(id) {
      return items.get(id);
    },
    async page(limit, cursor) {
      const all = [...items.values()];
      // Cursors as the table's store gives them (connections.records.ts).
      const after = cursor === undefined ? undefined : cursorId(cursor);
      const start = after ? all.findIndex((c) => c.id === after) + 1 : 0;
      const connections = all.slice(start, start + limit);
      const last = connections.at(-1)?.id;
      return { connections, cursor: start + limit < all.length && last ? encodeCursor(last) : undefined };
    },
    async write(id, next, change, current) {
      const now = items.get(id);
      if (change.createOnly ? now : change.expectedVersion !== undefined && now?.version !== change.expectedVersion)
        throw new VersionConflictError(id, now?.version);
      const version = (current?.version ?? 0) + 1;
      const createdAt = current?.createdAt ?? NOW + made++;
      const stored = {
        id,
        document: next.document,
        enabled: next.enabled,
        version,
        createdAt,
        updatedAt: 1,
        updatedBy: 'x',
      };
      items.set(id, stored);
      audits.push({
        connectionId: id,
        at: String(audits.length),
        principal: change.principal,
        action: change.action,
        changed: next.changed,
        version,
      });
      return stored;
    },
    async remove(current, change) {
      // As the table's condition: the delete holds only at the version the caller read.
      const now = items.get(current.id);
      if (change.expectedVersion !== undefined && now?.version !== change.expectedVersion)
        throw new VersionConflictError(current.id, now?.version);
      items.delete(current.id);
    },
    async audit(id) {
      return audits.filter((a) => a.connectionId === id);
    },
  };
}

/** The connections' secrets in memory, counting the reads (a refused request reads none). */
export function memorySecrets(initial: Record<string, Record<string, unknown>> = {}) {
  const values = new Map(Object.entries(initial));
  const calls = { reads: 0, writes: 0 };
  return {
    values,
    calls,
    async read(ref: string): Promise<unknown> {
      calls.reads++;
      return values.get(ref);
    },
    async write(ref: string, value: Record<string, unknown>): Promise<void> {
      calls.writes++;
      values.set(ref, value);
    },
  };
}

/** The activity table in memory, with DynamoActivity's rules for links (unused, unexpired, spent once). */
export function memoryActivity() {
  const days: ActivityDay[] = [];
  const doctorResults = new Map<string, DoctorResult>();
  const entries: TimelineEntry[] = [];
  const links = new Map<string, ConnectLink>();
  /** Each connection's current link, as DynamoActivity keeps it (`linkof#<connection>`). */
  const current = new Map<string, string>();
  const live = (hash: string, now: number) => {
    const link = links.get(hash);
    return link && link.usedAt === undefined && link.validUntil > now ? link : undefined;
  };
  const activity: ConsoleActivity = {
    async days(ids, day) {
      return days.filter((d) => ids.includes(d.connectionId) && d.day === day);
    },
    async doctors(ids) {
      return ids.flatMap((id) => doctorResults.get(id) ?? []);
    },
    async putDoctor(result) {
      doctorResults.set(result.connectionId, result);
    },
    async timeline(connectionId, atsApplicationId) {
      return entries
        .filter((e) => e.connectionId === connectionId && e.atsApplicationId === atsApplicationId)
        .sort((a, b) => a.at - b.at);
    },
    async addTimeline(added) {
      entries.push(...added);
    },
    async putLink(hash, link) {
      links.set(hash, link);
      const replaced = current.get(link.connectionId);
      current.set(link.connectionId, hash);
      return replaced;
    },
    async link(hash, now) {
      return live(hash, now);
    },
    async useLink(hash, now) {
      const link = live(hash, now);
      if (!link) return false;
      links.set(hash, { ...link, usedAt: now });
      return true;
    },
  };
  return { ...activity, dayRows: days, doctorResults, entries, links };
}

/** The operators' audit as the console keeps it: timeline entries under `(operators)`. */
export const operatorsAudit = (entries: readonly TimelineEntry[]): string[] =>
  entries.filter((e) => e.connectionId === '(operators)').map((e) => e.detail);

/**
 * The dead-letter queues as the console asks of them; each queue's messages and counts set by the test. As SQS, a
 * peek hides what it read for a moment, and the count (answered after a round trip) leaves out what is hidden.
 */
export function fakeDeadLetters(queues: Partial<Record<QueueName, DeadLetter[]>> = {}) {
  const held = { stage: [...(queues.stage ?? [])], report: [...(queues.report ?? [])] };
  const calls: { redrive: [QueueName, number][]; retry: [QueueName, string][] } = { redrive: [], retry: [] };
  const hidden = new Set<DeadLetter>();
  return {
    held,
    calls,
    async count(queue: QueueName) {
      await Promise.resolve();
      return held[queue].filter((m) => !hidden.has(m)).length;
    },
    async peek(queue: QueueName) {
      const read = held[queue].filter((m) => !hidden.has(m));
      for (const m of read) hidden.add(m);
      setTimeout(() => {
        for (const m of read) hidden.delete(m);
      }, 5);
      return read;
    },
    async redrive(queue: QueueName, expected: number) {
      calls.redrive.push([queue, expected]);
      const count = held[queue].length;
      return { started: count === expected, count };
    },
    async redriveStatus(_queue: QueueName) {
      return undefined;
    },
    async retry(queue: QueueName, messageId: string) {
      calls.retry.push([queue, messageId]);
      const index = held[queue].findIndex((m) => m.messageId === messageId);
      if (index < 0) return false;
      held[queue].splice(index, 1);
      return true;
    },
  };
}

export function deadLetter(overrides: Partial<DeadLetter> = {}): DeadLetter {
  return {
    messageId: 'm-1',
    kind: 'stage-entered',
    connectionId: 'acme-greenhouse',
    atsApplicationId: '4401',
    receives: 5,
    sentAt: NOW - 3_600_000,
    ...overrides,
  };
}

/** The console's dependencies, every one in memory: the test seeds the connections and sets what it looks at. */
export function consoleFakes(
  options: {
    secrets?: Record<string, Record<string, unknown>>;
    applications?: ApplicationRecord[];
    deadLetters?: Partial<Record<QueueName, DeadLetter[]>>;
    stageSource?: StageSource;
    now?: number;
  } = {},
) {
  const store = memoryConnectionStore();
  const secrets = memorySecrets(options.secrets);
  const activity = memoryActivity();
  const deadLetters = fakeDeadLetters(options.deadLetters);
  const backlogs = new Map<string, number>();
  const now = options.now ?? NOW;
  const applications = options.applications ?? [];
  const deps: ConsoleDependencies = {
    admin: { store, secrets, secretsPrefix: 'connector/' },
    activity,
    applications: {
      async findApplicationsByAtsId(connectionId, atsApplicationId) {
        return applications.filter((a) => a.connectionId === connectionId && a.atsApplicationId === atsApplicationId);
      },
    },
    backlogUntil: async (id) => backlogs.get(id),
    deadLetters,
    doctor: async () => [
      { status: 'pass', what: 'the ATS answers' },
      { status: 'fail', what: 'no webhook', fix: 'register it' },
    ],
    stages: async () =>
      options.stageSource ?? {
        listJobs: async () => [{ id: '3301', name: 'Engineer' }],
        listStages: async () => [{ id: '9001', name: 'AI Interview' }],
      },
    now: () => now,
  };
  /** Stores a connection as the admin API would have created it (version 1). */
  const seed = async (overrides: Record<string, unknown> = {}) => {
    const document = { ...connectionDocument().connections[0], ...overrides } as { id: string };
    const change = { principal: 'seed', action: 'create' as const, createOnly: true };
    return store.write(document.id, { document, enabled: true, changed: ['*'] }, change);
  };
  return { deps, store, secrets, activity, deadLetters, backlogs, seed, now };
}
