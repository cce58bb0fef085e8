import { Pacer, pacedStep, type RateSchedule } from '../../../shared/ats/pacer';
import { greenhouseProfile } from '../../../shared/ats/greenhouse/profile';
import { turnDelaySeconds } from '../../../functions/_runtime/deferral';

/** Time that moves only when every task waits: each sleep is a timer, run in order of its end. */
export class VirtualClock {
  public now = 1_800_000_000_000;
  private timers: { at: number; seq: number; wake: () => void }[] = [];
  private seq = 0;

  public readonly sleep = (ms: number): Promise<void> =>
    new Promise((wake) => {
      this.timers.push({ at: this.now + Math.max(0, ms), seq: this.seq++, wake });
    });

  /** Runs until `done`, or throws once virtual time passes `limitMs` from the start or nothing is left to wake. */
  public async run(done: () => boolean, limitMs: number): Promise<void> {
    const start = this.now;
    for (let step = 0; step < 2_000_000; step++) {
      await settle();
      if (done()) return;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift();
      if (!next) throw new Error('nothing left to run');
      this.now = Math.max(this.now, next.at);
      if (this.now - start > limitMs) throw new Error(`not done after ${limitMs} ms of virtual time`);
      next.wake();
    }
    throw new Error('too many steps');
  }
}

const settle = async () => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** The shared schedule as DynamoDB keeps it, one atomic update a reservation, after a round trip. */
export function memorySchedule(clock: VirtualClock, latencyMs = 4): RateSchedule {
  const next = new Map<string, number>();
  const recorded = new Map<string, Record<string, number>>();
  return {
    async reserve(connectionId, spanMs, notBefore, options = {}) {
      await clock.sleep(latencyMs);
      const free = next.get(connectionId) ?? 0;
      const start = Math.max(free, notBefore);
      if (options.latest !== undefined && start > options.latest) return start;
      if (options.busyOnly && free < notBefore) {
        options.seen?.(recorded.get(connectionId) ?? {});
        return next.has(connectionId) ? free : Number.NEGATIVE_INFINITY;
      }
      next.set(connectionId, start + Math.max(0, spanMs));
      const old = recorded.get(connectionId) ?? {};
      recorded.set(connectionId, { ...old, ...options.publish });
      options.seen?.(old);
      return start;
    },
  };
}

/**
 * An ATS counting one credential's calls in fixed windows that start at the first call after the last ended (as the
 * sandboxes do); over the limit, 429. With `headers`, every answer announces the window as Greenhouse does.
 */
export class WindowedAts {
  public calls = 0;
  public refused = 0;
  public firstAt: number | undefined;
  public lastAt = 0;
  private windowStart = Number.NEGATIVE_INFINITY;
  private count = 0;

  public constructor(
    private readonly clock: VirtualClock,
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly headers: boolean,
  ) {}

  public answer(): { status: number; headers: Headers } {
    const now = this.clock.now;
    if (now >= this.windowStart + this.windowMs) {
      this.windowStart = now;
      this.count = 0;
    }
    this.count++;
    this.calls++;
    this.firstAt ??= now;
    this.lastAt = now;
    const over = this.count > this.limit;
    if (over) this.refused++;
    const resetAt = this.windowStart + this.windowMs;
    const headers = new Headers(
      this.headers
        ? {
            'x-ratelimit-limit': String(this.limit),
            'x-ratelimit-remaining': String(Math.max(0, this.limit - this.count)),
            'x-ratelimit-reset': String(Math.ceil(resetAt / 1000)),
          }
        : over
          ? { 'retry-after': String(Math.ceil((resetAt - now) / 1000)) }
          : {},
    );
    return { status: over ? 429 : 200, headers };
  }
}

export interface BurstSetup {
  environments: number;
  /** Messages one environment works at once (a batch). */
  perEnvironment: number;
  limit: number;
  windowMs: number;
  headers: boolean;
  /** Each message's work, as the pipeline does it. */
  messages: SimulatedWork[];
  /** How fast the messages arrive (40 a second by default, in waves of 20). */
  arrivalsPerSecond?: number;
  random: () => number;
}

/**
 * A message's work as a use case does it: `reads` calls first (a confirmation), made again each time it runs; then
 * its steps in order, each of a number of calls (a write, or a lookup and its write), skipped once done. A step cut
 * before its end is done again whole.
 */
export interface SimulatedWork {
  kind: string;
  reads: number;
  steps: number[];
}

/** The calls a message needs if it runs once: its reads and its steps. */
export const callsOf = (work: SimulatedWork): number => work.reads + work.steps.reduce((a, b) => a + b, 0);

