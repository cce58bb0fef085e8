import { AsyncLocalStorage } from 'node:async_hooks';
import { sleep as defaultSleep, timeLeftMs } from '../http';
import { AtsError, ATS_ERROR_CODES } from './errors';

/** An ATS's rate limit: `limit` calls per `windowMs`. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/**
 * The seam between an ATS client and its pacing, as the AWS SDK's `getSendToken` / `updateClientSendingRate`: asked
 * before each call is sent, told of each answer. The client knows nothing else of pacing.
 */
export interface CallGate {
  /** Resolves when the call may be sent; throws a rate-limited AtsError (nothing sent) when it must wait longer. */
  beforeCall(where: string, signal?: AbortSignal): Promise<void>;
  /** The ATS's answer: its status and headers (the window it announces, a 429's reset). */
  afterAnswer(status: number, headers: Headers): void;
}

/**
 * A connection's schedule of turns, one for every execution environment of every function (DynamoDB on AWS): the
 * moment from which the ATS's budget is free.
 */
export interface RateSchedule {
  /** Reserves `spanMs` of the schedule, starting at `notBefore` at the earliest; returns where the span starts. */
  reserve(connectionId: string, spanMs: number, notBefore: number): Promise<number>;
}

/** A message was admitted and its work ran (`value`), or its work did not run and it comes back for its turn. */
export type Admission<T> =
  | { admitted: true; value: T }
  | { admitted: false; turnAt: number; turnCalls: number; waitMs: number };

/** A turn reserved on the schedule: when it begins, and how many calls' intervals it holds. */
export interface Turn {
  at: number;
  calls: number;
}

/**
 * The share of the ATS's rate the schedule gives out: the rest absorbs a call sent a little late or early (a queue's
 * delay counts in whole seconds, a batch is gathered for a second), so no window the ATS counts from its first
 * call holds more than its limit.
 */
const RATE_SHARE = 0.95;
/** A turn this close is waited for in the worker; a later one goes back to the queue until then. */
const WAIT_IN_WORKER_MS = 3_000;

/**
 * What a message costs in calls until a few of its kind have shown it: one, as a call beyond those reserved costs a
 * turn of its own, while a call reserved and not made leaves its interval unused.
 */
const DEFAULT_CALLS = 1;
/** Messages of a kind that must finish before what they cost is believed. */
const LEARNT_AFTER = 3;
/**
 * While a kind's cost is unknown in this environment, this many of its messages run at a time to show it; the others
 * wait in the worker for them (PROBE_WAIT_MS at most, then at the guessed cost), so a burst is not booked at a guess
 * and no message spends one of its deferrals on it.
 */
const PROBES = 3;
const PROBE_WAIT_MS = 3_000;
const PROBE_POLL_MS = 100;
/** The longest a reset header is believed for: a longer one is more likely a misread unit than a real window. */
const MAX_RESET_WAIT_MS = 15 * 60_000;

/** The window an ATS announces in its answers (Greenhouse `X-RateLimit-*`, Workable `X-Rate-Limit-*`). */
export interface AnnouncedWindow {
  remaining: number;
  resetAt: number;
}

/** The moment the ATS's window resets, in epoch seconds as announced; undefined when absent or not believable. */
export function announcedResetAt(headers: Headers, now: number): number | undefined {
  const reset = Number(headers.get('x-ratelimit-reset') ?? headers.get('x-rate-limit-reset') ?? Number.NaN);
  if (!Number.isFinite(reset) || reset <= 0) return undefined;
  const at = reset * 1000;
  return at > now && at - now <= MAX_RESET_WAIT_MS ? at : undefined;
}

function announcedWindow(headers: Headers, now: number): AnnouncedWindow | undefined {
  const remaining = Number(headers.get('x-ratelimit-remaining') ?? headers.get('x-rate-limit-remaining') ?? Number.NaN);
  const resetAt = announcedResetAt(headers, now);
  return Number.isFinite(remaining) && resetAt !== undefined ? { remaining, resetAt } : undefined;
}

/** The message being worked: its turn, the calls reserved in it, and the calls it has made. */
interface Ticket {
  pacer: Pacer;
  kind: string;
  /** The block of intervals the message's calls take now: its turn, or a block it reserved since. */
  turnAt: number;
  slots: number;
  /** Calls taken from the block. */
  used: number;
  /** Calls the message needed in all: what its kind costs. */
  calls: number;
}

