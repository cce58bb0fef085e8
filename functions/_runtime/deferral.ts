import { WORKER_TIMING } from '../../shared/pipeline/constants';
import { SQS_MAX_DELAY_SECONDS } from '../../shared/queue/limits';
import type { QueueMessage } from '../../shared/queue';
import { type DelayedBatchPublisher, lazyQueuePublisher } from '../../shared/queue/lazy-publisher';
import { requireEnv } from './env';
import { queueLedger } from './store';
import { ATS_ERROR_CODES } from '../../shared/ats/errors';
import type { QueueLedger } from '../../shared/pipeline/ports';
import { errorCode, hasCode, retryAfterMs } from '../../shared/errors';

/** A guessed wait doubles at most this many times (8 × the guess). */
const MAX_DOUBLINGS = 3;
/** The rate-limit codes of the interview-service client and of the ATS adapters. */
const RATE_LIMITED_CODES: ReadonlySet<string> = new Set(['rate-limited', 'ats-rate-limited']);

/** Where a worker puts its own messages back for later. */
export interface DeferTarget {
  /** Read when needed: a function that never defers never needs its queue's URL. */
  queueUrl: () => string;
  /** A batch's records that defer at the same moment go back together, 10 to a request. */
  publisher: DelayedBatchPublisher;
  random?: () => number;
  /**
   * Told when a message goes back because its connection's ATS is rate-limited: the connection's queue holds work
   * until `until`, which background work (the sweep) leaves the ATS's budget to.
   */
  backlog?: (connectionId: string, until: number) => Promise<void>;
}

/**
 * A worker defers to its own queue, named by the environment variable `queueUrlEnv`. The SQS client loads on
 * the first deferral only: a worker defers rarely, and the client would cost every cold start (lazy-publisher).
 */
export function deferToOwnQueue(queueUrlEnv: string): DeferTarget {
  return { queueUrl: () => requireEnv(queueUrlEnv), publisher: lazyQueuePublisher(), backlog: backlogRecorder() };
}

/**
 * A seam for the local runtime (infra/local/queue-watch.ts), empty on AWS: told of every copy a worker sent back, so
 * a local run that does not drain can say what waits and why.
 */
export const deferralObserver: {
  deferred?: ((message: QueueMessage, delaySeconds: number, code: string) => void) | undefined;
} = {};

/**
 * A backlog recorded to within this much of a new one is not written again: a few writes a burst, not one a message.
 * A sweep that runs before the queue is through only meets a booked schedule: a page takes a turn only when one is
 * free within a worker's short wait (shared/pacing/turn.ts), so it makes no call the queue's messages needed. At
 * Greenhouse 50 per 10 s on 5 + 5 environments, 5 s wrote 52 marks for 200 candidates.
 */
const BACKLOG_SLACK_MS = 30_000;

/** True when the error is the connection's ATS asking to wait (a spent window, a 429), not another API. */
export const isAtsRateLimit = (error: unknown): boolean => hasCode(error, ATS_ERROR_CODES.rateLimited);

/** True when the call was kept back, never sent: its booked turn is later, or the ATS said its window is spent. */
export const isPaced = (error: unknown): boolean =>
  isAtsRateLimit(error) && (error as { paced?: unknown }).paced === true;

/**
 * Records a connection's backlog in the queue ledger, at most once per connection and `BACKLOG_SLACK_MS` in this
 * environment; the ledger itself keeps the latest of every environment's. A write that fails is only a sweep that
 * runs a little early: logged by nobody, tried again with the next deferral.
 */
export function backlogRecorder(
  ledger: () => Pick<QueueLedger, 'recordBacklog'> = lazyLedger(),
): (connectionId: string, until: number) => Promise<void> {
  const recorded = new Map<string, number>();
  return async (connectionId, until) => {
    if ((recorded.get(connectionId) ?? 0) >= until - BACKLOG_SLACK_MS) return;
    recorded.set(connectionId, until);
    // Never throws: the message is deferred already, and must not fail on top of it.
    try {
      await ledger().recordBacklog(connectionId, until);
    } catch {
      recorded.delete(connectionId);
    }
  };
}

function lazyLedger(): () => QueueLedger {
  let ledger: QueueLedger | undefined;
  return () => (ledger ??= queueLedger());
}

/** How long the outside world asked this work to wait (Retry-After, a rate-limit reset, a lease), if it did. */
export function requestedWaitMs(error: unknown): number | undefined {
  const asked = retryAfterMs(error);
  if (asked !== undefined && Number.isFinite(asked) && asked >= 0) return asked;
  if (RATE_LIMITED_CODES.has(errorCode(error))) return WORKER_TIMING.defaultRateLimitWaitMs;
  return undefined;
}

/**
 * At least the wait asked for, plus up to 50 % so a burst of messages deferred by the same Retry-After does not
 * come back at the same instant and meet the same limit. A wait the outside world named exactly (Retry-After, a
 * window's reset, a lease's end) is kept as it is, spread by the jitter; only a guessed one (a 429 that said
 * nothing) doubles with each earlier deferral, up to 8 times the guess: a rate window is seconds to a minute, and a
 * message waiting a quarter of an hour for one helps no one.
 */
export function deferralDelaySeconds(
  waitMs: number,
  deferrals: number,
  random: () => number = Math.random,
  exact = false,
): number {
  const base = Math.max(1, Math.ceil(waitMs / 1000)) * (exact ? 1 : 2 ** Math.min(deferrals, MAX_DOUBLINGS));
  return Math.min(SQS_MAX_DELAY_SECONDS, Math.ceil(base * (1 + random() / 2)));
}

