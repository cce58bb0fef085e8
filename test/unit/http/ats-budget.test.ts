import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { AtsHttpClient } from '../../../shared/ats/ats-http';
import { ATS_ERROR_CODES } from '../../../shared/ats/errors';
import { stubFetch } from '../../helpers/stub-fetch';

/** A client on a fake clock whose sleeps move the clock: what it waited is what a real one would have waited. */
function pacedClient(budget: { limit: number; windowMs: number } | undefined) {
  let clock = 1_000_000;
  const sentAt: number[] = [];
  const waits: number[] = [];
  const stub = stubFetch(() => {
    sentAt.push(clock);
    return { status: 200, json: { ok: true } };
  });
  const client = new AtsHttpClient({
    baseUrl: 'https://ats.example.com',
    authorization: async () => 'Basic a2V5Og==',
    fetch: stub.fetch,
    now: () => clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock += ms;
    },
    budget,
  });
  return {
    client,
    sentAt,
    waits,
    advance: (ms: number) => {
      clock += ms;
    },
    now: () => clock,
  };
}

const read = (client: AtsHttpClient) => client.request({ method: 'GET', path: '/v1/opportunities' }, v.unknown());

describe("Class: AtsHttpClient, pacing to a connection's budget (an ATS that announces no window)", () => {
  it('sends no more than the budget in any window: the eleventh call of ten a second waits its turn', async () => {
    const paced = pacedClient({ limit: 10, windowMs: 1000 });
    for (let i = 0; i < 25; i++) await read(paced.client);
    expect(paced.sentAt).toHaveLength(25);
    for (let i = 10; i < paced.sentAt.length; i++)
      expect((paced.sentAt[i] as number) - (paced.sentAt[i - 10] as number)).toBeGreaterThanOrEqual(1000);
    expect(paced.waits.length).toBeGreaterThan(0);
    // Waits this short are sat out in the call: the worker is never told to put the message back.
    expect(paced.client.pacingWaitMs(paced.now())).toBe(0);
  });

  it('calls that fit the budget go at once, without a wait', async () => {
    const paced = pacedClient({ limit: 10, windowMs: 1000 });
    await Promise.all(Array.from({ length: 10 }, () => read(paced.client)));
    expect(paced.waits).toEqual([]);
    expect(new Set(paced.sentAt).size).toBe(1);
  });

  it('refuses, unsent and retryable, a call whose turn is further off than a worker sits out', async () => {
    const paced = pacedClient({ limit: 2, windowMs: 30_000 });
    await read(paced.client);
    await read(paced.client);
    paced.advance(1000);
    expect(paced.client.pacingWaitMs(paced.now())).toBe(29_000);
    await expect(read(paced.client)).rejects.toMatchObject({
      code: ATS_ERROR_CODES.rateLimited,
      retryAfterMs: 29_000,
    });
    expect(paced.sentAt).toHaveLength(2);
    paced.advance(29_000);
    await read(paced.client);
    expect(paced.sentAt).toHaveLength(3);
  });

  it('without a budget, nothing is paced', async () => {
    const paced = pacedClient(undefined);
    for (let i = 0; i < 50; i++) await read(paced.client);
    expect(paced.waits).toEqual([]);
    expect(paced.client.pacingWaitMs(paced.now())).toBe(0);
  });
});
