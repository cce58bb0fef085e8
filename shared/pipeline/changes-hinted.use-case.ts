import { randomUUID } from 'node:crypto';
import type { ChangedApplication } from '../ats/port';
import type { ApplicationChangedMessage, StageEnteredMessage } from '../queue/messages.schema';
import { httpStatus } from '../errors';
import { mayMatchTriggers } from './trigger-matching';
import type { PipelineDependencies } from './ports';

/** Where an application stood at the connector's last read of a synced copy (Kombo): its stage, entries, exit. */
export interface SeenApplication {
  stageKey?: string | undefined;
  /** How many times it entered a stage the connector saw: the next entry's delivery is numbered after it. */
  entries: number;
  exit?: string | undefined;
}

/**
 * Where a read the page bound stopped left off: the moment it read changes from, its next page, and when the first
 * read of the chain began (the mark once the chain reads to the end).
 */
export interface ResumePoint {
  since: number;
  cursor: string;
  startedAt: number;
}

/** What the read of changed applications keeps between runs (shared/mapping/seen-changes.records.ts). */
export interface SeenChanges {
  /** The latest change the connector read, in the synced copy's time; undefined before the first read. */
  watermark(connectionId: string): Promise<number | undefined>;
  advanceWatermark(connectionId: string, to: number): Promise<void>;
  /** Where the last read stopped short, for the next to go on from; undefined when it read to the end. */
  resumePoint(connectionId: string): Promise<ResumePoint | undefined>;
  /** Keeps where this read stopped (undefined: it read to the end, and the next starts from the mark). */
  saveResumePoint(connectionId: string, point: ResumePoint | undefined): Promise<void>;
  read(connectionId: string, atsApplicationIds: readonly string[]): Promise<Map<string, SeenApplication>>;
  /** Records where it stands now, only if it still stands where `before` says: false when another read did first. */
  record(
    connectionId: string,
    atsApplicationId: string,
    now: SeenApplication,
    before: SeenApplication,
  ): Promise<boolean>;
}

export interface HintedChangesDependencies extends Pick<PipelineDependencies, 'contextFor' | 'logger' | 'now'> {
  seen: SeenChanges;
  /** Puts the stage entries and exits found on the stage-events queue. */
  enqueue(messages: (StageEnteredMessage | ApplicationChangedMessage)[]): Promise<void>;
  /** Takes back the queue ledger's mark that a read is queued: a hint from now on queues the next read. */
  release(connectionId: string): Promise<void>;
}

export interface HintedChangesResult {
  connectionId: string;
  read: number;
  entered: number;
  exits: number;
  pages: number;
  /** `done`: read to the end; `continues`: the page bound stopped it, the next hint or sweep goes on from there. */
  state: 'done' | 'continues' | 'no-reader';
}

/** The queue ledger's subject of a connection's pending read of changes: one waits on the queue at a time. */
export const HINT_SUBJECT = 'changes-hinted';

/** A read waits on the queue at most this long before another hint or sweep may queue one beside it. */
export const HINT_GRACE_MS = 60_000;

/** The synced copy is read back this far past the watermark: a change Kombo recorded late is still read. */
export const HINT_OVERLAP_MS = 5 * 60_000;
/** The first read of a connection looks back a day; later ones from the watermark. */
export const FIRST_READ_LOOKBACK_MS = 24 * 60 * 60_000;
/** Pages a run reads at most; the next run goes on from the page after its last (its resume point). */
export const MAX_HINT_PAGES = 20;

/**
 * A hint that applications changed (Kombo's `data-changed`, which names models, not records), or the sweep's run:
 * the applications changed since the last read are read from the synced copy, and each one's stage compared with the
 * last the connector recorded for it. One that entered a stage a trigger may match is enqueued once as a stage entry,
 * numbered by its entries so a re-entry is another; one that left the process (declined, hired), or came back, is
 * enqueued as that change. The message goes before the record: a crash between leaves the record behind, and the
 * next read enqueues the same delivery again, which the claims take once. Duplicate and lost hints only read again.
 */
