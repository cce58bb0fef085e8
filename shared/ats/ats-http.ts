import { AsyncLocalStorage } from 'node:async_hooks';
import * as v from 'valibot';
import {
  HTTP_DEFAULTS,
  defaultRetryPolicy,
  parseRetryAfter,
  redactUrl,
  sendHttpRequest,
  sleep,
  timeLeftMs,
  withRetry,
  type RetryHooks,
  type RetryPolicy,
} from '../http';
import { AtsError, ATS_ERROR_CODES, atsErrorForStatus } from './errors';
import { describeFirstIssue } from '../validation';

export interface AtsHttpOptions {
  baseUrl: string;
  /** The Authorization header value; `refresh` asks for a new one after a 401. */
  authorization: (refresh: boolean) => Promise<string>;
  fetch?: typeof fetch | undefined;
  timeoutMs?: number | undefined;
  retry?: Partial<RetryPolicy> | undefined;
  sleep?: RetryHooks['sleep'];
  now?: () => number;
  /** A refusal hidden in a successful answer (Ashby's HTTP 200 with `success: false`); undefined when none. */
  failureInBody?: (body: unknown) => string | undefined;
  /**
   * The account's rate limit where the ATS announces none in its answers (Lever sends no rate headers): calls are
   * paced to `limit` per sliding `windowMs`, so a burst waits its turn instead of drawing 429s.
   */
  budget?: { limit: number; windowMs: number } | undefined;
}

/** A page of a list and, where the ATS gives one, the URL of the next page (RFC 8288 `Link: <…>; rel="next"`). */
export interface AtsPage<T> {
  body: T;
  next: string | undefined;
}

export interface AtsRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** A path under the base URL, or a whole URL on the base URL's origin (a `Link` header's next page). */
  path: string;
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** A read sent as POST (Ashby's RPC API): safe to send again after a 5xx or a lost answer. */
  readOnly?: boolean;
  /** A write whose repeat changes nothing (a tag set or taken off): sent again after a 5xx or a lost answer too. */
  idempotent?: boolean;
}

/** The body as JSON, or undefined when it is not (an empty 204, an HTML error page). */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The longest rate-limit wait a worker sits out in its own invocation. A longer one (a spent 30-s window) goes up
 * with its delay, and the message is put back until then: a worker slot every connection shares is never held
 * idle by one connection's limit.
 */
const ATS_WAIT_IN_SLOT_MS = 5_000;

/**
 * The longest wait for the connector's own budget (an ATS that announces nothing) a call sits out before it is
 * sent; a longer one is refused like a spent window, and the message waits in the queue instead.
 */
const BUDGET_WAIT_IN_SLOT_MS = 2_000;

/** A message that finds the window spent waits in the worker for a reset this close, instead of going back. */
const ADMIT_WAIT_IN_SLOT_MS = 3_000;
/**
 * How much before its window's start the first message given a turn in it comes back, to wait out the last moments
 * in the worker and open the window as it resets (a queue's delay counts in whole seconds, and the event source
 * gathers a batch for a second more). An ATS whose window starts at its first call (as the sandboxes' do) loses
 * no time to idling; the window's other messages come back as it opens, together, and find it open.
 */
const OPENER_EARLY_MS = 2_500;

/** The shortest span turns are given in: several of an ATS's windows when they are short (Lever's second). */
const TURN_SLOT_MS = 5_000;

/**
 * How long an admitted message holds the calls it is expected to make at most: it gives them up when it finishes,
 * and one still waiting on something else (a slow interview service) stops holding them after this long.
 */
const RESERVATION_MS = 3_000;

/** What a message is expected to cost until 10 of its kind have finished and shown what they cost. */
const DEFAULT_CALLS_PER_MESSAGE = 1.5;

/** A window's length until an announced reset has shown it (Greenhouse's and Workable's are 10 or 30 s). */
const DEFAULT_WINDOW_MS = 10_000;

/** The longest wait a reset header is believed for: a longer one is more likely a misread unit than a real window. */
const MAX_RESET_WAIT_MS = 15 * 60_000;

