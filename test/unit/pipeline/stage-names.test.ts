import { describe, expect, it, vi } from 'vitest';
import type { AtsAdapter } from '../../../shared/ats/port';
import { shareStageNames, stageNamesReader, withStageName } from '../../../shared/pipeline/stage-names';
import { stageEnteredMessage } from '../../helpers/pipeline-records';

const byId = (id: string) => stageEnteredMessage({ stage: { id } }).event;

describe('Stage names shared between the invite worker and the webhook function (Lever)', () => {
  it('names a stage given by id alone, and leaves a named one or an unknown id as it came', () => {
    const names = new Map(Object.entries({ s1: 'AI Interview', s2: 'Offer' }));
    expect(withStageName(byId('s2'), names).stage).toEqual({ id: 's2', name: 'Offer' });
    expect(withStageName(byId('s9'), names).stage).toEqual({ id: 's9' });
    expect(withStageName(byId('toString'), names).stage).toEqual({ id: 'toString' });
    const named = stageEnteredMessage({ stage: { id: 's2', name: 'Screen' } }).event;
    expect(withStageName(named, names).stage).toEqual({ id: 's2', name: 'Screen' });
  });

  it("writes an environment's names once, again when it has read more, none before it has read any", async () => {
    const names = new Map<string, string>();
    const ats = { knownStageNames: () => names } as unknown as AtsAdapter;
    const store = { rememberStageNames: vi.fn().mockResolvedValue(undefined) };
    await shareStageNames('c1', ats, store, 1000);
    expect(store.rememberStageNames).not.toHaveBeenCalled();
    names.set('s1', 'AI Interview');
    await shareStageNames('c1', ats, store, 2000);
    await shareStageNames('c1', ats, store, 3000);
    expect(store.rememberStageNames).toHaveBeenCalledTimes(1);
    expect(store.rememberStageNames).toHaveBeenLastCalledWith('c1', { s1: 'AI Interview' }, 2000);
    names.set('s2', 'Offer');
    await shareStageNames('c1', ats, store, 4000);
    expect(store.rememberStageNames).toHaveBeenCalledTimes(2);
    // Half a day on, the same names are written again, before the record's day runs out.
    await shareStageNames('c1', ats, store, 4000 + 12 * 3600_000);
    expect(store.rememberStageNames).toHaveBeenCalledTimes(3);
    // A write that fails is tried again by the next message.
    const failing = { rememberStageNames: vi.fn().mockRejectedValue(new Error('throttled')) };
    const other = { knownStageNames: () => names } as unknown as AtsAdapter;
    await expect(shareStageNames('c1', other, failing, 5000)).rejects.toThrow('throttled');
    await expect(shareStageNames('c1', other, failing, 6000)).rejects.toThrow('throttled');
    expect(failing.rememberStageNames).toHaveBeenCalledTimes(2);
  });

  it('reads the shared names once, again after 5 s for an id it lacks, and after 10 min in any case', async () => {
    let now = 0;
    let shared: Record<string, string> | undefined;
    const store = { stageNames: vi.fn(async () => shared) };
    const name = stageNamesReader(store, () => now);
    // Nothing shared yet: the delivery stays unnamed (it is enqueued as before).
    expect((await name('c1', byId('s2'))).stage.name).toBeUndefined();
    shared = { s1: 'AI Interview', s2: 'Offer' };
    now = 4_000;
    expect((await name('c1', byId('s2'))).stage.name).toBeUndefined();
    expect(store.stageNames).toHaveBeenCalledTimes(1);
    now = 30_000;
    expect((await name('c1', byId('s2'))).stage.name).toBe('Offer');
    expect((await name('c1', byId('s1'))).stage.name).toBe('AI Interview');
    expect(store.stageNames).toHaveBeenCalledTimes(2);
    // A known id does not read again until the copy is 10 minutes old; a named delivery never reads.
    shared = { s1: 'AI Interview', s2: 'Hired' };
    now = 30_000 + 9 * 60_000;
    expect((await name('c1', byId('s2'))).stage.name).toBe('Offer');
    await name('c1', stageEnteredMessage().event);
    expect(store.stageNames).toHaveBeenCalledTimes(2);
    now = 30_000 + 10 * 60_000;
    expect((await name('c1', byId('s2'))).stage.name).toBe('Hired');
    expect(store.stageNames).toHaveBeenCalledTimes(3);
    // A failed read leaves the delivery unnamed rather than refusing it.
    const failing = stageNamesReader({ stageNames: vi.fn().mockRejectedValue(new Error('down')) }, () => now);
    expect((await failing('c1', byId('s2'))).stage.name).toBeUndefined();
  });
});
