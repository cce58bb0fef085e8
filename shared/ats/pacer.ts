import { AsyncLocalStorage } from 'node:async_hooks';
import { sleep as defaultSleep, timeLeftMs } from '../http';
import { AtsError, ATS_ERROR_CODES } from './errors';
import { type AnnouncedWindow, announcedResetAt, announcedWindow, type RateHeaders } from './profile';
import type { Admission, AtsPacing, BookedAhead, Like, PacedKind, Turn } from './port';

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
  /**
   * Resolves when the call may be sent; throws a rate-limited AtsError (nothing sent) when it must wait longer.
   * `cacheFill`: a list read once for the environment's cache, which takes its turn but is no part of what the
   * message's kind costs.
   */
  beforeCall(where: string, signal?: AbortSignal, cacheFill?: boolean): Promise<void>;
  /** The ATS's answer: its status and headers (the window it announces, a 429's reset). */
  afterAnswer(status: number, headers: Headers): void;
}

/**
 * A connection's schedule of turns, one for every execution environment of every function (DynamoDB on AWS): the
 * moment from which the ATS's budget is free, and what each kind of message and step has cost in calls, as the
 * environments have shown it (so an environment books a burst at what another learnt, before it has seen one).
 */
export interface RateSchedule {
  /**
   * Reserves `spanMs` of the schedule, starting at `notBefore` at the earliest; returns where the span starts. The
   * same write records the costs `options.publish` holds, and hands the schedule's to `options.seen`. With
   * `options.latest`, a span that cannot start by then is not reserved: the answer is where it would have started.
   */
  reserve(connectionId: string, spanMs: number, notBefore: number, options?: ReserveOptions): Promise<number>;
}

export interface ReserveOptions extends Partial<SharedCosts> {
  /** Reserve only a span that starts by this moment (a call of no message takes a near turn or none). */
  latest?: number;
  /**
   * Reserve only on a schedule busy until `notBefore` or later (a backlog): a freer one is left as it is, and the
   * answer is where it is free, before `notBefore` (or -Infinity, a schedule never used). `seen` hears its costs
   * either way.
   */
  busyOnly?: boolean;
}

/** The most costs one reservation records (a burst learns a handful of kinds); the rest wait for the next. */
export const MAX_COSTS_PER_RESERVATION = 20;

/** Costs in calls by kind (`invitation`, `write-back/stage-moved`): this environment's to record, the schedule's. */
export interface SharedCosts {
  publish: Record<string, number>;
  seen(costs: Record<string, number>): void;
}

export type { Admission, BookedAhead, Like, PacedKind, Turn } from './port';

/**
 * The share of the ATS's rate the schedule gives out: the rest absorbs a call sent a little late or early (a queue's
 * delay counts in whole seconds, an event source gathers a batch for its window), so no window the ATS counts from
 * its first call holds more than its limit.
 */
const RATE_SHARE = 0.95;
/**
 * Messages that go back for later turns come back on a grid every environment of the connection shares: each at the
 * grid's last moment `returnEarlyMs` before its turn, so those whose turns fall in the same step come back in one
 * receive, and wait there for their own turn. A step holds RETURN_GROUP_CALLS of the connection's calls (more than a
 * batch of ten messages of two or three calls, so the receive that brings a group back is full and does not wait the
 * event source's batching window; with 20, on Lever at 10 per s with one environment per worker, each group came back
 * while the environment still held the one before, a second late, and the run used 81 % of the rate; with 30, 87 to
 * 91 %), in whole seconds from 1 s to MAX_RETURN_GRID_MS: at a slow rate a 1-s step brought its messages back one to
 * a receive (Workable's 10 per 10 s: 10.9 SQS requests per candidate). A longer step holds a worker environment
 * the longer; the queues are served as fair queues, so another customer's messages are not held behind the group
 * (measured with the trickle beside a burst, docs/benchmark.md).
 */
const RETURN_GROUP_CALLS = 30;
const MAX_RETURN_GRID_MS = 10_000;
/**
 * A turn this close is waited for in the worker by a message that did not come back for it, at least (more when its
 * queue's batching window would bring it back later than that: `waitInWorkerMs`); a call of no message waits this
 * much at most. A longer wait would hold an environment every customer's messages share (a burst's first batches
 * would fill them all).
 */
const WAIT_IN_WORKER_MS = 3_000;
/**
 * A message goes back this much earlier than its event source's batching window before its turn (`returnEarlyMs`): a
 * group that does not fill a batch waits the window there, and one that does waits in the worker.
 */