const tickets = new AsyncLocalStorage<Ticket>();

export interface PacerOptions {
  connectionId: string;
  rate: RateLimit;
  schedule: RateSchedule;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Paces one connection's calls to its ATS's rate across every execution environment. Each message reserves a turn
 * on the connection's shared schedule: one interval for each call it is expected to make (a message whose turn is
 * later goes back to the queue until then, carrying it). Its calls go out one interval apart from its turn; a call
 * beyond those reserved reserves its own interval, and the intervals it did not use are given back with the next
 * reservation. So every call has its own place on the schedule. A small local guard never sends into a window the
 * ATS announced as spent, and moves the schedule past its reset.
 */
export class Pacer implements CallGate {
  /** Between two calls at the share of the rate the schedule gives out. */
  public readonly intervalMs: number;
  private readonly options: PacerOptions;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private window: AnnouncedWindow | undefined;
  private readonly costs = new Map<string, { messages: number; calls: number }>();
  private readonly probing = new Map<string, number>();
  private waiting: { spanMs: number; notBefore: number; done: (start: number | Error) => void }[] = [];
  private reserving = false;
  private pushedTo = 0;

  public constructor(options: PacerOptions) {
    this.options = options;
    this.intervalMs = options.rate.windowMs / (options.rate.limit * RATE_SHARE);
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? defaultSleep;
  }

  /**
   * A message of `kind` begins: its turn (`reserved` when it went back, or reserved now) is waited for here
   * when close, and its work runs; a later turn is returned and the work does not run.
   */
  public async admit<T>(
    kind: string,
    reserved: Turn | undefined,
    signal: AbortSignal | undefined,
    work: () => Promise<T>,
  ): Promise<Admission<T>> {
    if (reserved === undefined) await this.learnFirst(kind, signal);
    const learnt = this.isLearnt(kind);
    const probes = this.probing.get(kind) ?? 0;
    const slots = reserved?.calls ?? Math.max(1, Math.round(this.expectedCalls(kind)));
    const turn = reserved?.at ?? (await this.reserve(slots * this.intervalMs, this.now()));
    const wait = turn - this.now();
    if (wait > WAIT_IN_WORKER_MS || wait >= timeLeftMs(signal, this.now))
      return { admitted: false, turnAt: turn, turnCalls: slots, waitMs: wait };
    if (wait > 0) await this.sleep(wait, signal);
    const ticket: Ticket = { pacer: this, kind, turnAt: turn, slots, used: 0, calls: 0 };
    if (!learnt) this.probing.set(kind, probes + 1);
    try {
      return { admitted: true, value: await tickets.run(ticket, work) };
    } finally {
      if (!learnt) this.probing.set(kind, (this.probing.get(kind) ?? 1) - 1);
      // What it needed: the calls it made, and one it was refused a turn for.
      const cost = this.costs.get(kind) ?? { messages: 0, calls: 0 };
      this.costs.set(kind, { messages: cost.messages + 1, calls: cost.calls + ticket.calls });
    }
  }

  private isLearnt(kind: string): boolean {
    return (this.costs.get(kind)?.messages ?? 0) >= LEARNT_AFTER;
  }

  /** Waits (bounded) while the probes of a kind not yet learnt are out; the message then books at what they show. */
  private async learnFirst(kind: string, signal: AbortSignal | undefined): Promise<void> {
    const until = this.now() + Math.min(PROBE_WAIT_MS, timeLeftMs(signal, this.now) / 2);
    while (!this.isLearnt(kind) && (this.probing.get(kind) ?? 0) >= PROBES && this.now() < until)
      await this.sleep(PROBE_POLL_MS, signal);
  }

  /** How long until the ATS takes `calls` calls, by the window it last announced; 0 when it does now. */
  public waitMs(calls = 1): number {
    const now = this.now();
    const window = this.window;
    return window && now < window.resetAt && window.remaining < calls ? window.resetAt - now : 0;
  }