export async function readHintedChanges(
  connectionId: string,
  deps: HintedChangesDependencies,
  signal?: AbortSignal,
): Promise<HintedChangesResult> {
  const result: HintedChangesResult = { connectionId, read: 0, entered: 0, exits: 0, pages: 0, state: 'no-reader' };
  const context = await deps.contextFor(connectionId);
  const list = context?.ats.listChangedApplications?.bind(context.ats);
  if (!context || !list) return result;
  const now = (deps.now ?? Date.now)();
  // This read sees what changed until now: a hint that comes while it runs queues another read.
  await deps.release(connectionId);
  let { since, cursor, startedAt, resumed } = await startingPoint(connectionId, deps, now);
  do {
    const page = await list(since, cursor, signal).catch(async (error: unknown) => {
      // A resumed cursor Kombo no longer takes (expired: a 4xx, not a 429): the chain starts again from the mark, once.
      const status = httpStatus(error) ?? 0;
      if (!cursor || result.pages > 0 || status < 400 || status >= 500 || status === 429) throw error;
      await deps.seen.saveResumePoint(connectionId, undefined);
      ({ since, cursor, startedAt, resumed } = await startingPoint(connectionId, deps, now));
      return list(since, cursor, signal);
    });
    result.pages++;
    result.read += page.applications.length;
    const found = await changesOf(connectionId, page.applications, deps, context.connection);
    result.entered += found.entered;
    result.exits += found.exits;
    cursor = page.next;
  } while (cursor && result.pages < MAX_HINT_PAGES);
  if (cursor) {
    // Stopped by the page bound: the next read goes on from the next page, never back to the first.
    await deps.seen.saveResumePoint(connectionId, { since, cursor, startedAt });
    result.state = 'continues';
    return result;
  }
  // Read to the end: the next read starts from when this chain began (less the overlap), what changed since unseen.
  await deps.seen.advanceWatermark(connectionId, startedAt);
  if (resumed) await deps.seen.saveResumePoint(connectionId, undefined);
  result.state = 'done';
  return result;
}

/** Where a read begins: where the last one stopped short, or the mark (less the overlap), or a day back at first. */
async function startingPoint(connectionId: string, deps: HintedChangesDependencies, now: number) {
  const resume = await deps.seen.resumePoint(connectionId);
  if (resume) return { ...resume, cursor: resume.cursor as string | undefined, resumed: true };
  const mark = await deps.seen.watermark(connectionId);
  const since = mark === undefined ? now - FIRST_READ_LOOKBACK_MS : mark - HINT_OVERLAP_MS;
  return { since, cursor: undefined as string | undefined, startedAt: now, resumed: false };
}

/** One page's applications against what was seen of them: the messages, then the records. */
async function changesOf(
  connectionId: string,
  applications: readonly ChangedApplication[],
  deps: HintedChangesDependencies,
  connection: Parameters<typeof mayMatchTriggers>[0],
): Promise<{ entered: number; exits: number }> {
  const seen = await deps.seen.read(
    connectionId,
    applications.map((a) => a.atsApplicationId),
  );
  const changes: { application: ChangedApplication; before: SeenApplication; now: SeenApplication }[] = [];
  const messages: (StageEnteredMessage | ApplicationChangedMessage)[] = [];
  let [entered, exits] = [0, 0];
  for (const application of applications) {
    const before = seen.get(application.atsApplicationId) ?? { entries: 0 };
    const stageKey = application.stage.id ?? application.stage.name;
    const movedStage = stageKey !== undefined && stageKey !== before.stageKey;
    const exit = application.exit;
    const now: SeenApplication = { stageKey, entries: before.entries + (movedStage ? 1 : 0), exit };
    if (!movedStage && exit === before.exit) continue;
    changes.push({ application, before, now });
    if (exit !== before.exit && (exit || before.exit)) {
      messages.push(exitMessage(connectionId, application, exit ? 'left' : 'returned', now.entries));
      exits++;
    }
    if (movedStage && !exit && mayMatchTriggers(connection, application)) {
      messages.push(entryMessage(connectionId, application, now.entries));
      entered++;
    }
  }
  if (messages.length) await deps.enqueue(messages);
  for (const change of changes)
    await deps.seen.record(connectionId, change.application.atsApplicationId, change.now, change.before);
  return { entered, exits };
}

const envelope = (connectionId: string) =>
  ({ v: 1, enqueueId: randomUUID(), connectionId, receivedAt: Date.now() }) as const;

function entryMessage(connectionId: string, a: ChangedApplication, entry: number): StageEnteredMessage {
  const stageKey = a.stage.id ?? a.stage.name ?? 'stage';
  return {
    ...envelope(connectionId),
    kind: 'stage-entered',
    event: {
      deliveryId: `synced-${a.atsApplicationId}-${stageKey}-${entry}`.slice(0, 200),
      atsJobId: a.atsJobId,
      ...(a.jobName ? { jobName: a.jobName } : {}),
      atsApplicationId: a.atsApplicationId,
      atsCandidateId: a.atsCandidateId,
      stage: a.stage,
      candidate: {},
    },
  };
}

function exitMessage(
  connectionId: string,
  a: ChangedApplication,
  change: 'left' | 'returned',
  entry: number,
): ApplicationChangedMessage {
  return {
    ...envelope(connectionId),
    kind: 'application-changed',
    deliveryId: `synced-${a.atsApplicationId}-${change}-${a.exit ?? 'back'}-${entry}`.slice(0, 200),
    atsApplicationId: a.atsApplicationId,
    change,
  };
}