const RETURN_MARGIN_MS = 500;
/** The batching window of the queue a message goes back to, unless the worker's environment names it. */
const DEFAULT_BATCHING_WINDOW_MS = 1_000;
/** A message comes back up to a second before the moment asked (the delay is rounded down), or a little after it. */
const ARRIVAL_SLACK_MS = 1_500;

/**
 * What a message of a kind not shown yet is booked at while no kind of the connection has been shown either. Once
 * one has, such a message is booked at the costliest kind shown of its family (the part of its name before `@` or
 * `:`: the stage changes of another stage, the write-backs of another sort), else of the connection (`guess`): while
 * the schedule is booked far ahead, the probe of a new kind (the first write-back after a burst of invitations)
 * cannot run before its turn, and every message of the kind booked meanwhile at one call went back for the rest of
 * its calls (measured on Lever at 10 per s: 89 of 100 write-backs booked so, the write-backs at half the rate). By
 * the connection's costliest kind alone, the stage changes a burst's moves bring on Lever (one call each) were booked
 * at a write-back's four or five, and the burst's last seconds ran at half the rate.
 */
const DEFAULT_CALLS = 1;
/**
 * A kind is booked at the lower median of its last runs, not their mean: a message that needs more than its turn
 * holds goes on in a block of its own from the step that does not fit, while one that needs less leaves intervals
 * no one uses. A write-back of two calls, or four with a stage move (one in three), booked at the mean's three,
 * wasted a call in two of three and was cut in the third all the same.
 */
const COST_RUNS = 25;
/**
 * While a kind's cost is unknown in this environment, one of its messages runs to show it; the others wait in the
 * worker for it (PROBE_WAIT_MS at most, and half their time left; then at the guessed cost), so a burst is not booked
 * at a guess. The probe itself waits as long for a later call's turn (or the longer wait a message of its queue has).
 * Longer waits would hold worker environments every customer shares.
 */
const PROBE_WAIT_MS = 5_000;
const PROBE_POLL_MS = 100;
/** What a message's work is left, at least, between its turn and the invocation's deadline. */
const WORK_ROOM_MS = 3_000;
/** A message sent back for its turn comes back this much closer to it than a worker could wait at most. */
const HOLD_SLACK_MS = 500;
/**
 * How often an environment that books turns ahead (a webhook's) reads the schedule for the cost of a kind it does not
 * know yet: a read a message would cost a burst's webhooks one DynamoDB request a report while the workers have not
 * recorded it.
 */
const HEAR_COSTS_EVERY_MS = 15_000;

/** The message being worked: the block of intervals its calls take, and what it has sent. */
interface Ticket {
  pacer: Pacer;
  kind: string;
  signal: AbortSignal | undefined;
  /** The block: its turn, or a block it reserved since; how many calls' intervals it holds, and how many it used. */
  turnAt: number;
  slots: number;
  used: number;
  /** Calls the run has sent, those the ATS refused (429) left out. */
  calls: number;
  /** The message came back for a turn it reserved. */
  returning: boolean;
  /** Its turn was booked for its kind's whole cost (`Turn.whole`): the block holds what the kind costs. */
  bookedWhole: boolean;
  /**
   * The first message of a kind this environment has not seen cost: it shows what the kind costs, so it waits in the
   * worker for its later calls' turns (PROBE_WAIT_MS at most), where others go back for them.
   */
  probe: boolean;
  /** Calls sent outside steps (reads), those refused left out: a run that comes back makes them again. */
  reads: number;
  /**
   * Where the last call sent was counted (the step it went out in, or the reads); none for a cache fill or once a 429
   * took it back out (`uncount`).
   */
  counted?: Ticket['step'] | 'read';
  /** Intervals of its block were left unused for a spent window's reset (`pastSpentWindow`). */
  skipped?: boolean;
  /** The step under way (pacedStep) and the calls it has sent: a run that comes back makes them again. */
  step?: { key: string; calls: number } | undefined;
  /**
   * What the message's turn had to hold at least (its kind's cost), once it ran past it: the calls it sent before,
   * and what the step or call that did not fit has shown it needs. A run cut there shows no more of what its kind
   * costs.
   */
  turnNeeded?: number;
}

const tickets = new AsyncLocalStorage<Ticket>();

/**
 * Runs one step of the message under way (a lookup and its write, `name` within the message's kind): before its
 * first call, the block the message holds has room for what the step costs, or the message goes back, before the
 * step began, for a block that has. So a step is not cut between its read and its write, and a message that comes
 * back does not read again. Outside a message, or with no pacer, the step just runs.
 */
export function pacedStep<T>(name: string, step: () => Promise<T>): Promise<T> {
  const ticket = tickets.getStore();
  return ticket ? ticket.pacer.runStep(ticket, name, step) : step();
}

