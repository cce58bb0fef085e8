import { describe, expect, it } from 'vitest';
import { Pacer, pacedStep, type RateSchedule } from '../../../shared/ats/pacer';
import { greenhouseProfile } from '../../../shared/ats/greenhouse/profile';
import { memorySchedule, VirtualClock } from '../../helpers/pacing/simulation';

// What the pacer does, not when: which calls go out, which are kept back (nothing sent), what the schedule is told.
const RATE = { limit: 50, windowMs: 10_000 };

function setup(schedule?: (clock: VirtualClock) => RateSchedule, batchingWindowMs?: number, rate = RATE) {
  const clock = new VirtualClock();
  const inner = schedule ? schedule(clock) : memorySchedule(clock, 0);
  const reservations: { spanMs: number; notBefore: number }[] = [];
  const recorded: RateSchedule = {
    reserve: (connectionId, spanMs, notBefore, options) => {
      reservations.push({ spanMs, notBefore });
      return inner.reserve(connectionId, spanMs, notBefore, options);
    },
  };
  // An ATS that announces its window as Greenhouse does (X-RateLimit-*).
  const pacer = new Pacer({
    connectionId: 'c',
    rate,
    rateHeaders: greenhouseProfile.rateHeaders,
    schedule: recorded,
    batchingWindowMs,
    now: () => clock.now,
    sleep: clock.sleep,
  });
  /** Runs `work` in virtual time to its end. */
  const run = async <T>(work: () => Promise<T>): Promise<T> => {
    let result: { value: T } | { error: unknown } | undefined;
    work().then(
      (value) => {
        result = { value };
      },
      (error: unknown) => {
        result = { error };
      },
    );
    await clock.run(() => result !== undefined, 600_000);
    if (result && 'error' in result) throw result.error;
    return (result as { value: T }).value;
  };
  /** Turns taken: a reservation of no span takes none (it records costs learnt, or pushes past a reset). */
  const turns = () => reservations.filter((reservation) => reservation.spanMs > 0).length;
  return { clock, pacer, reservations, turns, run, inner };
}

/** `count` execution environments of one connection, each with its pacer, on one schedule and one clock. */
function environments(count: number) {
  const clock = new VirtualClock();
  const schedule = memorySchedule(clock, 0);
  const pacers = Array.from(
    { length: count },
    () =>
      new Pacer({
        connectionId: 'c',
        rate: RATE,
        rateHeaders: greenhouseProfile.rateHeaders,
        schedule,
        now: () => clock.now,
        sleep: clock.sleep,
      }),
  );
  return { clock, pacers };
}

/** Two hundred messages at once: the schedule is booked further ahead than a worker waits. */
const burst = (pacer: Pacer, kind = 'other') =>
  Promise.all(Array.from({ length: 200 }, () => pacer.admit(kind, undefined, undefined, async () => undefined)));

