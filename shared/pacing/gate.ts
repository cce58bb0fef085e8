import { sleep as defaultSleep, timeLeftMs } from '../http';
import type { CallGate } from '../ats/call-gate';
import { AtsError, ATS_ERROR_CODES } from '../ats/errors';
import { type AnnouncedWindow, announcedResetAt, announcedWindow, type RateHeaders } from '../ats/profile';
import { intervalMs, type RateLimit, type RateSchedule } from './schedule';

export interface GateOptions {
  connectionId: string;
  rate: RateLimit;
  /** The headers the ATS announces its window in (its profile's), if it announces one. */
  rateHeaders?: RateHeaders | undefined;
  schedule: RateSchedule;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * The connection's call gate in this environment, asked before each call and told of each answer (the seam of the
 * AWS SDK's client rate limiter). Calls go out an interval apart here, so a message's calls keep to the intervals its
 * turn holds. The ATS's headers are the ground truth: nothing is sent into a window it announced as spent; a reset
 * close enough past the call's slot is waited for, a further one keeps the call back (nothing sent, retryable), and a
 * spent window or a 429 moves the shared schedule past its reset, so no environment's turn falls inside it.
 */
export class CallPacer implements CallGate {
  public readonly intervalMs: number;
  /**
   * A spent window's reset up to an interval past a call's slot is waited for: a reset announced in whole seconds is
   * up to 1 s late, and a call kept back sends its message to the queue and off its turn (docs/benchmark.md). Past
   * the spare the 95 % leaves in a window, the late call takes a slot the schedule gave a later turn, and the window it
   * opens is asked for one call more than it holds: the environment whose call would be that one sees the window spent
   * in its last answer and waits or keeps it back; one that has not seen it meets a 429 (0 to 3 a run in the bench).
   */
  private readonly resetWaitMs: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private window: AnnouncedWindow | undefined;
  private nextCallAt = 0;
  private pushedTo = 0;

  public constructor(private readonly options: GateOptions) {
    this.intervalMs = intervalMs(options.rate);
    this.resetWaitMs = this.intervalMs;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? defaultSleep;
  }

  /** How long until the ATS takes a call, by the window it last announced; 0 when it does now. */
  public waitMs(): number {
    const window = this.window;
    return window && window.remaining < 1 && this.now() < window.resetAt ? window.resetAt - this.now() : 0;
  }

  public async beforeCall(where: string, signal?: AbortSignal): Promise<void> {
    // Each call takes the next slot an interval on. A spent window is waited for when its reset falls within an
    // interval past that slot, counted from the slot.
    const now = this.now();
    const slot = Math.max(now, this.nextCallAt);
    const spent = this.waitMs();
    if (spent > 0) this.pushSchedule(now + spent);
    const start = Math.max(slot, now + spent);
    if (start - slot > this.resetWaitMs || start - now >= timeLeftMs(signal, this.now))
      throw keptBack(where, start - now);
    this.nextCallAt = start + this.intervalMs;
    if (start > now) await this.sleep(start - now, signal);
    if (this.window && this.now() < this.window.resetAt) this.window.remaining--;
  }

  public afterAnswer(status: number, headers: Headers): void {
    const now = this.now();
    const announced = announcedWindow(this.options.rateHeaders, headers, now);
    if (announced) this.window = announced;
    if (status !== 429) return;
    // A 429's Retry-After is the wait the ATS asks for; else its window's announced reset; else a whole window.
    const retryAfter = Number(headers.get('retry-after') ?? Number.NaN);
    const resetAt =
      Number.isFinite(retryAfter) && retryAfter > 0
        ? now + retryAfter * 1000
        : (announced?.resetAt ??
          announcedResetAt(this.options.rateHeaders, headers, now) ??
          now + this.options.rate.windowMs);
    this.window = { remaining: 0, resetAt };
    this.pushSchedule(resetAt);
  }

  /** The turns after a spent window's reset are taken from there: nobody's message is sent into it. */
  private pushSchedule(resetAt: number): void {
    if (resetAt <= this.pushedTo) return;
    this.pushedTo = resetAt;
    this.options.schedule.reserve(this.options.connectionId, 0, resetAt).catch(() => undefined);
  }
}

/** A call the gate kept back (nothing was sent): retryable after `waitMs`. */
export function keptBack(where: string, waitMs: number, turn?: { at: number; calls: number; step: string }): AtsError {
  return new AtsError(ATS_ERROR_CODES.rateLimited, `${where}: its turn on the ATS's rate limit is later; not sent`, {
    retryAfterMs: Math.ceil(waitMs),
    paced: true,
    ...(turn ? { turnAt: turn.at, turnCalls: turn.calls, turnKind: turn.step } : {}),
  });
}