export interface PacerOptions {
  connectionId: string;
  rate: RateLimit;
  /** The headers the ATS announces its window in (its profile's), if it announces one. */
  rateHeaders?: RateHeaders | undefined;
  schedule: RateSchedule;
  /**
   * How long the event source of the queue this environment's messages go back to gathers a batch that is not full
   * (its maximum batching window); 1 s unless given.
   */
  batchingWindowMs?: number | undefined;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Paces one connection's calls to its ATS's rate across every execution environment. Each message reserves a turn
 * on the connection's shared schedule: one interval for each call it is expected to make (a message whose turn is
 * later goes back to the queue until then, carrying it). Its calls go out one interval apart from its turn; a call
 * beyond those reserved reserves a block of its own, and an interval it did not use stays unused (so each kind is
 * booked at what its whole runs cost, learnt as they run). So every call has its own place on the schedule. A small
 * local guard never sends into a window the ATS announced as spent, and moves the schedule past its reset.
 */
export class Pacer implements CallGate, AtsPacing {
  /** Between two calls at the share of the rate the schedule gives out. */
  public readonly intervalMs: number;
  /** The grid messages going back for their turns come back on (RETURN_GROUP_CALLS). */
  public readonly groupMs: number;
  /**
   * A message back for its turn waits for it in the worker when it is this close: it arrives at most this much before
   * it (the grid's moment before it), so it is not sent back again.
   */
  public readonly holdMs: number;
  /** How long before its turn a message sent back for it comes back: its queue's batching window and a margin. */
  public readonly returnEarlyMs: number;
  /**
   * A turn this close is waited for in the worker by a message that did not come back for it (WAIT_IN_WORKER_MS),
   * or closer than it could go back and return in time for (its queue's delay rounded, and its batching window).
   */
  private readonly waitInWorkerMs: number;
  /**
   * A spent window's reset this close is waited for (`guard`): an interval at most, and no more than the schedule's
   * share of the rate leaves spare in a window (the window opened by a call sent that much late holds one call more
   * of the schedule's: the limit and one over it).
   */
  private readonly resetWaitMs: number;
  private readonly options: PacerOptions;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private window: AnnouncedWindow | undefined;
  /**
   * What each kind of message, and each kind's step, has cost: the first run that showed it whole (`first`), and the
   * last COST_RUNS after it (`runs`). An environment's first run is a cold one (a stage list not cached yet), so a
   * burst is not booked at it once a second run has shown what the others cost.
   */
  private readonly costs = new Map<string, { first: number; runs: number[] }>();
  /**
   * At least what a kind or a step costs, shown by a first run cut in it (its calls and one more): until one runs
   * whole, the next is given as much.
   */
  private readonly floors = new Map<string, number>();
  private readonly probing = new Set<string>();
  /** What the connection's other environments have shown (the schedule's record), for kinds not learnt here. */
  private readonly shared = new Map<string, number>();
  /** Costs learnt here that the schedule does not hold yet: recorded with the next reservation. */
  private readonly unpublished = new Map<string, number>();
  private waiting: { spanMs: number; notBefore: number; done: (start: number | Error) => void }[] = [];
  private reserving = false;
  private pushedTo = 0;
  /** When a booking ahead (`bookAhead`) of a kind not known here reads the schedule's costs again. */
  private hearAgainAt = Number.NEGATIVE_INFINITY;

  public constructor(options: PacerOptions) {
    this.options = options;
    this.intervalMs = options.rate.windowMs / (options.rate.limit * RATE_SHARE);
    this.groupMs = Math.min(
      MAX_RETURN_GRID_MS,
      Math.max(1, Math.round((RETURN_GROUP_CALLS * this.intervalMs) / 1000)) * 1000,
    );
    this.returnEarlyMs = (options.batchingWindowMs ?? DEFAULT_BATCHING_WINDOW_MS) + RETURN_MARGIN_MS;
    this.holdMs = this.groupMs + this.returnEarlyMs + ARRIVAL_SLACK_MS;
    this.waitInWorkerMs = Math.max(WAIT_IN_WORKER_MS, this.returnEarlyMs + 1_000);
    this.resetWaitMs = Math.min(this.intervalMs, options.rate.limit * this.intervalMs - options.rate.windowMs);
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? defaultSleep;
  }

