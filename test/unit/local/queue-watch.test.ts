import { describe, expect, it } from 'vitest';
import { createQueueWatch } from '../../../infra/local/queue-watch';

const body = (message: Record<string, unknown>) => JSON.stringify(message);
const report = (enqueueId: string, deferrals = 0) => ({
  v: 1,
  kind: 'report-created',
  connectionId: 'demo-workable',
  enqueueId,
  reportId: `rep-${enqueueId}`,
  deferrals,
});

describe('Function: createQueueWatch', () => {
  it('says what is left and why: a deferred copy with its reason and due time, a failed one, one in a worker', () => {
    let now = 1_000_000;
    const watch = createQueueWatch(() => now);
    watch.received(body(report('a')), 1);
    watch.deferred(report('a', 1), 4, 'ats-rate-limited');
    watch.handled(body(report('a')), true);
    watch.received(body(report('b')), 2);
    watch.handled(body(report('b')), false);
    watch.received(body(report('c')), 1);
    watch.received(body({ kind: 'stage-entered', connectionId: 'demo-lever', enqueueId: 'd' }), 1);
    watch.handled(body({ kind: 'stage-entered', connectionId: 'demo-lever', enqueueId: 'd' }), true);
    now += 1_000;
    expect(watch.describeUnfinished()).toEqual([
      '1 × report-created of demo-workable: deferred (ats-rate-limited); up to 1 deferrals; the next back in 3 s',
      '1 × report-created of demo-workable: failed, back after the visibility timeout (received 2×); up to 0 deferrals',
      '1 × report-created of demo-workable: in a worker now; up to 0 deferrals',
    ]);
    expect(watch.waiting().map((m) => m.enqueueId)).toEqual(['a']);
    // The deferred copy comes back and is done: nothing of it is left, and it was one message all along.
    watch.received(body(report('a', 1)), 1);
    watch.handled(body(report('a', 1)), true);
    expect(watch.describeUnfinished()).not.toContain(expect.stringContaining('deferred'));
    expect(watch.distinctReceived('report-created')).toBe(3);
    expect(watch.distinctReceived('report-created', (m) => m.reportId === 'rep-a')).toBe(1);
  });

  it('keeps a deferred copy when its original comes back and is finished (its worker stopped before the ack)', () => {
    let now = 1_000_000;
    const watch = createQueueWatch(() => now);
    watch.received(body(report('a')), 1);
    watch.deferred(report('a', 1), 600, 'rate-limited');
    // The worker's invocation ran out before acknowledging: the original comes back and is finished.
    watch.received(body(report('a')), 2);
    watch.handled(body(report('a')), true);
    now += 60_000;
    expect(watch.describeUnfinished()).toEqual([
      '1 × report-created of demo-workable: deferred (rate-limited); up to 1 deferrals; the next back in 540 s',
    ]);
    watch.received(body(report('a', 1)), 1);
    watch.handled(body(report('a', 1)), true);
    expect(watch.describeUnfinished()).toEqual([]);
  });

  it('ignores a body that is not a message', () => {
    const watch = createQueueWatch();
    watch.received('not json', 1);
    watch.handled('{"kind": 1}', false);
    expect(watch.describeUnfinished()).toEqual([]);
  });
});