/**
 * The delay of a message going back for the turn it reserved: its turns name when it should be back (shortly
 * before its turn, shared/pacing/turn.ts); a queue's delay counts in whole seconds, so it is rounded down, never past
 * the turn.
 */
export function turnDelaySeconds(returnInMs: number): number {
  return Math.min(SQS_MAX_DELAY_SECONDS, Math.max(0, Math.floor(returnInMs / 1000)));
}

/**
 * How long a message may wait uncounted for the turn it holds, from its receipt: a schedule booked further ahead (a
 * very long Retry-After, a schedule item gone wrong) ends in SQS's retries and the DLQ, where an alarm sees it.
 */
const MAX_TURN_WAIT_MS = 24 * 3_600_000;

/**
 * The copy to send back and its delay, when the error asked to wait and deferrals remain; else undefined (SQS's
 * own retry must do). A message that comes back by the visibility timeout waits 6 × the function timeout and
 * counts toward the DLQ; a deferred one comes back when the API is ready and does not. The copy keeps its
 * enqueueId, so the claims treat it as the same message.
 */
export function planDeferral(
  message: QueueMessage,
  error: unknown,
  random?: () => number,
): { message: QueueMessage; delaySeconds: number } | undefined {
  const waitMs = requestedWaitMs(error);
  const deferrals = message.deferrals ?? 0;
  const { retryAfterMs, turnAt, turnCalls, turnKind } = (error ?? {}) as {
    retryAfterMs?: unknown;
    turnAt?: unknown;
    turnCalls?: unknown;
    turnKind?: unknown;
  };
  // Back for the turn it already holds, further off than one delay reaches (SQS's 15 minutes): a long queue on a slow
  // ATS, no failure. Not counted, so a bulk move's last candidates wait their turns instead of reaching the DLQ; the
  // turn is a fixed time, so the waiting ends.
  const waitingForHeldTurn =
    typeof turnAt === 'number' &&
    'turnAt' in message &&
    message.turnAt === turnAt &&
    Date.now() - message.receivedAt < MAX_TURN_WAIT_MS;
  if (waitMs === undefined || (deferrals >= WORKER_TIMING.maxDeferrals && !waitingForHeldTurn)) return undefined;
  // The turn the message held before is spent either way.
  const rest = withoutTurn(message);
  // A turn reserved on the connection's schedule goes with the message, which runs in it without reserving again.
  if (typeof turnAt === 'number' && message.kind !== 'candidate-deleted') {
    const calls = typeof turnCalls === 'number' ? turnCalls : 1;
    const turn = {
      turnAt,
      turnCalls: calls,
      ...(typeof turnKind === 'string' ? { turnKind } : {}),
    };
    return {
      message: { ...rest, deferrals: waitingForHeldTurn ? deferrals : deferrals + 1, ...turn },
      delaySeconds: turnDelaySeconds(typeof retryAfterMs === 'number' ? retryAfterMs : turnAt - Date.now()),
    };
  }
  const delaySeconds = deferralDelaySeconds(waitMs, deferrals, random, typeof retryAfterMs === 'number');
  return { message: { ...rest, deferrals: deferrals + 1 }, delaySeconds };
}

/**
 * The copy with what its run found and said it carries (`RunOptions.carry`: a report's application), so it is not read
 * again when it comes back; the copy is parsed by its schema then, like any message.
 */
export function withCarried<M extends QueueMessage>(message: M, carry: Record<string, unknown> | undefined): M {
  return carry ? { ...message, ...carry } : message;
}

/** How long a disabled connection's message stays away before it looks again: `PARKED_RECHECK_SECONDS`, or 300. */
export function parkedRecheckSeconds(): number {
  const set = Number(process.env.PARKED_RECHECK_SECONDS);
  const seconds = Number.isInteger(set) && set > 0 ? set : WORKER_TIMING.parkedRecheckSeconds;
  return Math.min(SQS_MAX_DELAY_SECONDS, seconds);
}

/**
 * The copy of a disabled connection's message that waits on the queue: its deferrals as they were (parking is not
 * a deferral, and never sends it toward the DLQ), its turn dropped (it books a new one once it runs).
 */
export function planPark(message: QueueMessage): { message: QueueMessage; delaySeconds: number } {
  return { message: withoutTurn(message), delaySeconds: parkedRecheckSeconds() };
}

/** The message without the turn it held: spent once it ran in it, or it went back for another reason. */
function withoutTurn(message: QueueMessage): QueueMessage {
  const {
    turnAt: _turn,
    turnCalls: _calls,
    turnKind: _kind,
    ...rest
  } = message as QueueMessage & { turnAt?: number; turnCalls?: number; turnKind?: string };
  return rest as QueueMessage;
}

/**
 * Work the worker's deadline cut short (time is not a verdict): back once its claim has run out (`leaseEndsAt`),
 * one deferral more, instead of after the queue's visibility timeout (6 × the function timeout). Undefined when
 * the deadline has not passed or the message's deferrals are spent.
 */
export function planDeferralPastDeadline(
  message: QueueMessage,
  deadlinePassed: boolean,
  leaseEndsAt: number,
  now: number = Date.now(),
): { message: QueueMessage; delaySeconds: number } | undefined {
  const deferrals = message.deferrals ?? 0;
  if (!deadlinePassed || deferrals >= WORKER_TIMING.maxDeferrals) return undefined;
  const delaySeconds = Math.min(SQS_MAX_DELAY_SECONDS, Math.max(1, Math.ceil((leaseEndsAt - now) / 1000)));
  // Its turn is spent and part of its work may be done: it books a new one when it comes back.
  return { message: { ...withoutTurn(message), deferrals: deferrals + 1 }, delaySeconds };
}