  /**
   * A message of `kind` begins: its turn (`reserved` when it went back, or reserved now) is waited for here
   * when close, and its work runs; a later turn is returned and the work does not run.
   */
  public async admit<T>(
    paced: PacedKind,
    reserved: Turn | undefined,
    signal: AbortSignal | undefined,
    work: () => Promise<T>,
  ): Promise<Admission<T>> {
    const { kind, like } = kindOf(paced);
    // A run of a message whose work has not begun shows what its kind costs: its first, or one back for its turn.
    const whole = reserved === undefined || reserved.whole === true;
    // The first messages of a kind not learnt yet show what it costs, one at a time; new ones wait for them.
    const probe = reserved === undefined ? await this.probeOrWait(kind, signal) : this.claimProbe(kind);
    try {
      const slots = reserved?.calls ?? Math.max(1, this.booked(kind, like));
      const turn = reserved?.at ?? (await this.reserve(slots * this.intervalMs, this.now()));
      const wait = turn - this.now();
      // A message back for its turn came back with its group, to wait for it here; a new one waits a moment at most.
      if (!this.holds(wait, reserved ? this.holdMs : this.waitInWorkerMs, signal))
        return {
          admitted: false,
          turnAt: turn,
          turnCalls: slots,
          waitMs: wait,
          returnInMs: this.returnInMs(turn, signal),
        };
      if (wait > 0) await this.sleep(wait, signal);
      const ticket: Ticket = {
        pacer: this,
        kind,
        signal,
        turnAt: turn,
        slots,
        used: 0,
        calls: 0,
        reads: 0,
        returning: reserved !== undefined,
        bookedWhole: reserved?.whole === true,
        probe,
      };
      // What a kind costs is shown by a whole run (one back for a turn taken mid-run has done part of its work): all
      // its calls, or, cut past its turn, what that turn had to hold. The whole cost is booked at once: a block taken
      // mid-run in a burst is far off, and the message goes back for it. In a burst most runs are back for their
      // turns: a kind learnt from first runs only kept the cost of the first, cold ones (a stage list not cached).
      let value: T;
      try {
        value = await tickets.run(ticket, work);
      } catch (error) {
        if (whole && ticket.turnNeeded !== undefined) this.learn(kind, ticket.turnNeeded);
        throw error;
      }
      if (whole) this.learn(kind, ticket.calls);
      // What this run showed reaches the schedule now, for bookings ahead, not with this environment's next turn: a
      // round of reservations under way took what it records before this was learnt, so one more round is asked for.
      if (this.unpublished.size && this.waiting.length === 0) this.reserve(0, this.now()).catch(() => undefined);
      return { admitted: true, value };
    } finally {
      if (probe) this.probing.delete(kind);
    }
  }

  /**
   * A turn booked for a message of `paced` before it is on its queue (a report as it is enqueued), only where the
   * connection's schedule is booked so far ahead that the message, visible in `visibleInMs`, would go back for its
   * turn (further than `holdMs` then: a burst's backlog), at what its kind costs (or, not shown yet, the guess). It
   * goes on the queue carrying the turn, out of sight until shortly before it (`returnInMs`, for a worker with the time
   * `workerDeadline` leaves), and is received once instead of once to book a turn and again for it. Otherwise nothing
   * is booked (`freeSoon` when the schedule was freer) and the message books when it runs.
   */
  public async bookAhead(paced: PacedKind, visibleInMs: number, workerDeadline?: AbortSignal): Promise<BookedAhead> {
    const { kind, like } = kindOf(paced);
    const busyFrom = this.now() + visibleInMs + this.holdMs;
    const ahead = (spanMs: number) =>
      this.options.schedule.reserve(this.options.connectionId, spanMs, busyFrom, {
        busyOnly: true,
        seen: (costs) => this.hear(costs),
      });
    // An environment that runs no message (a webhook's) knows a kind's cost from the schedule (every booking hears
    // it; a worker records a cost as soon as it learns it). A kind nobody has shown yet is booked at a guess: a burst's
    // reports arrive while its invitations hold the schedule, before any write-back has run, and booked at nothing
    // they were each received twice (Workable 10 per 10 s: 4.4 SQS requests a candidate). Where this environment does
    // not know it, the schedule is heard first, now and then, and a schedule found free books nothing.
    const known = () => this.known(kind) || (like !== undefined && this.known(like.kind));
    if (!known() && this.now() >= this.hearAgainAt) {
      this.hearAgainAt = this.now() + HEAR_COSTS_EVERY_MS;
      if (!((await ahead(0)) >= busyFrom)) return { freeSoon: true };
    }
    const calls = Math.max(1, this.booked(kind, like));
    const at = await ahead(calls * this.intervalMs);
    if (!(at >= busyFrom)) return { freeSoon: true };
    return { turn: { at, calls, whole: true, kind }, returnInMs: this.returnInMs(at, workerDeadline) };
  }