const window = (remaining: number, resetAt: number) =>
  new Headers({ 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': String(Math.ceil(resetAt / 1000)) });

describe('the pacer', () => {
  it('gives a message a later turn when the schedule is booked, and runs it then without reserving again', async () => {
    const { pacer, turns, run, clock } = setup();
    // A burst booked the schedule: the next message's turn is later than a worker waits.
    await run(() => burst(pacer));
    const later = await run(() => pacer.admit('invitation', undefined, undefined, async () => 'ran'));
    expect(later).toMatchObject({ admitted: false });
    const { turnAt, turnCalls } = later as { turnAt: number; turnCalls: number };
    expect(turnAt).toBeGreaterThan(clock.now);
    const reserved = turns();
    clock.now = turnAt - 500;
    const turn = { at: turnAt, calls: turnCalls };
    expect(await run(() => pacer.admit('invitation', turn, undefined, async () => 'ran'))).toEqual({
      admitted: true,
      value: 'ran',
    });
    expect(turns()).toBe(reserved);
  });

  it.each([
    [undefined, 1_000],
    [5_000, 5_000],
  ])(
    'sends messages whose turns are near back together, each early enough to wait for its own (window %s)',
    async (batchingWindowMs, windowMs) => {
      const { pacer, run, clock } = setup(undefined, batchingWindowMs);
      const admit = async () => {
        const admission = await pacer.admit('other', undefined, undefined, async () => 0);
        return admission.admitted ? undefined : { turnAt: admission.turnAt, backAt: clock.now + admission.returnInMs };
      };
      const back = (await run(() => Promise.all(Array.from({ length: 300 }, admit)))).filter((a) => a !== undefined);
      expect(back.length).toBeGreaterThan(200);
      const returns = back.map((a) => a.backAt);
      const turns = back.map((a) => a.turnAt);
      // A receive brings a group: the moments they come back at are one a grid step, not one a message.
      const span = Math.max(...turns) - Math.min(...turns);
      expect(new Set(returns).size).toBeLessThanOrEqual(Math.ceil(span / pacer.groupMs) + 1);
      for (const [i, at] of returns.entries()) {
        const turn = turns[i] as number;
        // Back before the turn with time for its event source's batching window (a group that does not fill a batch
        // waits it there), and close enough to wait for it in the worker when it arrives a second earlier still (the
        // queue rounds the delay down).
        expect(at + windowMs).toBeLessThan(turn);
        expect(turn - (at - 1_000)).toBeLessThanOrEqual(pacer.holdMs);
      }
    },
  );

  it('sends nothing into a window the ATS announced as spent, and moves the schedule past its reset', async () => {
    const { pacer, reservations, run, clock } = setup();
    const resetAt = clock.now + 20_000;
    pacer.afterAnswer(200, window(0, resetAt));
    const kept = await run(() => pacer.beforeCall('GET /v3/applications')).catch((error: unknown) => error);
    expect(kept).toMatchObject({ code: 'ats-rate-limited', paced: true });
    expect((kept as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(0);
    expect(reservations.some((r) => r.notBefore >= resetAt - 1000)).toBe(true);
    expect(pacer.waitMs()).toBeGreaterThan(0);
    // After the reset the window is the ATS's again.
    clock.now = resetAt + 1;
    await run(() => pacer.beforeCall('GET /v3/applications'));
    expect(pacer.waitMs()).toBe(0);
  });

  it('waits for a spent window whose reset is near, and sends the call after it in its own place', async () => {
    const { pacer, reservations, run, clock } = setup();
    // A tenth of a second before a whole second (the ATS announces its reset in whole seconds).
    clock.now = Math.ceil(clock.now / 1000) * 1000 + 900;
    const resetAt = clock.now + 100;
    const admission = await run(() =>
      pacer.admit('invitation', { at: clock.now, calls: 1 }, undefined, async () => {
        pacer.afterAnswer(200, window(0, resetAt));
        const before = reservations.length;
        await pacer.beforeCall('GET /v3/applications');
        return { sentAt: clock.now, booked: reservations.slice(before).filter((r) => r.spanMs > 0).length };
      }),
    );
    // Sent after the reset, in the turn the message held: nothing more was booked for it.
    expect(admission).toMatchObject({ admitted: true, value: { booked: 0 } });
    expect((admission as { value: { sentAt: number } }).value.sentAt).toBeGreaterThanOrEqual(resetAt);
  });

  it('keeps a call back when waiting for the reset would put one call over the limit in the next window', async () => {
    // At 10 per second the schedule spaces calls 105 ms apart and leaves 53 ms of a window spare: a call sent 80 ms
    // late opens a window that holds it and ten of the schedule's.
    const { pacer, run, clock } = setup(undefined, undefined, { limit: 10, windowMs: 1_000 });
    clock.now = Math.ceil(clock.now / 1000) * 1000 + 920;
    pacer.afterAnswer(200, window(0, clock.now + 80));
    await expect(run(() => pacer.beforeCall('GET /candidates'))).rejects.toMatchObject({ paced: true });
  });

  it("moves a message's call past a spent window's far reset to its own next interval, keeping its turn", async () => {
    // Workable's 10 per 10 s: the guard waits half a second for a reset at most; this one is two seconds off.
    const { pacer, reservations, run, clock } = setup(undefined, undefined, { limit: 10, windowMs: 10_000 });
    clock.now = Math.ceil(clock.now / 1000) * 1000;
    const turnAt = clock.now;
    const resetAt = clock.now + 2_000;
    const admission = await run(() =>
      pacer.admit('write-back', { at: turnAt, calls: 3 }, undefined, async () => {
        await pacer.beforeCall('GET /candidates/1');
        pacer.afterAnswer(200, window(0, resetAt));
        const before = reservations.length;
        await pacer.beforeCall('POST /candidates/1/comments');
        return { sentAt: clock.now, booked: reservations.slice(before).filter((r) => r.spanMs > 0).length };
      }),
    );
    // Sent after the reset, on an interval of the block the message held: nothing more was booked for it.
    expect(admission).toMatchObject({ admitted: true, value: { booked: 0 } });
    const { sentAt } = (admission as { value: { sentAt: number } }).value;
    expect(sentAt).toBeGreaterThanOrEqual(resetAt);
    const intervals = (sentAt - turnAt) / pacer.intervalMs;
    expect(Math.abs(intervals - Math.round(intervals))).toBeLessThan(0.01);
    expect(Math.round(intervals)).toBeLessThan(3);
  });

  it("gives a message's call with no interval left past a spent window's reset a block from it", async () => {
    const { pacer, reservations, run, clock } = setup(undefined, undefined, { limit: 10, windowMs: 10_000 });
    await run(() => burst(pacer));
    const resetAt = clock.now + 3_000;
    const admission = await run(() =>
      pacer.admit('invitation', { at: clock.now, calls: 1 }, undefined, async () => {
        pacer.afterAnswer(200, window(0, resetAt));
        return pacer.beforeCall('POST /candidates/1/comments').catch((error: unknown) => error);
      }),
    );
    // Nothing sent; the message goes back carrying a turn after the reset (it used to go back without one).
    const kept = (admission as { value: { turnAt?: number; turnCalls?: number } }).value;
    expect(kept).toMatchObject({ code: 'ats-rate-limited', paced: true, turnCalls: 1 });
    expect(kept.turnAt).toBeGreaterThanOrEqual(resetAt);
    expect(reservations.some((r) => r.spanMs > 0 && r.notBefore >= resetAt)).toBe(true);
  });

  it("sends a call in a block from a spent window's reset, waiting for it in the worker when near", async () => {
    const { pacer, run, clock } = setup(undefined, undefined, { limit: 10, windowMs: 10_000 });
    clock.now = Math.ceil(clock.now / 1000) * 1000;
    // Announced in whole seconds: two seconds off, further than the guard waits, nearer than a worker does.
    const announcedReset = clock.now + 2_000;
    const admission = await run(() =>
      pacer.admit('invitation', { at: clock.now, calls: 1 }, undefined, async () => {
        pacer.afterAnswer(200, window(0, clock.now + 1_500));
        await pacer.beforeCall('POST /candidates/1/comments');
        return clock.now;
      }),
    );
    expect(admission).toMatchObject({ admitted: true });
    expect((admission as { value: number }).value).toBeGreaterThanOrEqual(announcedReset);
  });

  it("keeps a step whole past a spent window's reset: back before a lookup whose write would not fit", async () => {
    const { pacer, run, clock } = setup(undefined, undefined, { limit: 10, windowMs: 10_000 });
    const writeBack =
      (sent: string[], spendAfterNote = false) =>
      async () => {
        await pacedStep('note', async () => {
          await pacer.beforeCall('POST /note');
          sent.push('note');
          if (spendAfterNote) pacer.afterAnswer(200, window(0, clock.now + 1_500));
        });
        await pacedStep('move', async () => {
          await pacer.beforeCall('GET /candidates/1');
          sent.push('lookup');
          await pacer.beforeCall('POST /candidates/1/move');
          sent.push('move');
        });
      };
    await run(() => pacer.admit('write-back', undefined, undefined, writeBack([])));
    await run(() => burst(pacer));
    clock.now = Math.ceil(clock.now / 1000) * 1000;
    // A block of three: the note, then a reset two intervals on, where the move's two calls no longer fit.
    const sent: string[] = [];
    const cut = await run(() =>
      pacer
        .admit('write-back', { at: clock.now, calls: 3 }, undefined, writeBack(sent, true))
        .catch((error: unknown) => error),
    );
    expect(sent).toEqual(['note']);
    expect(cut).toMatchObject({ code: 'ats-rate-limited', paced: true });
    expect((cut as { turnCalls: number }).turnCalls).toBeGreaterThanOrEqual(2);
  });

  it('takes a 429 as a spent window until the reset it announces, for every message of the environment', async () => {
    const { pacer, reservations, run, clock } = setup();
    const resetAt = clock.now + 8_000;
    pacer.afterAnswer(429, window(0, resetAt));
    // The schedule is pushed at the end of the event loop's turn, with whatever else asked in it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(reservations.at(-1)?.notBefore).toBeGreaterThanOrEqual(resetAt - 1000);
    await expect(run(() => pacer.beforeCall('POST /v3/notes'))).rejects.toMatchObject({ paced: true });
  });

  it('gives a call past its turn a block of its own, kept when later, with room for the run again', async () => {
    const { pacer, run, clock } = setup();
    // Nine messages learn that an invitation costs one call; the schedule is then booked by a burst.
    for (let i = 0; i < 9; i++)
      await run(() => pacer.admit('invitation', undefined, undefined, async () => pacer.beforeCall('GET /a')));
    await run(() => burst(pacer));
    const now = await run(() =>
      pacer.admit('invitation', { at: clock.now, calls: 1 }, undefined, async () => {
        await pacer.beforeCall('GET /a');
        return pacer.beforeCall('POST /b').catch((error: unknown) => error);
      }),
    );
    const extra = (now as { value: unknown }).value;
    expect(extra).toMatchObject({ code: 'ats-rate-limited', paced: true });
    // Back in that turn the message makes again the call it made, and the one it was refused.
    expect(extra).toMatchObject({ turnCalls: 2 });
    expect((extra as { turnAt?: number }).turnAt).toBeGreaterThan(0);
  });

  it('gives a step its room before it begins: back before a lookup, never between it and its write', async () => {
    const { pacer, run, clock, turns } = setup();
    // A write-back makes its note, and a stage move of two calls (a lookup and its write), once shown whole.
    const writeBack = (calls: string[]) => async () => {
      await pacedStep('note', async () => {
        calls.push('note');
        await pacer.beforeCall('POST /note');
      });
      await pacedStep('move', async () => {
        calls.push('lookup');
        await pacer.beforeCall('GET /application');
        calls.push('move');
        await pacer.beforeCall('POST /move');
      });
    };
    await run(() => pacer.admit('write-back', undefined, undefined, writeBack([])));
    await run(() => burst(pacer));
    // The next one's turn holds its note; the move's two calls are later than a worker waits.
    const sent: string[] = [];
    const turn = { at: clock.now, calls: 1 };
    const cut = await run(() =>
      pacer.admit('write-back', turn, undefined, writeBack(sent)).catch((error: unknown) => error),
    );
    expect(sent).toEqual(['note']);
    expect(cut).toMatchObject({ code: 'ats-rate-limited', paced: true, turnCalls: 2 });
    // Back for that turn, with its note done: the move runs in it, reserving nothing more.
    const { turnAt } = cut as { turnAt: number };
    clock.now = turnAt;
    const reserved = turns();
    const moved: string[] = [];
    await run(() =>
      pacer.admit('write-back', { at: turnAt, calls: 2 }, undefined, async () => {
        await pacedStep('move', async () => {
          moved.push('lookup');
          await pacer.beforeCall('GET /application');
          moved.push('move');
          await pacer.beforeCall('POST /move');
        });
      }),
    );
    expect(moved).toEqual(['lookup', 'move']);
    expect(turns()).toBe(reserved);
  });

  it("runs a step in a turn booked whole for its kind, when only this environment's cold run showed it", async () => {
    const { pacer, run, clock, turns } = setup();
    // The move's first run here is cold: a stage list not cached yet, then the lookup and the move.
    const writeBack = (moveCalls: number) => async () => {
      await pacedStep('note', () => pacer.beforeCall('POST /note'));
      await pacedStep('move', async () => {
        for (let i = 0; i < moveCalls; i++) await pacer.beforeCall('GET or POST');
      });
    };
    await run(() => pacer.admit('write-back', undefined, undefined, writeBack(3)));
    await run(() => burst(pacer));
    // Not booked whole (back for a block taken mid-run), the room is not trusted: it goes back before the move.
    const cut = await run(() =>
      pacer.admit('write-back', { at: clock.now, calls: 3 }, undefined, writeBack(2)).catch((error: unknown) => error),
    );
    expect(cut).toMatchObject({ code: 'ats-rate-limited', paced: true });
    // Booked whole at three calls (a note, and a move of two): the move runs in the two left, reserving nothing.
    const reserved = turns();
    const turn = { at: clock.now, calls: 3, whole: true };
    expect(await run(() => pacer.admit('write-back', turn, undefined, writeBack(2)))).toMatchObject({ admitted: true });
    expect(turns()).toBe(reserved);
  });

  it('learns what a kind costs from runs back for turns not begun in, not from runs cut mid-way', async () => {
    const { pacer, run, clock } = setup();
    const calls = (n: number) => async () => {
      for (let i = 0; i < n; i++) await pacer.beforeCall('GET /a');
    };
    // The first invitation is cold (a list not cached yet): three calls. A burst books the schedule far ahead.
    await run(() => pacer.admit('invitation', undefined, undefined, calls(3)));
    await run(() => burst(pacer));
    const booked = async () => {
      const admission = await run(() => pacer.admit('invitation', undefined, undefined, calls(0)));
      return admission.admitted ? undefined : admission;
    };
    expect(await booked()).toMatchObject({ turnCalls: 3 });
    // Runs back for a turn taken mid-way make fewer calls (part of the work was done): they teach nothing.
    for (let i = 0; i < 5; i++) {
      const turn = { at: clock.now, calls: 3 };
      await run(() => pacer.admit('invitation', turn, undefined, calls(1)));
    }
    expect(await booked()).toMatchObject({ turnCalls: 3 });
    // Whole runs back for their turns, as in a burst, cost two: the kind is booked at two.
    for (let i = 0; i < 5; i++) {
      const turn = { at: clock.now, calls: 3, whole: true };
      await run(() => pacer.admit('invitation', turn, undefined, calls(2)));
    }
    expect(await booked()).toMatchObject({ turnCalls: 2 });
  });

  it('books a kind at what most of its runs cost: two, where one run in three costs four', async () => {
    const { pacer, run, clock } = setup();
    const calls = (n: number) => async () => {
      for (let i = 0; i < n; i++) await pacer.beforeCall('GET /a');
    };
    await run(() => pacer.admit('write-back', undefined, undefined, calls(2)));
    for (let i = 0; i < 12; i++) {
      const turn = { at: clock.now, calls: 4, whole: true };
      await run(() => pacer.admit('write-back', turn, undefined, calls(i % 3 === 2 ? 4 : 2)));
    }
    await run(() => burst(pacer));
    const later = await run(() => pacer.admit('write-back', undefined, undefined, calls(0)));
    expect(later).toMatchObject({ admitted: false, turnCalls: 2 });
  });

  it('books a kind not shown yet like the kind it names, and its calls more, until it shows its own', async () => {
    const { pacer, run, clock } = setup();
    const calls = (n: number) => async () => {
      for (let i = 0; i < n; i++) await pacer.beforeCall('GET /a');
    };
    const like = { kind: 'write-back:stay', more: 1 };
    // Neither shown: the guess (one call) and one more.
    await run(() => burst(pacer));
    expect(
      await run(() => pacer.admit({ kind: 'write-back:move', like }, undefined, undefined, calls(0))),
    ).toMatchObject({
      admitted: false,
      turnCalls: 2,
    });
    // A write-back without a move shows three calls (its first run, and one warm): one with a move is booked at four.
    clock.now += 600_000;
    for (let i = 0; i < 2; i++) await run(() => pacer.admit('write-back:stay', undefined, undefined, calls(3)));
    await run(() => burst(pacer));
    const later = await run(() => pacer.admit({ kind: 'write-back:move', like }, undefined, undefined, calls(0)));
    expect(later).toMatchObject({ admitted: false, turnCalls: 4 });
    // Once its own cost is shown (two calls), that is what it is booked at.
    clock.now += 600_000;
    for (let i = 0; i < 2; i++)
      await run(() => pacer.admit({ kind: 'write-back:move', like }, undefined, undefined, calls(2)));
    await run(() => burst(pacer));
    expect(
      await run(() => pacer.admit({ kind: 'write-back:move', like }, undefined, undefined, calls(0))),
    ).toMatchObject({
      turnCalls: 2,
    });
  });

  it("books a kind at its calls without the list an environment's first run read for its cache", async () => {
    const { pacer, run } = setup();
    // The first run reads the stage list for the environment's cache, then makes the kind's two calls.
    await run(() =>
      pacer.admit('invitation', undefined, undefined, async () => {
        await pacer.beforeCall('GET /v1/stages', undefined, true);
        await pacer.beforeCall('GET /v1/opportunities/1');
        await pacer.beforeCall('POST /v1/opportunities/1/notes');
      }),
    );
    await run(() => burst(pacer));
    const later = await run(() => pacer.admit('invitation', undefined, undefined, async () => undefined));
    expect(later).toMatchObject({ admitted: false, turnCalls: 2 });
  });

  it('learns, from a run cut before a step, what the step has shown, not the two calls it is given', async () => {
    const { pacer, run, clock, inner } = setup();
    let book = true;
    // An invitation reads the opportunity, then posts its note; meanwhile another environment books the schedule.
    const invitation = async () => {
      await pacer.beforeCall('GET /opportunity');
      if (book) await inner.reserve('c', 60_000, clock.now);
      await pacedStep('note', () => pacer.beforeCall('POST /note'));
    };
    const cut = () =>
      run(() => pacer.admit('invitation', undefined, undefined, invitation).catch((error: unknown) => error));
    // The first, in a turn of one call (a kind not shown yet), is cut in its note: a step of one call at least.
    expect(await cut()).toMatchObject({ paced: true });
    // The next, booked at the two calls the first needed, is cut before its note, which it is given two calls for (a
    // lookup and a write): it goes back for a block of three, its read and those two.
    clock.now += 120_000;
    expect(await cut()).toMatchObject({ paced: true, turnCalls: 3 });
    // What it needed was its read and the one call the note has shown: the kind is booked at two, not three.
    clock.now += 120_000;
    book = false;
    await run(() => inner.reserve('c', 60_000, clock.now));
    const later = await run(() => pacer.admit('invitation', undefined, undefined, async () => undefined));
    expect(later).toMatchObject({ admitted: false, turnCalls: 2 });
  });

  it('counts no call the ATS refused (429) in what its kind or step costs', async () => {
    const { pacer, run, clock, inner } = setup();
    let refuse = false;
    let book = false;
    // An invitation reads the opportunity and posts its note; a refused note is sent again (kept back: window spent).
    const invitation = async () => {
      await pacer.beforeCall('GET /opportunity');
      if (book) await inner.reserve('c', 60_000, clock.now);
      await pacedStep('note', async () => {
        await pacer.beforeCall('POST /note');
        if (!refuse) return;
        pacer.afterAnswer(429, new Headers());
        await pacer.beforeCall('POST /note');
      });
    };
    const admit = () => run(() => pacer.admit('invitation', undefined, undefined, invitation));
    for (let i = 0; i < 2; i++) await admit();
    refuse = true;
    await expect(admit()).rejects.toMatchObject({ paced: true });
    // Past the window: a note still costs one call, so the next runs in its turn of two, though the schedule is
    // booked far ahead once it began.
    clock.now += 60_000;
    refuse = false;
    book = true;
    await expect(admit()).resolves.toMatchObject({ admitted: true });
  });

  it('counts a refused read once it is answered, and takes back no counted call for a refused cache fill', async () => {
    const { pacer, run, clock, inner } = setup();
    const refused = new Set<string>();
    // An invitation reads the stage list for the environment's cache, then the opportunity, then posts its note; a
    // refused call is sent again once (as the ATS client does), past the window's reset.
    const send = async (where: string, cacheFill = false) => {
      await pacer.beforeCall(where, undefined, cacheFill);
      if (!refused.delete(where)) return;
      pacer.afterAnswer(429, window(0, clock.now + 1_000));
      await clock.sleep(2_000);
      await pacer.beforeCall(where, undefined, cacheFill);
    };
    const invitation = async () => {
      await send('GET /stages', true);
      await send('GET /opportunity');
      await pacedStep('note', () => send('POST /note'));
    };
    refused.add('GET /opportunity');
    await run(() => pacer.admit('invitation', undefined, undefined, invitation));
    refused.add('GET /stages');
    refused.add('GET /opportunity');
    await run(() => pacer.admit('invitation', undefined, undefined, invitation));
    // Two calls a run, whatever was refused on the way.
    await run(() => inner.reserve('c', 60_000, clock.now));
    const later = await run(() => pacer.admit('invitation', undefined, undefined, async () => undefined));
    expect(later).toMatchObject({ admitted: false, turnCalls: 2 });
  });

  it('books a burst at what a warm run costs, not at the cold first run of the environment', async () => {
    const { pacer, run } = setup();
    let cached = false;
    // An invitation reads a list the environment caches (once), then makes two calls.
    const invitation = async () => {
      if (!cached) await pacer.beforeCall('GET /stages');
      cached = true;
      await pacer.beforeCall('GET /opportunity');
      await pacer.beforeCall('POST /note');
    };
    const burst = await run(() =>
      Promise.all(Array.from({ length: 100 }, () => pacer.admit('invitation', undefined, undefined, invitation))),
    );
    const booked = burst.flatMap((admission) => (admission.admitted ? [] : [admission.turnCalls]));
    expect(booked.length).toBeGreaterThan(50);
    expect(new Set(booked)).toEqual(new Set([2]));
  });

  it('books a kind at what another environment of the connection learnt, before it has run one', async () => {
    const { clock, pacers } = environments(2);
    const [first, second] = pacers as [Pacer, Pacer];
    let done = false;
    void (async () => {
      // The first environment learns that an invitation costs three calls (its first run, a cold one, is its own),
      // and records it with a reservation.
      for (let run = 0; run < 2; run++)
        await first.admit('invitation', undefined, undefined, async () => {
          for (let i = 0; i < 3; i++) await first.beforeCall('GET /a');
        });
      await first.admit('other', undefined, undefined, async () => undefined);
      // The second books a burst far ahead, then its first invitation: the turn it gives holds three calls.
      await Promise.all(Array.from({ length: 200 }, () => second.admit('other', undefined, undefined, async () => 0)));
      const later = await second.admit('invitation', undefined, undefined, async () => 'ran');
      expect(later).toMatchObject({ admitted: false, turnCalls: 3 });
      done = true;
    })();
    await clock.run(() => done, 600_000);
    expect(done).toBe(true);
  });

  it('refuses, unsent, a call of no message whose own turn is further off than a worker waits', async () => {
    const { pacer, run } = setup();
    await run(() => burst(pacer));
    const page = await run(() => pacer.beforeCall('GET /v3/application_stages')).catch((error: unknown) => error);
    expect(page).toMatchObject({ code: 'ats-rate-limited', paced: true, turnAt: undefined });
  });

  it('takes no turn for a call of no message it refuses, however often a sweep runs', async () => {
    const { pacer, run, inner, clock } = setup();
    // An idle schedule: the call takes its turn and goes out.
    await run(() => pacer.beforeCall('GET /v3/application_stages'));
    await run(() => burst(pacer));
    const freeAt = () => inner.reserve('c', 0, clock.now);
    const before = await run(freeAt);
    for (let i = 0; i < 50; i++)
      await run(() => pacer.beforeCall('GET /v3/application_stages')).catch((error: unknown) => error);
    expect(await run(freeAt)).toBe(before);
  });

  it('books ahead at what a worker learnt as soon as it learnt it, before that worker reserves again', async () => {
    const { clock, pacers } = environments(2);
    const [worker, webhook] = pacers as [Pacer, Pacer];
    let booked: Awaited<ReturnType<Pacer['bookAhead']>> | undefined;
    void (async () => {
      // A write-back costs three calls: the worker's first run is cold (its own), the second records it.
      for (let run = 0; run < 2; run++)
        await worker.admit('report-created:stay', undefined, undefined, async () => {
          for (let i = 0; i < 3; i++) await worker.beforeCall('POST /note');
        });
      // The webhook's environment backlogs the schedule, then books a report: at three calls, with no other turn of
      // the worker's in between.
      await Promise.all(Array.from({ length: 200 }, () => webhook.admit('other', undefined, undefined, async () => 0)));
      booked = await webhook.bookAhead('report-created:stay', 0);
    })();
    await clock.run(() => booked !== undefined, 600_000);
    expect(booked?.turn).toMatchObject({ calls: 3, kind: 'report-created:stay' });
  });

  it('books a turn ahead for a message not yet enqueued only on a backlogged schedule, at its end', async () => {
    const { pacer, run, inner, clock } = setup(undefined, 5_000);
    const freeAt = () => inner.reserve('c', 0, clock.now);
    // Free soon: nothing is booked, and the schedule is as it was.
    await run(() => pacer.beforeCall('GET /v3/stages'));
    const idle = await run(freeAt);
    expect(await run(() => pacer.bookAhead('other', 20_000))).toEqual({ freeSoon: true });
    expect(await run(freeAt)).toBe(idle);
    // A burst booked it far ahead: a kind of no cost shown yet is booked at a guess, where the schedule was free.
    await run(() => burst(pacer));
    const guessed = await run(freeAt);
    const first = await run(() => pacer.bookAhead('report-created:stay', 0));
    expect(first.turn).toMatchObject({ at: guessed, whole: true, kind: 'report-created:stay' });
    const end = await run(freeAt);
    expect(end).toBe(guessed + (first.turn?.calls ?? 0) * pacer.intervalMs);
    expect(first.turn?.calls).toBeGreaterThanOrEqual(1);
    // One booked like a kind shown: the turn is where the schedule was free, and it holds the kind's calls.
    const booked = await run(() =>
      pacer.bookAhead({ kind: 'report-created:move', like: { kind: 'other', more: 2 } }, 0),
    );
    expect(booked.turn).toMatchObject({ at: end, whole: true, kind: 'report-created:move' });
    if (!booked.turn) return;
    const { turn, returnInMs } = booked;
    // Booked like the kind it names, and its calls more.
    const calls = turn.calls;
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(await run(freeAt)).toBe(end + calls * pacer.intervalMs);
    // Out of sight until shortly before it, early enough for the queue's batching window, and near enough to wait for.
    const backAt = clock.now + returnInMs;
    expect(backAt + 5_000).toBeLessThan(end);
    expect(end - (backAt - 1_000)).toBeLessThanOrEqual(pacer.holdMs);
    // Run in that turn, it reserves nothing more.
    clock.now = backAt;
    expect(await run(() => pacer.admit('report-created:move', turn, undefined, async () => 'ran'))).toEqual({
      admitted: true,
      value: 'ran',
    });
    expect(await run(freeAt)).toBe(end + calls * pacer.intervalMs);
  });
});