  public async beforeCall(where: string, signal?: AbortSignal): Promise<void> {
    const ticket = tickets.getStore();
    const mine = ticket?.pacer === this ? ticket : undefined;
    this.guard(where);
    // A message's calls go out an interval apart from its turn. Past the intervals it holds, it reserves a new block
    // of what its kind costs (were it to go back, it reads again what it read before its next write); a call of no
    // message (a sweep's page, a follow-up) reserves one interval.
    const inBlock = mine !== undefined && mine.used < mine.slots;
    if (mine && !inBlock) {
      mine.slots = Math.max(1, Math.round(this.expectedCalls(mine.kind)));
      mine.turnAt = await this.reserve(mine.slots * this.intervalMs, this.now());
      mine.used = 0;
    }
    const due = mine ? mine.turnAt + mine.used * this.intervalMs : await this.reserve(this.intervalMs, this.now());
    const wait = due - this.now();
    if (wait > 0) {
      // A turn too far off: the message goes back for it, keeping it (a sweep's page just stops).
      if ((!inBlock && wait > WAIT_IN_WORKER_MS) || wait >= timeLeftMs(signal, this.now)) {
        if (mine) mine.calls++;
        throw spent(where, wait, 'its turn is later', mine && !inBlock ? { at: due, calls: mine.slots } : undefined);
      }
      await this.sleep(wait, signal);
      this.guard(where);
    }
    if (mine) {
      mine.used++;
      mine.calls++;
    }
    if (this.window && this.now() < this.window.resetAt) this.window.remaining--;
  }

  public afterAnswer(status: number, headers: Headers): void {
    const now = this.now();
    const announced = announcedWindow(headers, now);
    if (announced) this.window = announced;
    if (status !== 429) return;
    const retryAfter = Number(headers.get('retry-after') ?? Number.NaN);
    const resetAt =
      announced?.resetAt ??
      announcedResetAt(headers, now) ??
      now + (Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : this.options.rate.windowMs);
    this.window = { remaining: 0, resetAt };
    this.pushSchedule(resetAt);
  }

  /** Never sends into a window the ATS announced as spent: the schedule moves past its reset, and nothing is sent. */
  private guard(where: string): void {
    const window = this.window;
    const now = this.now();
    if (!window || now >= window.resetAt || window.remaining > 0) return;
    this.pushSchedule(window.resetAt);
    throw spent(where, window.resetAt - now, "the ATS's window is spent");
  }

  private pushSchedule(resetAt: number): void {
    if (resetAt <= this.pushedTo) return;
    this.pushedTo = resetAt;
    // The turns after the reset are taken from there: nobody else's message is sent into the spent window.
    this.reserve(0, resetAt).catch(() => undefined);
  }

  private expectedCalls(kind: string): number {
    const cost = this.costs.get(kind);
    return cost && cost.messages >= LEARNT_AFTER ? cost.calls / cost.messages : DEFAULT_CALLS;
  }

  /** One reservation on the shared schedule for every message of this environment that asks at the same moment. */
  private reserve(spanMs: number, notBefore: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({
        spanMs,
        notBefore,
        done: (start) => (start instanceof Error ? reject(start) : resolve(start)),
      });
      if (!this.reserving) void this.reserveWaiting();
    });
  }

  private async reserveWaiting(): Promise<void> {
    this.reserving = true;
    try {
      // Bounded: each round takes every request waiting, and a round's requests were made before it began.
      for (let round = 0; round < 1_000 && this.waiting.length; round++) {
        const batch = this.waiting.splice(0);
        const spans = batch.reduce((sum, request) => sum + request.spanMs, 0);
        const notBefore = Math.max(...batch.map((request) => request.notBefore));
        try {
          let at = await this.options.schedule.reserve(this.options.connectionId, spans, notBefore);
          for (const request of batch) {
            request.done(at);
            at += request.spanMs;
          }
        } catch (error) {
          for (const request of batch) request.done(error instanceof Error ? error : new Error(String(error)));
        }
      }
    } finally {
      this.reserving = false;
    }
  }
}

/** A call the pacer kept back (nothing was sent): retryable after `waitMs`, in the `turn` it keeps where it has one. */
function spent(where: string, waitMs: number, why: string, turn?: Turn): AtsError {
  return new AtsError(ATS_ERROR_CODES.rateLimited, `${where}: ${why}; not sent`, {
    retryAfterMs: Math.ceil(waitMs),
    paced: true,
    ...(turn === undefined ? {} : { turnAt: turn.at, turnCalls: turn.calls }),
  });
}