  /** A step of the message under way (pacedStep): room for what it costs, taken before it begins. */
  public async runStep<T>(ticket: Ticket, name: string, step: () => Promise<T>): Promise<T> {
    const key = `${ticket.kind}/${name}`;
    const needs = this.stepNeeds(key);
    if (needs > ticket.slots - ticket.used && !this.runsAsItIs(ticket, key)) {
      // What the step has shown it costs (a step cut here is known, or has a floor): the two calls a step cut before
      // is given at least (a lookup and its write) keep its block whole, and are no measure of the kind.
      if (!ticket.skipped) ticket.turnNeeded ??= ticket.calls + this.expected(key, 0);
      const calls = this.blockFor(ticket, needs);
      const at = await this.reserve(calls * this.intervalMs, this.now());
      const wait = at - this.now();
      if (!this.holds(wait, this.waitInWorkerMs, ticket.signal))
        throw spent(`step ${name}`, this.returnInMs(at, ticket.signal), 'its turn is later', {
          at,
          calls,
          kind: ticket.kind,
        });
      Object.assign(ticket, { turnAt: at, slots: calls, used: 0 });
    }
    const under = { key, calls: 0 };
    ticket.step = under;
    try {
      const result = await step();
      this.learn(key, under.calls);
      return result;
    } finally {
      ticket.step = undefined;
    }
  }

  /**
   * Whether a step runs in the room there is, whatever it is thought to cost: the first step of a message back for the
   * turn a step took (the environment that reserved it may have learnt a little more or less), or a step of a message
   * booked whole for its kind whose cost is known only from this environment's first run, a cold one (a list not
   * cached yet). Given that run's cost, a burst's write-backs with a stage move, booked at their kind's cost, were all
   * cut before the move in every environment until one ran warm (51 of 56 at Greenhouse 50 per 10 s).
   */
  private runsAsItIs(ticket: Ticket, key: string): boolean {
    return (ticket.returning && ticket.calls === 0) || (ticket.bookedWhole && !this.warm(key));
  }

  /**
   * What a step is given: what it has cost, and at least what a run cut in it showed. A step not shown whole yet and
   * cut before is given two calls at least (a lookup and its write), so a return is not cut again between them;
   * one never cut runs in the room there is.
   */
  private stepNeeds(key: string, cutNow = false): number {
    if (this.known(key)) return this.expected(key, 0);
    return cutNow || this.floors.has(key) ? Math.max(this.expected(key, 0), 2) : 0;
  }

  private learn(key: string, calls: number): void {
    // A run cut in a step gave it a floor until one showed it whole: this one.
    this.floors.delete(key);
    const cost = this.costs.get(key);
    if (cost) cost.runs = [...cost.runs.slice(1 - COST_RUNS), calls];
    else this.costs.set(key, { first: calls, runs: [] });
    // What a cold run showed is this environment's alone.
    if (!this.warm(key)) return;
    const rounded = this.expected(key, 0);
    if (this.shared.get(key) !== rounded) this.unpublished.set(key, rounded);
  }

  /**
   * The calls a message of a kind (or a step) is booked at: the lower median of its last runs here, else what
   * another environment of the connection showed, else its cold first run here; `unknown` until one has.
   */
  private expected(key: string, unknown: number): number {
    const cost = this.costs.get(key);
    const shown = cost?.runs.length ? lowerMedian(cost.runs) : (this.shared.get(key) ?? cost?.first ?? unknown);
    return Math.max(shown, this.floors.get(key) ?? 0);
  }

  private raiseFloor(key: string, calls: number): void {
    this.floors.set(key, Math.max(this.floors.get(key) ?? 0, calls));
  }

  /**
   * The block a message takes for the calls `needs` begins (a step's, or one call): were it to go back for it, the
   * run reads again what it read outside its steps, and the rest of its work follows; so the block holds those
   * reads and `needs`, and what the kind costs beyond the steps this run has done, whichever is more.
   */
  private blockFor(ticket: Ticket, needs: number): number {
    const inStepsDone = ticket.calls - ticket.reads - (ticket.step?.calls ?? 0);
    return Math.max(ticket.reads + needs, this.booked(ticket.kind) - inStepsDone);
  }

  /**
   * What a message of a kind is booked at: what the kind has cost, or, not shown yet, what the kind it is `like` costs
   * and its calls more (that kind's guess when it is not shown either), else the guess.
   */
  private booked(kind: string, like?: Like): number {
    if (this.known(kind)) return this.expected(kind, 0);
    return like ? this.booked(like.kind) + like.more : this.guess(kind);
  }

