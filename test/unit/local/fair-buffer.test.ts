import { describe, expect, it } from 'vitest';
import { connectionOfBody, createFairBuffer } from '../../../infra/local/fair-buffer';

const message = (connectionId: string, n: number) => ({
  MessageId: `${connectionId}-${n}`,
  Body: JSON.stringify({ kind: 'stage-entered', connectionId }),
});
const ids = (messages: { MessageId?: string }[]) => messages.map((m) => m.MessageId);

describe('The local event source as an SQS fair queue', () => {
  it("serves a quiet tenant's message before a noisy tenant's backlog read ahead of it", () => {
    const buffer = createFairBuffer(connectionOfBody, 60_000, () => 0);
    buffer.add(Array.from({ length: 30 }, (_, n) => message('burst', n)));
    const first = buffer.take(10);
    expect(ids(first)).toEqual(Array.from({ length: 10 }, (_, n) => `burst-${n}`));
    // The quiet tenant's message arrives behind 20 of the burst's, while the burst has 10 in flight.
    buffer.add([message('trickle', 0)]);
    expect(ids(buffer.take(1))).toEqual(['trickle-0']);
    expect(buffer.size).toBe(20);
  });

  it('keeps each tenant in order, mixes tenants in a batch by their load, and counts a batch done', () => {
    const buffer = createFairBuffer(connectionOfBody, 60_000, () => 0);
    buffer.add([message('a', 0), message('a', 1), message('a', 2), message('b', 0), message('b', 1)]);
    const batch = buffer.take(4);
    expect(ids(batch)).toEqual(['a-0', 'b-0', 'a-1', 'b-1']);
    buffer.done(batch);
    buffer.add([message('b', 2)]);
    // Nothing in flight: the oldest first.
    expect(ids(buffer.take(2))).toEqual(['a-2', 'b-2']);
  });

  it('hands a message over first once it has waited its longest, whatever its tenant', () => {
    let clock = 0;
    const buffer = createFairBuffer(connectionOfBody, 1_000, () => clock);
    buffer.add([message('burst', 0)]);
    buffer.take(1);
    buffer.add([message('burst', 1)]);
    clock = 2_000;
    buffer.add([message('quiet', 0)]);
    expect(ids(buffer.take(1))).toEqual(['burst-1']);
  });

  it("reads a message's connection from its body, and serves an unreadable body too", () => {
    expect(connectionOfBody(JSON.stringify({ connectionId: 'acme' }))).toBe('acme');
    expect(connectionOfBody('not json')).toBe('');
    expect(connectionOfBody(JSON.stringify({ connectionId: 7 }))).toBe('');
  });
});
