import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeferralBatch } from '../../../functions/_runtime/deferral-batch';
import { deadlineAfter } from '../../../shared/http/deadline';
import type { QueueMessage } from '../../../shared/queue';

const message = (id: string) =>
  ({ kind: 'report-created', connectionId: 'acme', reportId: id }) as unknown as QueueMessage;

describe('DeferralBatch', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends the copies of records that defer at different moments in one request, once all running wait', async () => {
    const publish = vi.fn(async (copies: unknown[]) => copies.map(() => true));
    const batch = new DeferralBatch(publish, 3, deadlineAfter(60_000));
    const first = batch.send({ message: message('a'), delaySeconds: 30 });
    await vi.advanceTimersByTimeAsync(4_000);
    // One record finished on its own; the last defers later, when a step found no room.
    batch.settled();
    expect(publish).not.toHaveBeenCalled();
    const second = batch.send({ message: message('b'), delaySeconds: 20 });
    await vi.advanceTimersByTimeAsync(0);
    expect(await Promise.all([first, second])).toEqual([true, true]);
    expect(publish).toHaveBeenCalledTimes(1);
    // The first copy's delay counts from when it was planned: the 4 s it waited to be gathered are taken off.
    expect(publish.mock.calls[0]?.[0]).toEqual([
      { message: message('a'), delaySeconds: 26 },
      { message: message('b'), delaySeconds: 20 },
    ]);
  });

  it('sends a copy that cannot wait (a second before its delay ends) without the records still running', async () => {
    const publish = vi.fn(async (copies: unknown[]) => copies.map(() => true));
    const batch = new DeferralBatch(publish, 5, deadlineAfter(60_000));
    const urgent = batch.send({ message: message('a'), delaySeconds: 3 });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(publish).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(await urgent).toBe(true);
    expect(publish.mock.calls[0]?.[0]).toEqual([{ message: message('a'), delaySeconds: 1 }]);
  });

  it("sends by the invocation's deadline, and answers false for a copy SQS did not take", async () => {
    const publish = vi.fn(async () => {
      throw new Error('SQS unavailable');
    });
    const batch = new DeferralBatch(publish, 2, deadlineAfter(5_000));
    const copy = batch.send({ message: message('a'), delaySeconds: 600 });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(publish).toHaveBeenCalledTimes(1);
    expect(await copy).toBe(false);
  });
});