export interface BurstResult {
  calls: number;
  refused: number;
  /** Calls the ATS took, over what its limit allows in the time between the first and the last call. */
  share: number;
  deferrals: number;
  finishedAt: number;
  /** The calls the messages need if each runs once (callsOf). */
  needed: number;
}

/**
 * A burst through N environments' pacers: every message is on the queue at once; a worker takes one, the pacer
 * admits it or gives its turn (it goes back with a whole-second delay and a batch's gathering, as SQS and the event
 * source hand it back), and its calls meet the ATS. A refused call sends it back; its calls made stay made.
 */
export async function runBurst(setup: BurstSetup, limitMs: number): Promise<BurstResult> {
  const clock = new VirtualClock();
  const ats = new WindowedAts(clock, setup.limit, setup.windowMs, setup.headers);
  const schedule = memorySchedule(clock);
  const rate = { limit: setup.limit, windowMs: setup.windowMs };
  const pacers = Array.from(
    { length: setup.environments },
    () =>
      new Pacer({
        connectionId: 'c',
        rate,
        rateHeaders: greenhouseProfile.rateHeaders,
        schedule,
        now: () => clock.now,
        sleep: clock.sleep,
      }),
  );
  // The messages arrive as an ATS's webhooks bring them: `arrivalsPerSecond`, in waves of 20.
  const waveMs = (20 / (setup.arrivalsPerSecond ?? 40)) * 1000;
  const queue = setup.messages.map((work, i) => ({
    work,
    stepsDone: 0,
    turn: undefined as { at: number; calls: number; whole?: boolean } | undefined,
    at: clock.now + Math.floor(i / 20) * waveMs,
  }));
  let finished = 0;
  const done: (typeof queue)[number][] = [];
  let deferrals = 0;
  const back = (message: (typeof queue)[number], delayMs: number) => {
    deferrals++;
    // The event source gathers a batch for a second before it hands it over.
    message.at = clock.now + delayMs + setup.random() * 1000;
    queue.push(message);
  };
  const call = async (pacer: Pacer) => {
    await pacer.beforeCall('GET /v3/applications');
    await clock.sleep(20 + setup.random() * 40);
    const answer = ats.answer();
    await clock.sleep(10);
    pacer.afterAnswer(answer.status, answer.headers);
    if (answer.status === 429) throw Object.assign(new Error('429'), { retryAfterMs: 1000 });
  };
  const work = async (pacer: Pacer) => {
    for (let turn = 0; turn < 100_000 && finished < setup.messages.length; turn++) {
      const index = queue.findIndex((m) => m.at <= clock.now);
      if (index < 0) {
        await clock.sleep(200);
        continue;
      }
      const [message] = queue.splice(index, 1) as [(typeof queue)[number]];
      try {
        const { work: w } = message;
        const admission = await pacer.admit(w.kind, message.turn, undefined, async () => {
          for (let read = 0; read < w.reads; read++) await call(pacer);
          for (; message.stepsDone < w.steps.length; message.stepsDone++) {
            const calls = w.steps[message.stepsDone] as number;
            await pacedStep(`step-${message.stepsDone}`, async () => {
              for (let c = 0; c < calls; c++) await call(pacer);
            });
          }
        });
        if (admission.admitted) {
          finished++;
          done.push(message);
        } else {
          // Its work has not begun: it runs whole in the turn it comes back for (as the worker's deferral marks it).
          message.turn = { at: admission.turnAt, calls: admission.turnCalls, whole: true };
          back(message, turnDelaySeconds(admission.returnInMs) * 1000);
        }
      } catch (error) {
        // A turn the pacer kept for the call goes with the message, as the worker's deferral carries it.
        const { turnAt, turnCalls, retryAfterMs } = error as {
          turnAt?: number;
          turnCalls?: number;
          retryAfterMs?: number;
        };
        message.turn = turnAt === undefined ? undefined : { at: turnAt, calls: turnCalls ?? 1 };
        back(
          message,
          turnAt === undefined
            ? Math.ceil((retryAfterMs ?? 1000) / 1000) * 1000
            : turnDelaySeconds(retryAfterMs ?? turnAt - clock.now) * 1000,
        );
      }
    }
  };
  for (const pacer of pacers) for (let slot = 0; slot < setup.perEnvironment; slot++) void work(pacer);
  await clock.run(() => finished === setup.messages.length, limitMs);
  const span = Math.max(ats.lastAt - (ats.firstAt ?? 0), setup.windowMs);
  const accepted = ats.calls - ats.refused;
  return {
    calls: ats.calls,
    refused: ats.refused,
    share: accepted / ((span / setup.windowMs) * setup.limit),
    deferrals,
    finishedAt: clock.now,
    needed: done.reduce((sum, m) => sum + callsOf(m.work), 0),
  };
}
