import type { BatchGetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { batchGetAll } from '../../../shared/mapping/paging';
import { withDeadline } from '../../../shared/aws/deadline';

/** A client that leaves the last key of each request unprocessed `times` times, then answers every key. */
function throttled(times: number) {
  const requests: number[] = [];
  const send = vi.fn(async (command: BatchGetItemCommand) => {
    const keys = command.input.RequestItems?.t?.Keys ?? [];
    requests.push(keys.length);
    const left = requests.length <= times ? keys.slice(-1) : [];
    const answered = keys.slice(0, keys.length - left.length);
    return { Responses: { t: answered }, UnprocessedKeys: left.length ? { t: { Keys: left } } : {} };
  });
  return { client: { send } as never, requests };
}

describe('Repositories: batchGetAll', () => {
  afterEach(() => vi.restoreAllMocks());
  const keys = Array.from({ length: 150 }, (_, i) => ({ pk: `k${i}` }));

  it('reads 100 keys a request and asks again for the unprocessed ones, every item answered once', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { client, requests } = throttled(2);
    const items = await batchGetAll(client, 't', keys);
    expect(items.map((i) => i.pk).sort()).toEqual(keys.map((k) => k.pk).sort());
    expect(requests).toEqual([100, 1, 1, 50]);
  });

  it('fails after five rounds still unprocessed, naming how many keys were left, never answering part', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { client, requests } = throttled(99);
    await expect(batchGetAll(client, 't', keys)).rejects.toThrow('DynamoDB left 1 keys of t unprocessed');
    expect(requests).toEqual([100, 1, 1, 1, 1]);
  });

  it('stops at the deadline instead of asking again, as a retryable error', async () => {
    const { client, requests } = throttled(99);
    const deadline = new AbortController();
    const read = withDeadline(deadline.signal, () => batchGetAll(client, 't', keys));
    deadline.abort();
    await expect(read).rejects.toMatchObject({ name: 'DeadlineReachedError', retryable: true });
    expect(requests).toEqual([100]);
  });
});