/**
 * Rate-limit windows announce their end in epoch seconds (Greenhouse `X-RateLimit-Reset`, Workable
 * `X-Rate-Limit-Reset`, whose unit Workable does not state). A value that does not read as a moment within the
 * next 15 minutes is not used: the retry policy's own backoff applies instead.
 */
function resetDelayMs(headers: Headers, now: number): number | undefined {
  const reset = Number(headers.get('x-ratelimit-reset') ?? headers.get('x-rate-limit-reset') ?? NaN);
  if (!Number.isFinite(reset) || reset <= 0) return undefined;
  const delay = reset * 1000 - now;
  return delay > 0 && delay <= MAX_RESET_WAIT_MS ? delay : undefined;
}

/**
 * What the ATS last said of the caller's rate-limit window (Greenhouse `X-RateLimit-Remaining`/`-Reset`, Workable
 * `X-Rate-Limit-*`): requests left, and when the window ends.
 */
interface RateWindow {
  remaining: number;
  resetAt: number;
  /** The window's whole allowance (`X-RateLimit-Limit`), where announced. */
  limit: number | undefined;
}

function observedWindow(headers: Headers, now: number): RateWindow | undefined {
  const remaining = Number(headers.get('x-ratelimit-remaining') ?? headers.get('x-rate-limit-remaining') ?? NaN);
  const limit = Number(headers.get('x-ratelimit-limit') ?? headers.get('x-rate-limit-limit') ?? NaN);
  const untilReset = resetDelayMs(headers, now);
  if (!Number.isFinite(remaining) || untilReset === undefined) return undefined;
  return { remaining, resetAt: now + untilReset, limit: Number.isFinite(limit) && limit > 0 ? limit : undefined };
}

/** A slot of turns, by its start: the calls of the messages given it as their turn, and of those back. */
interface BookedSlot {
  startAt: number;
  calls: number;
  arrived: number;
}

/** The message being worked and the calls it has made, the calls it is expected to make, and when it began. */
interface Ticket {
  kind: string;
  admittedAt: number;
  expected: number;
  calls: number;
}

/** A message's work runs under its ticket, so each call the connection's client sends is counted as that message's. */
const ticketStore = new AsyncLocalStorage<{ client: AtsHttpClient; ticket: Ticket }>();

/** When a message whose window is spent should come back: after `waitMs`, spread over `spreadMs`. */
export interface Turn {
  waitMs: number;
  spreadMs: number;
}

export interface AdmitOptions {
  signal?: AbortSignal | undefined;
  /** The sort of work (an invitation, a write-back): what each costs in calls is learnt apart. */
  kind?: string;
  /** The message comes back for a turn it was given: it takes its window's room before those that did not wait. */
  returning?: boolean;
}

/** A message was admitted and its work ran (`value`), or it was given a `turn` and its work did not run. */
export type Admission<T> = { admitted: true; value: T } | { admitted: false; turn: Turn };

/** The `rel="next"` target of an RFC 8288 `Link` header (Greenhouse v3 pages by it alone). */
export function linkNext(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(',')) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match && /(^|;)\s*rel\s*=\s*"?next"?\s*(;|$)/i.test(match[2] as string)) return match[1];
  }
  return undefined;
}

function errorDetail(text: string): string {
  const body = safeJson(text) as { message?: unknown; error?: unknown } | undefined;
  const detail = typeof body?.message === 'string' ? body.message : typeof body?.error === 'string' ? body.error : '';
  return detail.slice(0, 200);
}

/**
 * The HTTP side every ATS adapter shares: auth header, one re-authentication after a 401, bounded retries
 * that wait as Retry-After (or the rate-limit reset header) says, and writes retried only when the ATS refused
 * them outright (429), never after an answer that may hide a write (5xx, timeout).
 */
