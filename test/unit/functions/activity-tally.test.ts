import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ActivityTally, deliveryEntry, WEBHOOK_MARK_MS } from '../../../functions/_runtime/activity';
import { PIPELINE_METRICS } from '../../../shared/observability/metrics';
import type { TimelineEntry } from '../../../shared/mapping/activity.records';
import { NOW } from '../../helpers/pipeline-records';

/** The activity table's writes, each a spy that succeeds unless the test says otherwise. */
function fakeActivityStore() {
  return {
    addDay: vi.fn<(...args: unknown[]) => Promise<void>>().mockResolvedValue(undefined),
    addTimeline: vi
      .fn<(entries: readonly TimelineEntry[], signal?: AbortSignal) => Promise<void>>()
      .mockResolvedValue(undefined),
  };
}
const fakeLogger = () => ({ info: vi.fn(), warn: vi.fn(), error: vi.fn() });

describe('Class: ActivityTally', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("writes each connection's counts once a flush, with its last write-back and last webhook", async () => {
    const store = fakeActivityStore();
    const tally = new ActivityTally(() => store);
    tally.count('Invited', 'acme');
    tally.count('Invited', 'acme');
    tally.count('WrittenBack', 'acme', NOW - 2_000);
    tally.count('WrittenBack', 'acme', NOW - 1_000);
    tally.count('Failed', 'acme', NOW - 500);
    tally.webhook('acme', NOW - 700);
    tally.count('Deferred', 'beta');

    await tally.flush(fakeLogger());

    expect(store.addDay.mock.calls).toEqual([
      // Each on the day of its first event, within the flush's deadline (none here).
      [
        'acme',
        NOW,
        { Invited: 2, WrittenBack: 2, Failed: 1 },
        { webhookAt: NOW - 700, writeBackAt: NOW - 1_000, signal: undefined },
      ],
      ['beta', NOW, { Deferred: 1 }, { webhookAt: undefined, writeBackAt: undefined, signal: undefined }],
    ]);
    expect(store.addTimeline).not.toHaveBeenCalled();
    await tally.flush(fakeLogger());
    expect(store.addDay).toHaveBeenCalledTimes(2);
  });

  it('writes a webhook alone as the last webhook with no counts', async () => {
    const store = fakeActivityStore();
    const tally = new ActivityTally(() => store);
    tally.webhook('acme');
    await tally.flush(fakeLogger());
    expect(store.addDay.mock.calls).toEqual([
      ['acme', NOW, {}, { webhookAt: NOW, writeBackAt: undefined, signal: undefined }],
    ]);
  });

  it("marks a connection's last webhook once a minute at most from one environment", async () => {
    const store = fakeActivityStore();
    const tally = new ActivityTally(() => store);
    tally.webhook('acme');
    await tally.flush(fakeLogger());
    // A burst: the deliveries of the next minute write nothing of their own.
    for (const after of [1, 30_000, WEBHOOK_MARK_MS - 1]) {
      vi.setSystemTime(NOW + after);
      tally.webhook('acme');
      await tally.flush(fakeLogger());
    }
    tally.webhook('beta');
    await tally.flush(fakeLogger());
    vi.setSystemTime(NOW + WEBHOOK_MARK_MS);
    tally.webhook('acme');
    await tally.flush(fakeLogger());
    const marked = store.addDay.mock.calls.map(([id, , , last]) => [id, (last as { webhookAt: number }).webhookAt]);
    expect(marked).toEqual([
      ['acme', NOW],
      ['beta', NOW + WEBHOOK_MARK_MS - 1],
      ['acme', NOW + WEBHOOK_MARK_MS],
    ]);
  });

  it('writes the timeline notes of a flush in one call, each at its time or the time it was noted', async () => {
    const store = fakeActivityStore();
    const tally = new ActivityTally(() => store);
    tally.note({
      connectionId: 'acme',
      atsApplicationId: '4401',
      kind: 'webhook',
      detail: 'stage changed',
      at: NOW - 9,
    });
    vi.setSystemTime(NOW + 5);
    tally.note({ connectionId: 'acme', atsApplicationId: '4401', kind: 'deferred', detail: 'later', code: 'rate' });
    tally.note({ connectionId: 'beta', atsApplicationId: '77', kind: 'attempt-failed', detail: 'ats 500' });

    await tally.flush(fakeLogger());

    expect(store.addTimeline).toHaveBeenCalledTimes(1);
    expect(store.addTimeline.mock.calls[0]?.[0]).toEqual([
      { connectionId: 'acme', atsApplicationId: '4401', kind: 'webhook', detail: 'stage changed', at: NOW - 9 },
      { connectionId: 'acme', atsApplicationId: '4401', kind: 'deferred', detail: 'later', code: 'rate', at: NOW + 5 },
      { connectionId: 'beta', atsApplicationId: '77', kind: 'attempt-failed', detail: 'ats 500', at: NOW + 5 },
    ]);
    expect(store.addDay).not.toHaveBeenCalled();
  });

  it('logs a write that fails by its code, still makes the others, and never throws', async () => {
    const store = fakeActivityStore();
    const throttled = Object.assign(new Error('rate exceeded'), { name: 'ProvisionedThroughputExceededException' });
    store.addDay.mockRejectedValueOnce(throttled);
    store.addTimeline.mockRejectedValueOnce(new TypeError('bad entry'));
    const logger = fakeLogger();
    const tally = new ActivityTally(() => store);
    tally.count('Invited', 'acme');
    tally.count('Invited', 'beta');
    tally.note({ connectionId: 'acme', atsApplicationId: '4401', kind: 'webhook', detail: 'x' });

    await expect(tally.flush(logger)).resolves.toBeUndefined();

    expect(store.addDay).toHaveBeenCalledTimes(2);
    expect(logger.warn.mock.calls.map(([, attributes]) => attributes)).toEqual([
      { code: 'ProvisionedThroughputExceededException' },
      { code: 'TypeError' },
    ]);
    expect(JSON.stringify(logger.warn.mock.calls)).not.toContain('rate exceeded');
  });

  it('writes nothing when nothing is pending', async () => {
    const store = fakeActivityStore();
    const logger = fakeLogger();
    await new ActivityTally(() => store).flush(logger);
    expect(store.addDay).not.toHaveBeenCalled();
    expect(store.addTimeline).not.toHaveBeenCalled();
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it('drops what it saw when there is no activity table, and starts afresh', async () => {
    const store = fakeActivityStore();
    let table: ReturnType<typeof fakeActivityStore> | undefined;
    const tally = new ActivityTally(() => table);
    tally.count('Invited', 'acme');
    tally.note({ connectionId: 'acme', atsApplicationId: '4401', kind: 'webhook', detail: 'x' });
    await expect(tally.flush(fakeLogger())).resolves.toBeUndefined();
    table = store;
    await tally.flush(fakeLogger());
    expect(store.addDay).not.toHaveBeenCalled();
    expect(store.addTimeline).not.toHaveBeenCalled();
  });

  it('forwards every metric to the metrics it wraps; counts only Invited, WrittenBack, Failed, Deferred', async () => {
    const store = fakeActivityStore();
    const tally = new ActivityTally(() => store);
    const wrapped = { count: vi.fn() };
    const metrics = tally.counting(wrapped);
    for (const metric of PIPELINE_METRICS) metrics.count(metric, 'acme');
    metrics.count('Invited', 'beta');

    expect(wrapped.count.mock.calls).toEqual([...PIPELINE_METRICS.map((m) => [m, 'acme']), ['Invited', 'beta']]);
    await tally.flush(fakeLogger());
    expect(store.addDay.mock.calls).toEqual([
      [
        'acme',
        NOW,
        { Invited: 1, WrittenBack: 1, Failed: 1, Deferred: 1 },
        { webhookAt: undefined, writeBackAt: NOW, signal: undefined },
      ],
      ['beta', NOW, { Invited: 1 }, { webhookAt: undefined, writeBackAt: undefined, signal: undefined }],
    ]);
  });

  it("drops the record when the invocation's deadline has come, and passes the deadline to every write", async () => {
    const store = fakeActivityStore();
    const tally = new ActivityTally(() => store);
    const logger = fakeLogger();
    tally.count('Invited', 'acme');
    tally.note({ connectionId: 'acme', atsApplicationId: '1', kind: 'deferred', detail: 'back in 5 s' });
    await tally.flush(logger, AbortSignal.abort());
    expect(store.addDay).not.toHaveBeenCalled();
    expect(store.addTimeline).not.toHaveBeenCalled();
    // Nothing kept for the next invocation either: its own counts are its own.
    await tally.flush(logger);
    expect(store.addDay).not.toHaveBeenCalled();
    const signal = new AbortController().signal;
    tally.count('Invited', 'acme');
    tally.note({ connectionId: 'acme', atsApplicationId: '1', kind: 'deferred', detail: 'back in 5 s' });
    await tally.flush(logger, signal);
    expect((store.addDay.mock.calls[0]![3] as { signal?: AbortSignal }).signal).toBe(signal);
    expect(store.addTimeline.mock.calls[0]?.[1]).toBe(signal);
  });

  it("notes a webhook's delivery when it came, keyed by its message, naming the stage, not the candidate", () => {
    const envelope = { v: 1, enqueueId: 'enq-1', connectionId: 'acme', receivedAt: NOW - 5_000 } as const;
    const entered = {
      ...envelope,
      kind: 'stage-entered',
      event: {
        ...{
          deliveryId: 'd-1',
          atsApplicationId: '4401',
          atsCandidateId: 'c-9',
          stage: { id: '9001', name: 'AI Interview' },
        },
        candidate: { name: 'Kim Lee', email: 'kim@example.com' },
      },
    } as const;
    expect(deliveryEntry({ ...entered, origin: 'webhook' })).toEqual({
      ...{ connectionId: 'acme', atsApplicationId: '4401', at: NOW - 5_000, key: 'enq-1', kind: 'webhook' },
      detail: 'webhook: entered AI Interview',
    });
    expect(JSON.stringify(deliveryEntry({ ...entered, origin: 'webhook' }))).not.toMatch(/Kim|kim@/);
    // A sweep's or a sync's message came from no webhook: nothing to note.
    expect(deliveryEntry(entered)).toBeUndefined();
    const left = { ...envelope, origin: 'webhook', kind: 'application-changed', deliveryId: 'd-2' } as const;
    expect(deliveryEntry({ ...left, atsApplicationId: '4401', change: 'left' })?.detail).toBe(
      'webhook: the candidate left the process',
    );
    expect(deliveryEntry({ ...left, atsApplicationId: '4401', change: 'returned' })?.detail).toBe(
      'webhook: the candidate came back',
    );
  });
});
