import { sleep as defaultSleep, timeLeftMs } from '../http';
import type { StepKind } from '../ats/profile';
import { keptBack } from './gate';
import { intervalMs, type RateLimit, type RateSchedule } from './schedule';

/**
 * A turn this close is waited for in the worker; a later one sends the message back for it. A longer wait would hold
 * an environment every customer's messages share.
 */
const HOLD_MS = 4_000;
/**
 * A message going back for its turn comes back this much before it: its queue's delay counts in whole seconds
 * (rounded down), and its event source gathers a batch for up to a second.
 */
const RETURN_EARLY_MS = 2_000;
/**
 * Messages going back come back on a grid of this step on the clock, every environment's alike, each at the grid's
 * last moment RETURN_EARLY_MS before its turn: those whose turns fall in one step come back in one receive, and wait
 * for their own turns in the worker. Without it, each came back on its own (Greenhouse 50 per 10 s, 5 + 5
 * environments: 4.18 SQS requests per candidate).
 */
const RETURN_GRID_MS = 5_000;

/** A turn a message holds on its connection's schedule: when it begins, and the calls it holds intervals for. */
export interface HeldTurn {
  at: number;
  calls: number;
}

export interface TurnsOptions {
  connectionId: string;
  rate: RateLimit;
  schedule: RateSchedule;
  /** What each step costs in calls, as its vendor's profile declares it. */
  stepCalls: Readonly<Record<StepKind, number>>;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Each message's turn on its connection's shared schedule. Once its record shows its work is not done (so a duplicate
 * never books), a message books the calls its step declares, in one conditional write from the schedule's free
 * moment. A turn within HOLD_MS is waited for; a later one sends the message back carrying it (a retryable rate-limit
 * error naming the turn, which the worker defers; it comes back on the return grid), and the message runs in it when
 * it returns, without booking again. Calls beyond the declaration are the gate's to catch (./gate.ts).
 */
export class Turns {
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The bookings asked for in this turn of the event loop: a batch's messages share one write. */
  private waiting: { calls: number; done: (at: number | Error) => void }[] = [];

  public constructor(private readonly options: TurnsOptions) {
    this.intervalMs = intervalMs(options.rate);
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? defaultSleep;
  }

  /**
   * Waits for the message's turn (`held` when it went back for one), or throws it back to the queue carrying it.
   * `beforeWait`: what its message says before it waits, in the worker or in the queue (never for a turn that is now).
   */
  public async take(
    step: StepKind,
    held: HeldTurn | undefined,
    signal?: AbortSignal,
    beforeWait?: () => Promise<void>,
  ): Promise<void> {
    const calls = held?.calls ?? this.options.stepCalls[step];
    const at = held?.at ?? (await this.reserveTogether(calls));
    if (at <= this.now()) return;
    await beforeWait?.();
    const wait = at - this.now();
    if (wait <= 0) return;
    // A message back for its turn came back on the grid, up to a step before it. A near turn is waited for only where
    // its declared calls still fit in the invocation after it (one that ran out of time mid-way would lose its turn
    // and book again at the end); otherwise it goes back to come just before its turn, to an invocation with the time.
    const patience = held ? HOLD_MS + RETURN_GRID_MS : HOLD_MS;
    const turn = { at, calls, step };
    if (wait <= patience) {
      if (wait + calls * this.intervalMs < timeLeftMs(signal, this.now)) return this.sleep(wait, signal);
      throw keptBack(`${step}`, Math.max(0, wait - RETURN_EARLY_MS), turn);
    }
    const back = Math.floor((at - RETURN_EARLY_MS) / RETURN_GRID_MS) * RETURN_GRID_MS;
    throw keptBack(`${step}`, Math.max(0, back - this.now()), turn);
  }

  /**
   * A turn for work of no message (a sweep's page), taken only when it comes within HOLD_MS: answers whether it was;
   * a turn reserved and not taken would be intervals no one uses.
   */
  public async takeNear(step: StepKind, signal?: AbortSignal): Promise<boolean> {
    const now = this.now();
    const latest = now + Math.min(HOLD_MS, timeLeftMs(signal, this.now) / 2);
    const at = await this.reserve(this.options.stepCalls[step], now, latest);
    if (at > latest) return false;
    if (at > now) await this.sleep(at - now, signal);
    return true;
  }

  /**
   * One reservation for every booking this environment asks for in the same turn of the event loop (a batch's
   * messages begin together), each its span of it in the order asked.
   */
  private reserveTogether(calls: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ calls, done: (at) => (at instanceof Error ? reject(at) : resolve(at)) });
      if (this.waiting.length === 1) setImmediate(() => void this.reserveWaiting());
    });
  }

  private async reserveWaiting(): Promise<void> {
    const batch = this.waiting.splice(0);
    try {
      let at = await this.reserve(
        batch.reduce((sum, booking) => sum + booking.calls, 0),
        this.now(),
      );
      for (const booking of batch) {
        booking.done(at);
        at += booking.calls * this.intervalMs;
      }
    } catch (error) {
      for (const booking of batch) booking.done(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private reserve(calls: number, notBefore: number, latest?: number): Promise<number> {
    return this.options.schedule.reserve(this.options.connectionId, calls * this.intervalMs, notBefore, latest);
  }
}
