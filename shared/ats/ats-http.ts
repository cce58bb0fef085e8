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
const ADMIT_WAIT_IN_SLOT_MS = 1_500;
/** How much before its window's start a message sent back to wait comes back (within ADMIT_WAIT_IN_SLOT_MS). */
const ADMIT_EARLY_MS = 1_000;

/**
 * The messages of one window come back over this long from its start: enough that they do not all arrive at one
 * instant, short enough that the queue hands them to the workers in full batches.
 */
const TURN_SPREAD_MS = 1_000;

/** The shortest span turns are given in: several of an ATS's windows when they are short (Lever's second). */
const TURN_SLOT_MS = 5_000;

/** How long an admitted message holds the calls it is expected to make in its window. */
const RESERVATION_MS = 2_000;

/** A window's length until two announced resets have shown it (Greenhouse's and Workable's are 10 or 30 s). */
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
  /** Messages begun on this connection and calls sent: the calls a message costs, so the messages a window carries. */
  private messagesBegun = 0;
  private callsSent = 0;
  /** The length of the ATS's window: the shortest gap seen between two successive announced resets. */
  private windowMs: number | undefined;
  private lastResetAt: number | undefined;
  /** Calls the messages admitted in the window ending at `reservationsFor` are expected to make, oldest first. */
  private reservations: { at: number; calls: number }[] = [];
  private reservationsFor = 0;
  /** The windows ahead (by their start) and the messages sent back to wait for each. */
  private booked: { startAt: number; count: number }[] = [];
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
  public pacingWaitMs(now: number = (this.options.now ?? Date.now)()): number {
    const window = this.window;
    if (window && now < window.resetAt) return window.remaining > 0 ? 0 : window.resetAt - now;
    const budgetWait = this.budgetWaitMs(now);
    return budgetWait > BUDGET_WAIT_IN_SLOT_MS ? budgetWait : 0;
  }

  /**
   * A worker begins a message of this connection: undefined when the ATS takes calls now. When the announced window
   * is spent, the message's turn: after the reset, in the first later window with room for it, counting the
   * messages already sent back to wait and the calls a message has cost so far. A burst of 500 comes back spread
   * over the windows it needs, instead of all at each reset to be sent back again.
   */
  public async admitMessage(signal?: AbortSignal): Promise<{ waitMs: number; spreadMs: number } | undefined> {
    const now = this.options.now ?? Date.now;
    // Bounded: each look but the last sits out a reset, and those waits add up to ADMIT_WAIT_IN_SLOT_MS at most.
    let waited = 0;
    for (let look = 0; look < 8; look++) {
      const window = this.currentWindow(now());
      // Spent: no call left that the messages already admitted in this window have not reserved.
      if (!window || window.remaining - this.reservedIn(window, now()) >= 1) break;
      const wait = window.resetAt - now();
      // A reset within moments (a message sent back came a little early, as its turn allows) is waited for here: it
      // costs less than a round trip through the queue, and the window's first calls are not lost. One that found
      // the window taken by those that waited with it gets a turn instead, as does every longer wait.
      if (look === 7 || waited + wait > ADMIT_WAIT_IN_SLOT_MS || wait >= timeLeftMs(signal, now))
        return this.turnAfter(window, now());
      await (this.options.sleep ?? sleep)(wait, signal);
      waited += wait;
    }
    const budgetWait = this.pacingWaitMs(now());
    if (budgetWait > 0) return { waitMs: budgetWait, spreadMs: 0 };
    this.messagesBegun++;
    const current = this.currentWindow(now());
    if (current) {
      this.reservedIn(current, now());
      this.reservations.push({ at: now(), calls: this.callsPerMessage() });
    }
    return undefined;
  }

  /** The window the ATS announced, or else the connection's own budget seen as one; undefined when neither. */
  private currentWindow(now: number): RateWindow | undefined {
    if (this.window && now < this.window.resetAt) return this.window;
    const budget = this.options.budget;
    if (!budget) return undefined;
    if (!this.ownWindow || now >= this.ownWindow.resetAt) {
      // A window begins with the budget less the calls still unanswered. Those answered lately still hold their
      // place in the budget a little longer, and the calls wait for it in the worker (BUDGET_WAIT_IN_SLOT_MS).
      const unanswered = this.sent.filter((call) => call.answeredAt === undefined).length;
      const limit = this.budgetLimit(budget);
      this.ownWindow = { remaining: limit - unanswered, resetAt: now + budget.windowMs, limit };
    }
    return this.ownWindow;
  }

  /**
   * The calls of the window that messages admitted in it have yet to make. A message makes its calls within moments
   * of being admitted; one that made fewer than expected (nothing to do) stops holding them after RESERVATION_MS.
   */
  private reservedIn(window: RateWindow, now: number): number {
    // An announced window starts afresh; the budget's own windows follow each other while messages admitted in
    // one still make their calls in the next, so their reservations carry over.
    if (this.reservationsFor !== window.resetAt && window !== this.ownWindow) {
      this.reservationsFor = window.resetAt;
      this.reservations = [];
    }
    this.reservations = this.reservations.filter((r) => r.at > now - RESERVATION_MS && r.calls > 0);
    return this.reservations.reduce((sum, r) => sum + r.calls, 0);
  }

  private callsPerMessage(): number {
    return this.messagesBegun >= 20 ? Math.max(1, this.callsSent / this.messagesBegun) : 1.5;
  }

  private turnAfter(window: RateWindow, now: number): { waitMs: number; spreadMs: number } {
    const windowMs = this.windowMs ?? this.options.budget?.windowMs ?? DEFAULT_WINDOW_MS;
    // Turns are given in slots of whole windows at least TURN_SLOT_MS long: a queue's delay counts in seconds,
    // too coarse to aim a message at one window of a second (Lever's).
    const windowsPerSlot = Math.max(1, Math.round(TURN_SLOT_MS / windowMs));
    const slotMs = windowMs * windowsPerSlot;
    const callsPerMessage = this.callsPerMessage();
    const perSlot = window.limit
      ? Math.max(1, Math.floor((window.limit * windowsPerSlot) / callsPerMessage))
      : Number.POSITIVE_INFINITY;
    this.booked = this.booked.filter((turn) => turn.startAt > now - slotMs);
    // Bounded: each slot ahead holds at least one message, and the SQS delay caps the wait anyway.
    for (let ahead = 0; ahead < 1_000; ahead++) {
      const startAt = window.resetAt + ahead * slotMs;
      let turn = this.booked.find((t) => Math.abs(t.startAt - startAt) < slotMs / 2);
      if (!turn) {
        turn = { startAt, count: 0 };
        this.booked.push(turn);
      }
      if (turn.count >= perSlot) continue;
      turn.count++;
      // A slot of one window: back a little before it starts (the reset is announced in whole seconds), the last
      // moments waited out in the worker, so the window's first calls are not lost to the queue's delay. A slot of
      // several windows: back anywhere in it, and the worker sits out the short windows' resets.
      if (windowsPerSlot > 1) return { waitMs: Math.max(0, turn.startAt - now), spreadMs: slotMs };
      return { waitMs: Math.max(0, turn.startAt - now - ADMIT_EARLY_MS), spreadMs: TURN_SPREAD_MS };
    }
    return { waitMs: window.resetAt - now + 1_000 * slotMs, spreadMs: TURN_SPREAD_MS };
  }

  private budgetLimit(budget: { limit: number }): number {
    return Math.max(1, Math.floor(budget.limit * this.budgetShare));
  }

  /** A 429 halves this client's share of the budget; a window of clean answers wins a tenth of it back. */
  private adjustShare(status: number, now: number): void {
    const budget = this.options.budget;
    if (!budget) return;
    if (status === 429) {
      this.budgetShare = Math.max(0.1, this.budgetShare / 2);
      this.shareRaisedAt = now;
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
    const window = this.window;
    if (window && now() >= window.resetAt) this.window = undefined;
    else if (window) {
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
          this.callsSent++;
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

  /** One call taken from a window: one fewer left in it, and one fewer the messages admitted in it still hold. */
  private spendCall(window: RateWindow): void {
    window.remaining--;
    this.callsSent++;
    // An announced window's reservations are its own; the budget's own windows carry theirs over (reservedIn).
    const holdsReservations = window === this.ownWindow || this.reservationsFor === window.resetAt;
    const reservation = holdsReservations ? this.reservations[0] : undefined;
    if (reservation) reservation.calls = Math.max(0, reservation.calls - 1);
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
        // A later reset than the last one announced: the window is at most the gap between them.
        const gap = observed.resetAt - (this.lastResetAt ?? observed.resetAt);
        if (gap >= 1000) this.windowMs = Math.min(gap, this.windowMs ?? gap);
        this.lastResetAt = observed.resetAt;
        this.window = { ...observed, remaining: observed.remaining - this.inFlight };
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
      shouldRetry: (error) => !isWrite || !(error as AtsError).mayHaveSucceeded,
    });
  }
}

/** A call the pacer kept back: the window is spent until its reset; nothing was sent. */
function spentWindow(where: string, turn: { waitMs: number; spreadMs: number }): AtsError {
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
