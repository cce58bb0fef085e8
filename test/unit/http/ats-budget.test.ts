import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { type Admission, AtsHttpClient } from '../../../shared/ats/ats-http';
import { ATS_ERROR_CODES } from '../../../shared/ats/errors';
import { deadlineAfter } from '../../../shared/http';
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
    // Its turn: the window after this one. The first message of a window comes back 2.5 s early to open it (the
    // worker sits out the rest); the others come as it opens.
    await expect(read(paced.client)).rejects.toMatchObject({
      code: ATS_ERROR_CODES.rateLimited,
      retryAfterMs: 26_500,
      spreadMs: 0,
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

describe("Class: AtsHttpClient, admitting messages to a connection's budget", () => {
  it('admits the messages the budget carries now and gives the others turns in the windows after', async () => {
    // Ten calls a second, admitted two seconds at a time (a message makes its calls over about that long); a
    // message is expected to cost 1.5 calls until 10 have shown what they cost. Sixty messages at the same instant
    // (the clock stands still): those that sit out the reset find it taken.
    const sentAt: number[] = [];
    const client = new AtsHttpClient({
      baseUrl: 'https://ats.example.com',
      authorization: async () => 'Basic a2V5Og==',
      fetch: stubFetch(() => {
        sentAt.push(1);
        return { status: 200, json: {} };
      }).fetch,
      now: () => 1_000_000,
      sleep: async () => undefined,
      budget: { limit: 10, windowMs: 1000 },
    });
    // The admitted messages are still working: they hold the calls they are expected to make.
    let finish: () => void = () => undefined;
    const working = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const admissions = Array.from({ length: 60 }, () => client.admit(() => working, { kind: 'stage-entered' }));
    const turns = await Promise.all(
      admissions.map((admission) =>
        Promise.race([admission, new Promise<'working'>((resolve) => setTimeout(() => resolve('working'), 20))]),
      ),
    );
    finish();
    await Promise.all(admissions);
    expect(turns.filter((turn) => turn === 'working')).toHaveLength(13);
    // Sent back in slots of 6 s (a queue's delay counts in seconds): 3 windows of 20 calls carry 40 messages, each
    // back at its place in the slot (0.15 s apart), so each window gets its share; 7 go to the slot after.
    const waits = turns.flatMap((turn) => (turn !== 'working' && !turn.admitted ? [turn.turn.waitMs] : []));
    expect(waits).toHaveLength(47);
    expect(waits.slice(0, 40)).toEqual(Array.from({ length: 40 }, (_, i) => 2_000 + i * 150));
    expect(waits.slice(40)).toEqual(Array.from({ length: 7 }, (_, i) => 8_000 + i * 150));
    expect(sentAt).toEqual([]);
  });

  it('refuses, unsent, a call whose budget wait the worker deadline would cut short', async () => {
    const paced = pacedClient({ limit: 1, windowMs: 1000 });
    await read(paced.client);
    const signal = deadlineAfter(500, paced.now);
    await expect(
      paced.client.request({ method: 'GET', path: '/v1/opportunities', signal }, v.unknown()),
    ).rejects.toMatchObject({ code: ATS_ERROR_CODES.rateLimited });
    expect(paced.sentAt).toHaveLength(1);
    expect(paced.waits).toEqual([]);
  });
});

describe("Class: AtsHttpClient, sharing a connection's budget with the other workers", () => {
  it('halves its share after a 429 (others spend the same account) and wins it back window by window', async () => {
    let clock = 1_000_000;
    const sentAt: number[] = [];
    let refusedAt: number | undefined;
    const client = new AtsHttpClient({
      baseUrl: 'https://ats.example.com',
      authorization: async () => 'Basic a2V5Og==',
      fetch: stubFetch(() => {
        sentAt.push(clock);
        // The account's window is spent by another worker once, on the fifth call.
        if (sentAt.length === 5) {
          refusedAt = clock;
          return { status: 429, json: { code: 'TooManyRequests' } };
        }
        return { status: 200, json: {} };
      }).fetch,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      budget: { limit: 10, windowMs: 1000 },
    });
    for (let i = 0; i < 80; i++) await read(client);
    const after = refusedAt as number;
    // In the window after the 429, half the budget at most (the refused call's retry among them).
    expect(sentAt.filter((at) => at > after && at < after + 1000).length).toBeLessThanOrEqual(5);
    // Back to the whole budget: among the last 30 calls, ten went at one instant (a share of half sends five).
    const last = sentAt.slice(-30);
    expect(last.some((at, i) => i + 9 < last.length && last[i + 9] === at)).toBe(true);
    expect(sentAt.slice(5, 40).some((at, i, calls) => i + 9 < calls.length && calls[i + 9] === at)).toBe(false);
  });

  it('takes the 429s of one burst as one sign: its share is halved once, not once per refusal', async () => {
    let clock = 1_000_000;
    const sentAt: number[] = [];
    const client = new AtsHttpClient({
      baseUrl: 'https://ats.example.com',
      authorization: async () => 'Basic a2V5Og==',
      // Another worker spent the account's second: three calls sent at once are refused together.
      fetch: stubFetch(() => {
        sentAt.push(clock);
        return sentAt.length <= 3 ? { status: 429, json: {} } : { status: 200, json: {} };
      }).fetch,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      retry: { maxAttempts: 1 },
      budget: { limit: 10, windowMs: 1000 },
    });
    await Promise.all(Array.from({ length: 3 }, () => read(client).catch(() => undefined)));
    clock += 1_000;
    // Half the budget (five calls a second), not an eighth (one).
    await Promise.all(Array.from({ length: 5 }, () => read(client)));
    expect(new Set(sentAt.slice(3)).size).toBe(1);
  });
});

/** A client whose ATS announces a window of `limit` calls ending at `resetAt` (epoch ms), as Greenhouse does. */
function announcedClient(limit: number) {
  let clock = 1_000_000_000;
  let resetAt = clock + 10_000;
  let used = 0;
  const client = new AtsHttpClient({
    baseUrl: 'https://ats.example.com',
    authorization: async () => 'Basic a2V5Og==',
    fetch: stubFetch(() => {
      if (clock >= resetAt) {
        resetAt += 10_000;
        used = 0;
      }
      used++;
      const headers = {
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-remaining': String(Math.max(0, limit - used)),
        'x-ratelimit-reset': String(Math.ceil(resetAt / 1000)),
      };
      return used > limit ? { status: 429, json: {}, headers } : { status: 200, json: {}, headers };
    }).fetch,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
    retry: { maxAttempts: 1 },
  });
  return {
    client,
    used: () => used,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

const post = (client: AtsHttpClient) => client.write({ method: 'POST', path: '/v3/notes', body: {} }, v.unknown());

describe('Class: AtsHttpClient, admitting messages to a window the ATS announces', () => {
  it('a finished message holds none of the window: messages one after another fill it to the last call', async () => {
    const ats = announcedClient(10);
    // The window is announced by a first call; then each message makes one call and finishes.
    await read(ats.client);
    const outcomes = [];
    for (let i = 0; i < 9; i++)
      outcomes.push(await ats.client.admit(() => post(ats.client), { kind: 'stage-entered' }));
    expect(outcomes.every((outcome) => outcome.admitted)).toBe(true);
    expect(ats.used()).toBe(10);
    // The window is spent now: the next message gets a turn after its reset, and nothing is sent.
    const next = await ats.client.admit(() => post(ats.client), { kind: 'stage-entered' });
    expect(next).toMatchObject({ admitted: false });
    expect(ats.used()).toBe(10);
  });

  it('books the windows ahead in calls, by what each kind of message has cost', async () => {
    const ats = announcedClient(50);
    await read(ats.client);
    // Ten invitations of one call each and ten write-backs of three: the pacer learns each kind apart.
    for (let i = 0; i < 10; i++) await ats.client.admit(() => post(ats.client), { kind: 'stage-entered' });
    for (let i = 0; i < 13; i++)
      await ats.client.admit(
        async () => {
          for (let call = 0; call < 3; call++) await post(ats.client);
        },
        { kind: 'report-created' },
      );
    expect(ats.used()).toBe(50);
    const turnsOf = async (count: number, kind: string) => {
      const waits: number[] = [];
      for (let i = 0; i < count; i++) {
        const outcome = await ats.client.admit(async () => undefined, { kind });
        if (!outcome.admitted) waits.push(outcome.turn.waitMs);
      }
      return waits;
    };
    // The next window carries 50 invitations (its first back 2.5 s early to open it), the one after 16 write-backs.
    const slotOf = (wait: number) => Math.round((wait + 2_500) / 10_000);
    const invitations = (await turnsOf(50, 'stage-entered')).map(slotOf);
    expect(invitations).toEqual(Array.from({ length: 50 }, () => 1));
    const writeBacks = (await turnsOf(17, 'report-created')).map(slotOf);
    expect(writeBacks.filter((slot) => slot === 2)).toHaveLength(16);
    expect(writeBacks.filter((slot) => slot === 3)).toHaveLength(1);
  });

  it('a message that did not wait leaves the window to those whose turn it is, and they take it', async () => {
    const ats = announcedClient(11);
    await read(ats.client);
    for (let i = 0; i < 10; i++) await ats.client.admit(() => post(ats.client), { kind: 'stage-entered' });
    // Eleven messages find the window spent: each gets the next window as its turn (one call each, as learnt).
    const waits: number[] = [];
    for (let i = 0; i < 11; i++) {
      const outcome: Admission<unknown> = await ats.client.admit(() => post(ats.client), { kind: 'stage-entered' });
      waits.push(outcome.admitted ? 0 : outcome.turn.waitMs);
    }
    // The first comes back early to open the window, the others as it opens.
    expect(waits.slice(1)).toEqual(Array.from({ length: 10 }, () => (waits[0] as number) + 2_500));
    // Their window: a message that never waited finds it held for them, and is sent to the one after.
    ats.advance((waits[1] as number) + 500);
    const fresh = await ats.client.admit(() => post(ats.client), { kind: 'stage-entered' });
    expect(fresh).toMatchObject({ admitted: false });
    expect(ats.used()).toBe(11);
    // The eleven come back, and the window carries them all.
    const back = [];
    for (let i = 0; i < 11; i++)
      back.push(await ats.client.admit(() => post(ats.client), { kind: 'stage-entered', returning: true }));
    expect(back.every((outcome) => outcome.admitted)).toBe(true);
    expect(ats.used()).toBe(11);
  });

  it('meets a window that starts at its first call as it resets, though the reset is announced late', async () => {
    // The sandboxes' windows: 10 s from the first call after the last one ended; the reset in whole seconds, up.
    let clock = 1_000_000_700;
    let window: { start: number; used: number } | undefined;
    const client = new AtsHttpClient({
      baseUrl: 'https://ats.example.com',
      authorization: async () => 'Basic a2V5Og==',
      fetch: stubFetch(() => {
        if (!window || clock >= window.start + 10_000) window = { start: clock, used: 0 };
        window.used++;
        const headers = {
          'x-ratelimit-limit': '2',
          'x-ratelimit-remaining': String(Math.max(0, 2 - window.used)),
          'x-ratelimit-reset': String(Math.ceil((window.start + 10_000) / 1000)),
        };
        return window.used > 2 ? { status: 429, json: {}, headers } : { status: 200, json: {}, headers };
      }).fetch,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      retry: { maxAttempts: 1 },
    });
    // The first call of a window is told of its reset 10.3 s on: the window is 10 s. The second opens at 1_000_011_700.
    await read(client);
    await read(client);
    clock = 1_000_011_700;
    await read(client);
    clock += 1_000;
    await read(client);
    // Announced: reset at 1_000_022 s. The window began with the call answered at 1_000_011_700: it ends 9 s on,
    // and the next call opens the next window then, not 0.7 s later.
    expect(client.pacingWaitMs(clock)).toBe(9_000);
    clock += 9_000;
    await read(client);
    expect(window?.start).toBe(1_000_021_700);
  });

  it('windows fixed on the clock cost one 429 at most: then their resets are taken as announced', async () => {
    // Windows of 10 s on the clock, two calls each; the first call lands 7 s into one, so a window's answers say
    // little of its end.
    let clock = 1_000_007_000;
    let refused = 0;
    const used = new Map<number, number>();
    const client = new AtsHttpClient({
      baseUrl: 'https://ats.example.com',
      authorization: async () => 'Basic a2V5Og==',
      fetch: stubFetch(() => {
        const start = Math.floor(clock / 10_000) * 10_000;
        used.set(start, (used.get(start) ?? 0) + 1);
        const left = 2 - (used.get(start) as number);
        const headers = {
          'x-ratelimit-limit': '2',
          'x-ratelimit-remaining': String(Math.max(0, left)),
          'x-ratelimit-reset': String((start + 10_000) / 1000),
        };
        if (left < 0) refused++;
        return left < 0 ? { status: 429, json: {}, headers } : { status: 200, json: {}, headers };
      }).fetch,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      retry: { maxAttempts: 1 },
    });
    // Calls as a worker makes them: whenever the client says the window has room, over ten windows.
    for (let i = 0; i < 40; i++) {
      clock += client.pacingWaitMs(clock) + 100;
      await read(client).catch(() => undefined);
    }
    expect(refused).toBeLessThanOrEqual(1);
    expect(used.size).toBeGreaterThanOrEqual(10);
  });
});
