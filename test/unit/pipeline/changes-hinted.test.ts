import { describe, expect, it, vi } from 'vitest';
import type { ChangedApplication } from '../../../shared/ats/port';
import {
  FIRST_READ_LOOKBACK_MS,
  HINT_OVERLAP_MS,
  type HintedChangesDependencies,
  readHintedChanges,
  type SeenApplication,
  type SeenChanges,
} from '../../../shared/pipeline/changes-hinted.use-case';
import { fakeContext } from '../../helpers/pipeline-fakes';

const NOW = Date.UTC(2026, 10, 29, 12);
/** The trigger of the test connection invites at "AI Interview" of every job. */
const inStage = (id: string, stage: string, extra: Partial<ChangedApplication> = {}): ChangedApplication => ({
  atsApplicationId: id,
  atsCandidateId: `c-${id}`,
  atsJobId: '3301',
  stage: { id: `s-${stage}`, name: stage },
  changedAt: NOW - 1000,
  ...extra,
});

/** What was seen of each application, held as the events table would (each record over what its reader read). */
function memorySeen(): SeenChanges & { mark: number | undefined; items: Map<string, SeenApplication> } {
  const items = new Map<string, SeenApplication>();
  return {
    mark: undefined,
    items,
    async watermark() {
      return this.mark;
    },
    async advanceWatermark(_c, to) {
      this.mark = Math.max(this.mark ?? 0, to);
    },
    async read(_c, ids) {
      return new Map(ids.filter((id) => items.has(id)).map((id) => [id, { ...(items.get(id) as SeenApplication) }]));
    },
    async record(_c, id, now, before) {
      if ((items.get(id)?.entries ?? 0) !== before.entries) return false;
      items.set(id, now);
      return true;
    },
  };
}

function setup(pages: ChangedApplication[][]) {
  const { context, ats } = fakeContext();
  const list = vi.fn(async (_since: number, cursor: string | undefined) => {
    const index = Number(cursor ?? 0);
    return { applications: pages[index] ?? [], next: index + 1 < pages.length ? String(index + 1) : undefined };
  });
  Object.assign(ats, { listChangedApplications: list });
  const seen = memorySeen();
  const enqueued: { kind: string; deliveryId: string; change?: string }[] = [];
  const deps: HintedChangesDependencies = {
    contextFor: async () => context,
    logger: { info: vi.fn(), warn: vi.fn(), error: vi.fn() },
    now: () => NOW,
    seen,
    enqueue: async (messages) => {
      for (const m of messages)
        enqueued.push(
          m.kind === 'stage-entered'
            ? { kind: m.kind, deliveryId: m.event.deliveryId }
            : { kind: m.kind, deliveryId: m.deliveryId, change: m.change },
        );
    },
    release: vi.fn(async () => undefined),
  };
  return { deps, list, seen, enqueued, connectionId: context.connection.id };
}

describe('Use case: readHintedChanges (stage entries from a synced copy)', () => {
  it('enqueues an entry into a trigger stage once, however often the same change is read', async () => {
    const { deps, enqueued, connectionId } = setup([[inStage('a1', 'AI Interview'), inStage('a2', 'Offer')]]);
    const first = await readHintedChanges(connectionId, deps);
    await readHintedChanges(connectionId, deps);
    await readHintedChanges(connectionId, deps);
    expect(first).toMatchObject({ read: 2, entered: 1, exits: 0, state: 'done' });
    expect(enqueued).toEqual([{ kind: 'stage-entered', deliveryId: 'synced-a1-s-AI Interview-1' }]);
  });

  it('reads a day back the first time, then from the last read less the overlap, releasing its mark', async () => {
    const { deps, list, seen, connectionId } = setup([[]]);
    await readHintedChanges(connectionId, deps);
    expect(list.mock.calls[0]?.[0]).toBe(NOW - FIRST_READ_LOOKBACK_MS);
    expect(seen.mark).toBe(NOW);
    await readHintedChanges(connectionId, deps);
    expect(list.mock.calls[1]?.[0]).toBe(NOW - HINT_OVERLAP_MS);
    expect(deps.release).toHaveBeenCalledTimes(2);
  });

  it('numbers a re-entry after a move out as another delivery', async () => {
    const pages = [[inStage('a1', 'AI Interview')]];
    const { deps, enqueued, connectionId } = setup(pages);
    await readHintedChanges(connectionId, deps);
    pages[0] = [inStage('a1', 'Offer')];
    await readHintedChanges(connectionId, deps);
    pages[0] = [inStage('a1', 'AI Interview')];
    await readHintedChanges(connectionId, deps);
    expect(enqueued.map((e) => e.deliveryId)).toEqual(['synced-a1-s-AI Interview-1', 'synced-a1-s-AI Interview-3']);
  });

  it('enqueues an exit once, and a return when the application comes back', async () => {
    const pages = [[inStage('a1', 'AI Interview')]];
    const { deps, enqueued, connectionId } = setup(pages);
    await readHintedChanges(connectionId, deps);
    pages[0] = [inStage('a1', 'AI Interview', { exit: 'rejected' })];
    await readHintedChanges(connectionId, deps);
    await readHintedChanges(connectionId, deps);
    pages[0] = [inStage('a1', 'AI Interview')];
    await readHintedChanges(connectionId, deps);
    expect(enqueued).toEqual([
      { kind: 'stage-entered', deliveryId: 'synced-a1-s-AI Interview-1' },
      { kind: 'application-changed', deliveryId: 'synced-a1-left-rejected-1', change: 'left' },
      { kind: 'application-changed', deliveryId: 'synced-a1-returned-back-1', change: 'returned' },
    ]);
  });

  it('records nothing when the messages could not be sent, so the next read enqueues them again', async () => {
    const { deps, seen, connectionId } = setup([[inStage('a1', 'AI Interview')]]);
    const failing = { ...deps, enqueue: vi.fn().mockRejectedValue(new Error('SQS down')) };
    await expect(readHintedChanges(connectionId, failing)).rejects.toThrow('SQS down');
    expect(seen.items.size).toBe(0);
    expect(seen.mark).toBeUndefined();
  });

  it('stops at the page bound and keeps its mark, so the next read goes on', async () => {
    const pages = Array.from({ length: 25 }, (_, i) => [inStage(`p${i}`, 'Offer')]);
    const { deps, seen, connectionId } = setup(pages);
    const result = await readHintedChanges(connectionId, deps);
    expect(result).toMatchObject({ pages: 20, state: 'continues' });
    expect(seen.mark).toBeUndefined();
  });
});