  /**
   * What a kind not shown yet is booked at (DEFAULT_CALLS): the costliest kind shown of its family, else of all
   * (steps' keys hold a `/`).
   */
  private guess(kind: string): number {
    const family = familyOf(kind);
    let most = 0;
    let mostOfFamily = 0;
    for (const key of [...this.costs.keys(), ...this.shared.keys()]) {
      if (key.includes('/')) continue;
      const cost = this.expected(key, 0);
      most = Math.max(most, cost);
      if (familyOf(key) === family) mostOfFamily = Math.max(mostOfFamily, cost);
    }
    return Math.max(DEFAULT_CALLS, mostOfFamily || most);
  }

  private known(key: string): boolean {
    return this.costs.has(key) || this.shared.has(key);
  }

  /** Shown by a run after this environment's first, or by another environment. */
  private warm(key: string): boolean {
    return (this.costs.get(key)?.runs.length ?? 0) > 0 || this.shared.has(key);
  }

  /** Whether the message runs as the probe of a kind not learnt yet: when none is out, it is. */
  private claimProbe(kind: string): boolean {
    if (this.warm(kind) || this.probing.has(kind)) return false;
    this.probing.add(kind);
    return true;
  }

  /**
   * Claims the probe at once when none is out (a batch's messages all begin in the same moment), else waits (bounded)
   * while one is: the message then books at what it showed, or runs as the next probe when the kind is still cold.
   */
  private async probeOrWait(kind: string, signal: AbortSignal | undefined): Promise<boolean> {
    const until = this.now() + Math.min(PROBE_WAIT_MS, timeLeftMs(signal, this.now) / 2);
    for (let poll = 0; poll <= PROBE_WAIT_MS / PROBE_POLL_MS; poll++) {
      if (this.claimProbe(kind)) return true;
      if (this.warm(kind) || this.now() >= until) return false;
      await this.sleep(PROBE_POLL_MS, signal);
    }
    return false;
  }

  /**
   * Whether a turn `wait` away is waited for in the worker: within `patience`, and early enough to leave the work
   * WORK_ROOM_MS before the invocation's deadline (a message that begins with less would be cut by it).
   */
  private holds(wait: number, patience: number, signal: AbortSignal | undefined): boolean {
    return wait <= patience && wait < timeLeftMs(signal, this.now) - WORK_ROOM_MS;
  }

  /**
   * How long a message whose turn is at `turn` stays in the queue: until the grid's last moment `returnEarlyMs` before
   * its turn, where it meets the others that go back for turns near its own; later, up to `returnEarlyMs` before the
   * turn, when a worker with the time this one has (`signal`) could not wait from that moment to the turn.
   */
  public returnInMs(turn: number, signal?: AbortSignal): number {
    const now = this.now();
    const latest = turn - this.returnEarlyMs;
    const grid = Math.floor(latest / this.groupMs) * this.groupMs;
    const hold = Math.min(this.holdMs, timeLeftMs(signal, this.now) - WORK_ROOM_MS) - HOLD_SLACK_MS;
    // It may arrive a second before the moment asked (a queue's delay counts whole seconds).
    const back = Math.max(grid, Math.min(latest, turn + 1_000 - hold));
    return Math.max(0, back - now);
  }

  /** How long until the ATS takes `calls` calls, by the window it last announced; 0 when it does now. */
  public waitMs(calls = 1): number {
    const resetAt = this.spentUntil(calls);
    return resetAt ? resetAt - this.now() : 0;
  }

  /** The reset of the window the ATS last announced, while it has room for fewer than `calls`; else 0. */
  private spentUntil(calls = 1): number {
    const window = this.window;
    return window && this.now() < window.resetAt && window.remaining < calls ? window.resetAt : 0;
  }