export class AtsHttpClient {
  private readonly options: AtsHttpOptions;
  private readonly policy: RetryPolicy;
  private readonly fetchImpl: typeof fetch;
  /**
   * The window as the ATS last announced it, shared by every call this client makes (one client per connection
   * per warm function): a call is not sent into a window the ATS said is spent, so a burst costs no 429s.
   */
  private window: RateWindow | undefined;
  /** Calls sent and not yet answered: the ATS's count of the window does not include them yet. */
  private inFlight = 0;
  /**
   * The calls of the connection's own budget still in its window: each counts from when it is sent until
   * `windowMs` after its answer came (the ATS counted it somewhere in between), so network jitter never puts
   * one call more in the ATS's window than the budget allows.
   */
  private sent: { answeredAt: number | undefined }[] = [];
  /** Messages of each kind finished on this connection, and the calls they made: what a message of that kind costs. */
  private learnt = new Map<string, { messages: number; calls: number }>();
  /** The length of the ATS's window, as learnWindowLength reads it from the resets announced. */
  private windowMs: number | undefined;
  private shortestGap: number | undefined;
  private firstCallToReset: number | undefined;
  private longestToReset = 0;
  private lastResetAt: number | undefined;
  /**
   * Whether a window's end is read from its answers (it began before the first came) rather than from the reset
   * announced in whole seconds; off for good once a call sent on it was refused.
   */
  private readsResetsEarly = true;
  /** The whole allowance of the last window announced (`X-RateLimit-Limit`). */
  private lastLimit: number | undefined;
  /** The messages admitted and not yet finished: each holds the calls it is expected to make and has not made. */
  private tickets = new Set<Ticket>();
  /**
   * The turns given, by the start of their slot: the calls of the messages sent back to wait for it, and of those
   * that came back. Until they are all back, a message that did not wait leaves the rest of them their room.
   */
  private booked: BookedSlot[] = [];
  /**
   * Where the ATS announces nothing: the connection's budget seen as fixed windows, from the first call after the
   * last one ended. Admission and turns read it as they read an announced window.
   */
  private ownWindow: RateWindow | undefined;
  /**
   * The share of the budget this client takes: every warm worker of the connection paces itself, and a 429 says
   * others are spending the same account. Halved on each 429, won back a tenth per clean window (as TCP shares a
   * link), so the workers of one connection settle on shares that add up to the account's limit.
   */
  private budgetShare = 1;
  private shareRaisedAt = 0;
  private shareCutAt = Number.NEGATIVE_INFINITY;

