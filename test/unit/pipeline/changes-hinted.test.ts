import { describe, expect, it, vi } from 'vitest';
import type { ChangedApplication } from '../../../shared/ats/port';
import {
  FIRST_READ_LOOKBACK_MS,
  HINT_OVERLAP_MS,
  type HintedChangesDependencies,
  MAX_HINT_PAGES,
  readHintedChanges,
  type ResumePoint,
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
function memorySeen(): SeenChanges & {
  mark: number | undefined;
  resume: ResumePoint | undefined;
  items: Map<string, SeenApplication>;
} {
  const items = new Map<string, SeenApplication>();
  return {
    mark: undefined,
    resume: undefined,
    items,
    async resumePoint() {
      return this.resume;
    },
    async saveResumePoint(_c, point) {
      this.resume = point;
    },
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

  it('stops at the page bound and the next read goes on from the page after, never back to the first', async () => {
    // More changed applications than one read's pages hold: 25 pages, the last with an entry into the trigger stage.
    const pages = Array.from({ length: 25 }, (_, i) => [inStage(`p${i}`, i === 24 ? 'AI Interview' : 'Offer')]);
    const { deps, seen, list, enqueued, connectionId } = setup(pages);
    const first = await readHintedChanges(connectionId, deps);
    expect(first).toMatchObject({ pages: MAX_HINT_PAGES, state: 'continues', entered: 0 });
    expect(seen.mark).toBeUndefined();
    expect(seen.resume).toEqual({ since: NOW - FIRST_READ_LOOKBACK_MS, cursor: '20', startedAt: NOW });
    // Later, the next read: from page 20 with the chain's own `since`, to the end; the mark is when the chain began.
    const later = { ...deps, now: () => NOW + 60_000 };
    expect(await readHintedChanges(connectionId, later)).toMatchObject({ pages: 5, state: 'done', entered: 1 });
    expect(list.mock.calls.slice(MAX_HINT_PAGES).map(([since, cursor]) => [since, cursor])).toEqual(
      ['20', '21', '22', '23', '24'].map((cursor) => [NOW - FIRST_READ_LOOKBACK_MS, cursor]),
    );
    expect(enqueued.map((m) => m.kind)).toEqual(['stage-entered']);
    expect([seen.mark, seen.resume]).toEqual([NOW, undefined]);
  });

  it('starts again from the mark when Kombo no longer takes the saved cursor (a 4xx), once', async () => {
    const { deps, seen, list, connectionId } = setup([[inStage('a1', 'AI Interview')]]);
    seen.mark = NOW - 10 * 60_000;
    seen.resume = { since: NOW - 3 * 86_400_000, cursor: 'expired', startedAt: NOW - 86_400_000 };
    list.mockImplementationOnce(async () => {
      throw Object.assign(new Error('GET /ats/applications: 410 cursor expired'), { status: 410 });
    });
    expect(await readHintedChanges(connectionId, deps)).toMatchObject({ pages: 1, state: 'done', entered: 1 });
    expect(list.mock.calls.map(([since, cursor]) => [since, cursor])).toEqual([
      [NOW - 3 * 86_400_000, 'expired'],
      [NOW - 10 * 60_000 - HINT_OVERLAP_MS, undefined],
    ]);
    expect([seen.mark, seen.resume]).toEqual([NOW, undefined]);
  });
});