  public async beforeCall(where: string, signal?: AbortSignal, cacheFill = false): Promise<void> {
    const ticket = tickets.getStore();
    const mine = ticket?.pacer === this ? ticket : undefined;
    const resetAt = mine ? this.pastSpentWindow(mine) : 0;
    if (!resetAt) await this.guard(where, signal);
    // A message's calls go out an interval apart from its turn. Past the intervals it holds, it reserves a new block
    // with room for the calls a return would make again (its reads, the step under way's, this one) and what its kind
    // or step costs. A call of no message (a sweep's page, a follow-up) reserves one interval.
    const inBlock = mine !== undefined && mine.used < mine.slots;
    if (mine && !inBlock) {
      const step = mine.step;
      if (!mine.skipped) mine.turnNeeded ??= mine.calls + 1;
      if (step && !mine.skipped) this.raiseFloor(step.key, step.calls + 1);
      mine.slots = this.blockFor(mine, step ? this.stepNeeds(step.key, true) : 1);
      mine.turnAt = await this.reserve(mine.slots * this.intervalMs, Math.max(this.now(), resetAt));
      mine.used = 0;
    }
    const due = mine ? mine.turnAt + mine.used * this.intervalMs : await this.nearTurn(where, signal);
    const wait = due - this.now();
    if (wait > 0) {
      // A turn too far off: the message goes back for it, keeping it.
      const patience = mine?.probe ? Math.max(PROBE_WAIT_MS, this.waitInWorkerMs) : this.waitInWorkerMs;
      if (inBlock ? wait >= timeLeftMs(signal, this.now) : !this.holds(wait, patience, signal)) {
        const turn = mine && !inBlock ? { at: due, calls: mine.slots, kind: mine.kind } : undefined;
        throw spent(where, turn ? this.returnInMs(due, signal) : wait, 'its turn is later', turn);
      }
      await this.sleep(wait, signal);
      await this.guard(where, signal);
    }
    if (mine) {
      mine.used++;
      // A list read once for the environment's cache (a stage list) makes an environment's first run of a kind cost a
      // call more than its others: learnt as part of the kind, it booked every message of the kind at that cost until
      // a second run there (on Lever, a burst's write-backs at three calls for two, a third of the rate unused).
      mine.counted = cacheFill ? undefined : (mine.step ?? 'read');
      if (!cacheFill) {
        mine.calls++;
        if (mine.step) mine.step.calls++;
        else mine.reads++;
      }
    }
    if (this.window && this.now() < this.window.resetAt) this.window.remaining--;
  }

  /**
   * The turn of a call of no message (a sweep's page, the doctor's probe): one interval, reserved only when it comes
   * within WAIT_IN_WORKER_MS; else nothing is reserved and the call is kept back. A turn reserved and not taken
   * would be an interval no one uses: a sweep run every moment against a booked schedule pushed it on an interval a
   * run, faster than the ATS's rate, and the connection's messages never reached their turns.
   */
  private async nearTurn(where: string, signal: AbortSignal | undefined): Promise<number> {
    const now = this.now();
    const room = Math.min(WAIT_IN_WORKER_MS, timeLeftMs(signal, this.now) - WORK_ROOM_MS - 1);
    if (room < 0) throw spent(where, WORK_ROOM_MS, 'its turn is later');
    const latest = now + room;
    const at = await this.options.schedule.reserve(this.options.connectionId, this.intervalMs, now, { latest });
    if (at > latest) throw spent(where, at - now, 'its turn is later');
    return at;
  }