  public constructor(options: AtsHttpOptions) {
    this.options = options;
    this.policy = { ...defaultRetryPolicy, maxRetryAfterMs: ATS_WAIT_IN_SLOT_MS, ...options.retry };
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** A read: the answer must match `schema`, or the read fails naming the field. */
  public async request<T>(request: AtsRequest, schema: v.GenericSchema<unknown, T>): Promise<T> {
    return (await this.page(request, schema)).body;
  }

  /** A read of one page of a list: the answer, and the next page's URL where the `Link` header names one. */
  public async page<T>(request: AtsRequest, schema: v.GenericSchema<unknown, T>): Promise<AtsPage<T>> {
    const { where, body, headers } = await this.exchange(request);
    const parsed = v.safeParse(schema, body);
    if (!parsed.success)
      throw new AtsError(ATS_ERROR_CODES.malformedResponse, `${where}: ${describeFirstIssue(parsed.issues).message}`);
    return { body: parsed.output, next: linkNext(headers.get('link')) };
  }

  /**
   * A write. Once the ATS answered 2xx the write is done, whatever the answer's body (Workable's empty 201,
   * Greenhouse's 204): what `schema` can read of it is returned (an id), else undefined; it is never an error.
   */
  public async write<T>(request: AtsRequest, schema: v.GenericSchema<unknown, T>): Promise<T | undefined> {
    const { body } = await this.exchange(request);
    const parsed = v.safeParse(schema, body);
    return parsed.success ? parsed.output : undefined;
  }

  /**
   * How long until the ATS accepts a call again, by what it last announced or, where it announces nothing, by the
   * connection's budget (a wait short enough to sit out before sending counts as none); 0 when it does now.
   */
  public pacingWaitMs(now: number = (this.options.now ?? Date.now)(), calls = 1): number {
    const window = this.window;
    if (window && now < window.resetAt) return window.remaining >= calls ? 0 : window.resetAt - now;
    const budgetWait = this.budgetWaitMs(now);
    return budgetWait > BUDGET_WAIT_IN_SLOT_MS ? budgetWait : 0;
  }

  /**
   * A worker begins a message of this connection (`kind`: what sort of work, each learnt apart): when the ATS takes
   * calls now, the message's work runs, holding the calls it is expected to make until it finishes. When the
   * window is spent, the message's turn instead: after the reset, in the first later window with room for it,
   * counting the messages already sent back to wait and what each kind of message costs. A burst of 500 comes back
   * spread over the windows it needs, instead of all at each reset to be sent back again.
   */
  public async admit<T>(work: () => Promise<T>, options: AdmitOptions = {}): Promise<Admission<T>> {
    const { signal } = options;
    const kind = options.kind ?? 'message';
    const now = this.options.now ?? Date.now;
    // A message back for its turn (a little early, as turns allow) is counted as come: its slot holds less for it.
    const slot = options.returning ? this.slotAt(now() + OPENER_EARLY_MS) : undefined;
    if (slot) slot.arrived += this.callsPerMessage(kind);
    // Bounded: each look but the last sits out a reset, and those waits add up to ADMIT_WAIT_IN_SLOT_MS at most.
    let waited = 0;
    for (let look = 0; look < 8; look++) {
      const window = this.currentWindow(now()) ?? this.assumedWindow(now());
      // Spent: no call left that the messages already admitted have not reserved, nor (for a message that did not
      // wait) that the messages given this window as their turn and not yet back still need.
      const held = this.reserved(now()) + (options.returning ? 0 : this.heldForTurns(now()));
      if (!window || window.remaining - held >= 1) break;
      const wait = window.resetAt - now();
      // A reset within moments (a message sent back came a little early, as its turn allows) is waited for here: it
      // costs less than a round trip through the queue, and the window's first calls are not lost. One that found
      // the window taken by those that waited with it gets a turn instead, as does every longer wait.
      if (look === 7 || waited + wait > ADMIT_WAIT_IN_SLOT_MS || wait >= timeLeftMs(signal, now))
        return { admitted: false, turn: this.turnAfter(window, now(), kind) };
      await (this.options.sleep ?? sleep)(wait, signal);
      waited += wait;
    }
    const budgetWait = this.pacingWaitMs(now());
    if (budgetWait > 0) return { admitted: false, turn: { waitMs: budgetWait, spreadMs: 0 } };
    const ticket: Ticket = { kind, admittedAt: now(), expected: this.callsPerMessage(kind), calls: 0 };
    this.tickets.add(ticket);
    try {
      return { admitted: true, value: await ticketStore.run({ client: this, ticket }, work) };
    } finally {
      this.tickets.delete(ticket);
      const learnt = this.learnt.get(kind) ?? { messages: 0, calls: 0 };
      this.learnt.set(kind, { messages: learnt.messages + 1, calls: learnt.calls + ticket.calls });
    }
  }

  /**
   * A window the ATS has not announced yet (no call made since the last one ended) while turns are given in it: as
   * large as the last one announced, ending with its slot's window.
   */
  private assumedWindow(now: number): RateWindow | undefined {
    const slot = this.slotAt(now);
    if (!slot || this.lastLimit === undefined) return undefined;
    const { windowMs } = this.slotShape();
    const resetAt = slot.startAt + windowMs * (Math.floor((now - slot.startAt) / windowMs) + 1);
    return { remaining: this.lastLimit, resetAt, limit: this.lastLimit };
  }

  /** The window the ATS announced, or else the connection's own budget seen as one; undefined when neither. */
  private currentWindow(now: number): RateWindow | undefined {
    if (this.window && now < this.window.resetAt) return this.window;
    const budget = this.options.budget;
    if (!budget) return undefined;
    if (!this.ownWindow || now >= this.ownWindow.resetAt) {
      // A window begins with the budget less the calls still unanswered. Those answered lately still hold their
      // place in the budget a little longer, and the calls wait for it in the worker (BUDGET_WAIT_IN_SLOT_MS).
      const windows = admissionWindows(budget);
      const unanswered = this.sent.filter((call) => call.answeredAt === undefined).length;
      const limit = this.budgetLimit(budget) * windows;
      this.ownWindow = { remaining: limit - unanswered, resetAt: now + budget.windowMs * windows, limit };
    }
    return this.ownWindow;
  }

  /**
   * The calls the messages admitted and still working are expected to make and have not made yet. A message gives
   * them up when it finishes; one working longer than RESERVATION_MS (waiting on another API) gives them up then.
   */
  private reserved(now: number): number {
    let sum = 0;
    for (const ticket of this.tickets)
      if (ticket.admittedAt > now - RESERVATION_MS) sum += Math.max(0, ticket.expected - ticket.calls);
    return sum;
  }

  /** The calls a message of `kind` costs, once 10 have finished and shown it (1.5 until then). */
  private callsPerMessage(kind: string): number {
    const learnt = this.learnt.get(kind);
    return learnt && learnt.messages >= 10 ? learnt.calls / learnt.messages : DEFAULT_CALLS_PER_MESSAGE;
  }

  /** Turns come in slots of whole windows at least TURN_SLOT_MS long: a queue's delay counts in whole seconds. */
  private slotShape(): { windowMs: number; windowsPerSlot: number; slotMs: number } {
    const budget = this.options.budget;
    const windowMs = this.windowMs ?? (budget ? budget.windowMs * admissionWindows(budget) : DEFAULT_WINDOW_MS);
    const windowsPerSlot = Math.max(1, Math.round(TURN_SLOT_MS / windowMs));
    return { windowMs, windowsPerSlot, slotMs: windowMs * windowsPerSlot };
  }

  /** The slot of turns that `at` falls in, if turns were given in it. */
  private slotAt(at: number): BookedSlot | undefined {
    const { slotMs } = this.slotShape();
    return this.booked.find((turn) => at >= turn.startAt && at < turn.startAt + slotMs);
  }

  /** The calls of the messages whose turn is now and that have not come back yet: this window's share of them. */
  private heldForTurns(now: number): number {
    const turn = this.slotAt(now);
    if (!turn) return 0;
    const { windowMs, slotMs } = this.slotShape();
    const windowsLeft = Math.max(1, Math.ceil((turn.startAt + slotMs - now) / windowMs));
    return Math.max(0, turn.calls - turn.arrived) / windowsLeft;
  }

  private turnAfter(window: RateWindow, now: number, kind = this.ticket()?.kind ?? 'message'): Turn {
    // Turns are given in slots of whole windows at least TURN_SLOT_MS long: a queue's delay counts in seconds,
    // too coarse to aim a message at one window of a second (Lever's).
    const { windowsPerSlot, slotMs } = this.slotShape();
    // Booked in calls: each message counts for what its kind costs, a slot holds its windows' calls.
    const cost = this.callsPerMessage(kind);
    const perSlot = window.limit ? window.limit * windowsPerSlot : Number.POSITIVE_INFINITY;
    this.booked = this.booked.filter((turn) => turn.startAt > now - slotMs);
    // Bounded: each slot ahead holds at least one message, and the SQS delay caps the wait anyway.
    for (let ahead = 0; ahead < 1_000; ahead++) {
      const startAt = window.resetAt + ahead * slotMs;
      let turn = this.booked.find((t) => Math.abs(t.startAt - startAt) < slotMs / 2);
      if (!turn) {
        turn = { startAt, calls: 0, arrived: 0 };
        this.booked.push(turn);
      }
      // A slot takes one message at least, whatever it costs.
      if (turn.calls > 0 && turn.calls + cost > perSlot) continue;
      const opener = turn.calls === 0;
      const bookedBefore = turn.calls;
      turn.calls += cost;
      // A slot of one window: its first message back early to open it, the others together as it opens, so the
      // queue hands them over in full batches and only one worker waits. A slot of several windows: its messages
      // back evenly over it, each at its place among the calls booked, so each window gets its share.
      if (windowsPerSlot > 1 && Number.isFinite(perSlot))
        return { waitMs: Math.max(0, turn.startAt + (bookedBefore / perSlot) * slotMs - now), spreadMs: 0 };
      if (windowsPerSlot > 1) return { waitMs: Math.max(0, turn.startAt - now), spreadMs: slotMs };
      return { waitMs: Math.max(0, turn.startAt - now - (opener ? OPENER_EARLY_MS : 0)), spreadMs: 0 };
    }
    return { waitMs: window.resetAt - now + 1_000 * slotMs, spreadMs: 0 };
  }

  private budgetLimit(budget: { limit: number }): number {
    return Math.max(1, Math.floor(budget.limit * this.budgetShare));
  }

  /**
   * The length of the ATS's window: at most the gap between two successive resets it announced (whole seconds
   * apart, as resets are announced), and at most the wait for its reset counted from the sending of a window's
   * first call (the window began after that, and its reset is announced up to a second late), in whole seconds
   * down: the smallest of these. Until either is seen, the longest such wait, in whole seconds up.
   */
  private learnWindowLength(observed: RateWindow, sentAt: number): void {
    const gap = observed.resetAt - (this.lastResetAt ?? observed.resetAt);
    if (gap >= 1000) this.shortestGap = Math.min(gap, this.shortestGap ?? gap);
    const toReset = observed.resetAt - sentAt;
    if (observed.limit !== undefined && observed.remaining === observed.limit - 1)
      this.firstCallToReset = Math.min(this.firstCallToReset ?? toReset, Math.floor(toReset / 1000) * 1000);
    this.longestToReset = Math.max(this.longestToReset, Math.ceil(toReset / 1000) * 1000);
    const estimate = Math.min(
      this.shortestGap ?? Number.POSITIVE_INFINITY,
      this.firstCallToReset ?? Number.POSITIVE_INFINITY,
    );
    this.windowMs = Number.isFinite(estimate) ? Math.max(1000, estimate) : Math.max(1000, this.longestToReset);
  }

  /**
   * A 429 halves this client's share of the budget, once a window (the 429s of one burst are one sign that others
   * spend the account too); a window of clean answers wins a tenth of it back.
   */
  private adjustShare(status: number, now: number): void {
    const budget = this.options.budget;
    if (!budget) return;
    if (status === 429) {
      if (now - this.shareCutAt < budget.windowMs) return;
      this.budgetShare = Math.max(0.1, this.budgetShare / 2);
      this.shareRaisedAt = now;
      this.shareCutAt = now;
      this.ownWindow = undefined;
    } else if (this.budgetShare < 1 && now - this.shareRaisedAt >= budget.windowMs) {
      this.budgetShare = Math.min(1, this.budgetShare + 0.1);
      this.shareRaisedAt = now;
    }
  }

  /** How long until the connection's own budget has room for one more call; 0 when it has now or has no budget. */
  private budgetWaitMs(now: number): number {
    const budget = this.options.budget;
    if (!budget) return 0;
    this.sent = this.sent.filter((call) => call.answeredAt === undefined || call.answeredAt > now - budget.windowMs);
    if (this.sent.length < this.budgetLimit(budget)) return 0;
    const answered = this.sent.flatMap((call) => (call.answeredAt === undefined ? [] : [call.answeredAt]));
    // Every call in the window still unanswered: look again shortly (an answer starts its call's last window).
    return answered.length ? Math.min(...answered) + budget.windowMs - now : Math.min(budget.windowMs, 100);
  }

  /**
   * Takes one call from the window the ATS announced, or else from the connection's budget, waiting a short turn
   * first; a call that would have to wait longer is refused (retryable, with the wait) and nothing is sent.
   */
  private async takeTurn(where: string, signal: AbortSignal | undefined): Promise<() => void> {
    const now = this.options.now ?? Date.now;
    // A window past its end is kept (its end is what an early call is judged by) but no longer paces.
    const window = this.window && now() < this.window.resetAt ? this.window : undefined;
    if (window) {
      if (window.remaining <= 0) throw spentWindow(where, this.turnAfter(window, now()));
      this.spendCall(window);
      return () => undefined;
    }
    // Bounded: each wait ends when the oldest call leaves the window, and a budget holds a fixed number of calls.
    for (let turn = 0; turn < 1_000; turn++) {
      const wait = this.budgetWaitMs(now());
      if (wait <= 0) {
        const own = this.currentWindow(now());
        if (!own) {
          this.countCall();
          return () => undefined;
        }
        this.spendCall(own);
        const call: { answeredAt: number | undefined } = { answeredAt: undefined };
        this.sent.push(call);
        return () => {
          call.answeredAt = now();
        };
      }
      // A wait the worker's deadline would cut short: the message waits in the queue instead, nothing sent.
      if (wait > BUDGET_WAIT_IN_SLOT_MS || wait >= timeLeftMs(signal, now)) {
        const own = this.currentWindow(now());
        throw spentWindow(where, own ? this.turnAfter(own, now()) : { waitMs: wait, spreadMs: 0 });
      }
      await (this.options.sleep ?? sleep)(wait, signal);
    }
    throw spentWindow(where, { waitMs: this.options.budget?.windowMs ?? 1000, spreadMs: 0 });
  }

  /** One call taken from a window: one fewer left in it, counted as the call of the message being worked. */
  private spendCall(window: RateWindow): void {
    window.remaining--;
    this.countCall();
  }

  /** The message being worked on this client, if any (a sweep's pages are no message's). */
  private ticket(): Ticket | undefined {
    const held = ticketStore.getStore();
    return held?.client === this ? held.ticket : undefined;
  }

  private countCall(): void {
    const ticket = this.ticket();
    if (ticket) ticket.calls++;
  }

  private target(path: string): string {
    const base = this.options.baseUrl.replace(/\/+$/, '');
    if (!/^https?:\/\//i.test(path)) return base + path;
    // A next-page URL from the ATS: followed only on the ATS's own origin, where the credentials belong.
    if (new URL(path).origin !== new URL(base).origin)
      throw new AtsError(ATS_ERROR_CODES.malformedResponse, `a next page on another origin: ${redactUrl(path)}`);
    return path;
  }

  private async exchange(request: AtsRequest): Promise<{ where: string; body: unknown; headers: Headers }> {
    const url = this.target(request.path);
    const where = `${request.method} ${redactUrl(url)}`;
    const isWrite = request.method !== 'GET' && !request.readOnly && !request.idempotent;
    const now = this.options.now ?? Date.now;
    let refreshed = false;
    const attempt = async (): Promise<{ where: string; body: unknown; headers: Headers }> => {
      const answered = await this.takeTurn(where, request.signal);
      const authorization = await this.options.authorization(false);
      const send = (auth: string) =>
        sendHttpRequest(
          {
            url,
            method: request.method,
            headers: {
              authorization: auth,
              accept: 'application/json',
              ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            body: request.body === undefined ? undefined : JSON.stringify(request.body),
            timeoutMs: this.options.timeoutMs ?? HTTP_DEFAULTS.timeoutMs,
            signal: request.signal,
          },
          this.fetchImpl,
        ).catch((error: unknown) => {
          throw new AtsError(ATS_ERROR_CODES.unavailable, (error as Error).message, {
            cause: error,
            mayHaveSucceeded: isWrite,
          });
        });
      this.inFlight++;
      const sentAt = now();
      // Sent after the end read from the window's answers and before the reset it announced.
      const readEnd = this.window?.resetAt;
      const sentEarly =
        readEnd !== undefined && this.lastResetAt !== undefined && sentAt >= readEnd && sentAt < this.lastResetAt;
      let response: Awaited<ReturnType<typeof send>>;
      try {
        response = await send(authorization);
      } finally {
        this.inFlight--;
        answered();
      }
      const observed = observedWindow(response.headers, now());
      if (!observed) this.adjustShare(response.status, now());
      if (observed) {
        const sameWindow = this.lastResetAt === observed.resetAt;
        this.learnWindowLength(observed, sentAt);
        this.lastResetAt = observed.resetAt;
        if (observed.limit !== undefined) this.lastLimit = observed.limit;
        // A call sent before the reset announced, on the window's end read from its answers, and refused: this
        // ATS's windows do not start at their first call (they are fixed on the clock). Its resets are taken as
        // announced from now on.
        if (response.status === 429 && sentEarly) this.readsResetsEarly = false;
        // The reset is announced in whole seconds, up to one late. The window began before this answer came, so it
        // ends within its length of now: the earliest such bound of its answers is kept, and a window that starts
        // at its first call (a new one as soon as the last ends) is met as it resets, not a second later.
        let resetAt = observed.resetAt;
        if (this.readsResetsEarly && this.windowMs !== undefined) {
          const before = sameWindow && this.window ? this.window.resetAt : Number.POSITIVE_INFINITY;
          resetAt = Math.min(resetAt, now() + this.windowMs, before);
        }
        this.window = { ...observed, resetAt, remaining: observed.remaining - this.inFlight };
      }
      if (response.status === 401 && !refreshed) {
        // An expired or revoked token: authenticate once more (nothing was written with a 401).
        refreshed = true;
        response = await send(await this.options.authorization(true));
      }
      if (response.status < 200 || response.status >= 300) {
        const retryAfter =
          parseRetryAfter(response.headers, now()) ??
          (response.status === 429 ? resetDelayMs(response.headers, now()) : undefined);
        throw atsErrorForStatus(response.status, where, errorDetail(response.bodyText), retryAfter, isWrite);
      }
      const body = safeJson(response.bodyText);
      const failure = this.options.failureInBody?.(body);
      if (failure !== undefined)
        throw new AtsError(ATS_ERROR_CODES.invalidRequest, `${where}: ${failure}`, { status: response.status });
      return { where, body, headers: response.headers };
    };
    return withRetry(attempt, this.policy, {
      sleep: this.options.sleep,
      signal: request.signal,
      // A turn the pacer gave (nothing sent) is taken through the queue: its place among the waiting is booked, and
      // sleeping it out here would hold a worker slot and spend a call booked for another message.
      shouldRetry: (error) =>
        (error as AtsError).spreadMs === undefined && (!isWrite || !(error as AtsError).mayHaveSucceeded),
    });
  }
}

/**
 * How many of a budget's windows are admitted as one: a window of a second (Lever's) is seen as
 * BUDGET_WAIT_IN_SLOT_MS long, with its calls, as a message makes its calls over about that long (the calls
 * themselves are paced to the budget, waiting their turn in the call).
 */
function admissionWindows(budget: { windowMs: number }): number {
  return Math.max(1, Math.round(BUDGET_WAIT_IN_SLOT_MS / budget.windowMs));
}

/** A call the pacer kept back: the window is spent until its reset; nothing was sent. */
function spentWindow(where: string, turn: Turn): AtsError {
  return new AtsError(ATS_ERROR_CODES.rateLimited, `${where}: the ATS's rate-limit window is spent; not sent`, {
    retryAfterMs: turn.waitMs,
    spreadMs: turn.spreadMs,
  });
}

/** The pacing budget of a connection's `atsRateLimit`, or `fallback` (the ATS's documented rate) when unset. */
export function rateBudget(
  limit: { requests: number; perSeconds: number } | undefined,
  fallback?: AtsHttpOptions['budget'],
): AtsHttpOptions['budget'] {
  return limit ? { limit: limit.requests, windowMs: Math.round(limit.perSeconds * 1000) } : fallback;
}

export function basicAuth(user: string, password = ''): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