  public afterAnswer(status: number, headers: Headers): void {
    const now = this.now();
    const announced = announcedWindow(this.options.rateHeaders, headers, now);
    if (announced) this.window = announced;
    if (status !== 429) return;
    this.uncount();
    // A 429's Retry-After is the wait the ATS asks for (an injected or burst 429 within a window); else its window's
    // announced reset; else a whole window.
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

  /**
   * A call the ATS refused (429) is no part of what its message's kind or step costs: when it is sent again, that
   * call counts. Its interval stays used: it was taken.
   */
  private uncount(): void {
    const mine = tickets.getStore();
    const counted = mine?.pacer === this ? mine.counted : undefined;
    if (!mine || !counted) return;
    mine.counted = undefined;
    mine.calls--;
    if (counted === 'read') mine.reads--;
    else counted.calls--;
  }

  /**
   * Never sends into a window the ATS announced as spent: the schedule moves past its reset, and nothing is sent until
   * then. A reset within `resetWaitMs` (and the invocation's deadline) is waited for here, and the call then goes out;
   * before, its message went back and lost its turn. A window the ATS starts at its first call (Workable's) ends a
   * little after the schedule's when that call went out a little late, and is announced spent just before the
   * schedule's next call. A further reset keeps the call back (a wait of up to an interval recovered such turns on
   * Workable, and could put one call over the limit: docs/benchmark.md), as does a window still spent after the wait.
   */
  private async guard(where: string, signal: AbortSignal | undefined, waited = false): Promise<void> {
    const resetAt = this.spentUntil();
    if (!resetAt) return;
    this.pushSchedule(resetAt);
    const wait = resetAt - this.now();
    if (waited || !this.holds(wait, this.resetWaitMs, signal)) throw spent(where, wait, "the ATS's window is spent");
    await this.sleep(wait, signal);
    await this.guard(where, signal, true);
  }

  /**
   * A message's call into a window the ATS announced as spent, with a reset further than the guard waits for, moves
   * past the reset: to the first interval of its own block at or after it, when the rest of the step under way fits
   * there too (calls sent at the schedule's intervals never put a window the ATS starts at its first call over its
   * limit), the intervals before it left unused. Otherwise its block counts as spent, and it takes a new one from the
   * reset, sized as any block taken mid-run (`blockFor`): its message goes back carrying it when it is further than
   * the worker waits. Before, the message went back without a turn, the rest of its block went unused, and it took a
   * new turn at the end of the schedule when it came back (Workable announces its reset in whole seconds, rounded up,
   * so most were further than the guard's wait). A call due at or after the reset is guarded when it goes out.
   * Returns the moment the message's next block may start from.
   */
  private pastSpentWindow(mine: Ticket): number {
    const resetAt = this.spentUntil();
    if (!resetAt || resetAt - this.now() <= this.resetWaitMs) return 0;
    this.pushSchedule(resetAt);
    if (mine.used >= mine.slots || mine.turnAt + mine.used * this.intervalMs >= resetAt) return resetAt;
    // A block cut short so says nothing of what the kind or the step costs.
    mine.skipped = true;
    const first = Math.ceil((resetAt - mine.turnAt) / this.intervalMs);
    const rest = mine.step ? Math.max(1, this.stepNeeds(mine.step.key) - mine.step.calls) : 1;
    mine.used = first + rest <= mine.slots ? first : mine.slots;
    return resetAt;
  }

  private pushSchedule(resetAt: number): void {
    if (resetAt <= this.pushedTo) return;
    this.pushedTo = resetAt;
    // The turns after the reset are taken from there: nobody else's message is sent into the spent window.
    this.reserve(0, resetAt).catch(() => undefined);
  }

  /** What the schedule holds of the connection's costs (what other environments learnt, or this one published). */
  private hear(costs: Record<string, number>): void {
    for (const [key, calls] of Object.entries(costs)) this.shared.set(key, calls);
  }

  /** One reservation on the shared schedule for every message of this environment that asks at the same moment. */
  private reserve(spanMs: number, notBefore: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({
        spanMs,
        notBefore,
        done: (start) => (start instanceof Error ? reject(start) : resolve(start)),
      });
      if (this.reserving) return;
      this.reserving = true;
      // A batch's messages ask in the same turn of the event loop: the write waits for its end, and holds them all.
      setImmediate(() => void this.reserveWaiting());
    });
  }

  private async reserveWaiting(): Promise<void> {
    try {
      // Bounded: each round takes every request waiting, and a round's requests were made before it began.
      for (let round = 0; round < 1_000 && this.waiting.length; round++) {
        const batch = this.waiting.splice(0);
        const spans = batch.reduce((sum, request) => sum + request.spanMs, 0);
        const notBefore = Math.max(...batch.map((request) => request.notBefore));
        const publish = Object.fromEntries([...this.unpublished].slice(0, MAX_COSTS_PER_RESERVATION));
        for (const key of Object.keys(publish)) this.unpublished.delete(key);
        try {
          let at = await this.options.schedule.reserve(this.options.connectionId, spans, notBefore, {
            publish,
            seen: (costs) => this.hear(costs),
          });
          this.hear(publish);
          for (const request of batch) {
            request.done(at);
            at += request.spanMs;
          }
        } catch (error) {
          for (const [key, calls] of Object.entries(publish))
            if (!this.unpublished.has(key)) this.unpublished.set(key, calls);
          for (const request of batch) request.done(error instanceof Error ? error : new Error(String(error)));
        }
      }
    } finally {
      this.reserving = false;
    }
  }
}

/** A paced kind's name, and the kind whose cost it takes until it has shown its own. */
function kindOf(paced: PacedKind): { kind: string; like?: Like | undefined } {
  return typeof paced === 'string' ? { kind: paced, like: undefined } : paced;
}

/** A kind's family: its name before `@` or `:` (`stage-entered@<stage>`, `report-created:<sort>`). */
function familyOf(kind: string): string {
  return kind.split(/[@:]/, 1)[0] as string;
}

/** The lower of the two middle values (or the middle one). */
function lowerMedian(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
}

/**
 * A call the pacer kept back (nothing was sent): retryable after `waitMs` (for a message keeping a `turn`, when it
 * should be back in the queue).
 */
function spent(where: string, waitMs: number, why: string, turn?: Turn): AtsError {
  return new AtsError(ATS_ERROR_CODES.rateLimited, `${where}: ${why}; not sent`, {
    retryAfterMs: Math.ceil(waitMs),
    paced: true,
    ...(turn === undefined ? {} : { turnAt: turn.at, turnCalls: turn.calls, turnKind: turn.kind }),
  });
}
