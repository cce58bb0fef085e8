import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import * as v from 'valibot';
import {
  backlogRecorder,
  deferralDelaySeconds,
  planDeferral,
  planDeferralPastDeadline,
  withCarried,
  requestedWaitMs,
} from '../../../functions/_runtime/deferral';
import { claimLeaseMs, sqsBatchHandler } from '../../../functions/_runtime/sqs-batch';
import { activity } from '../../../functions/_runtime/activity';
import { AtsError } from '../../../shared/ats/errors';
import { keptBack } from '../../../shared/pacing/gate';
import { RateLimitedError, UnavailableError } from '../../../shared/interview-service/errors';
import {
  ClaimHeldElsewhereError,
  InterviewNotReadyError,
  NoRoomBeforeDeadlineError,
} from '../../../shared/pipeline/errors';
import { WORKER_TIMING } from '../../../shared/pipeline/constants';
import { type QueueMessage, reportCreatedMessageSchema, type ReportCreatedMessage } from '../../../shared/queue';
import { reportCreatedMessage } from '../../helpers/pipeline-records';

const NOW = Date.UTC(2026, 10, 22, 9, 0, 0);
const reportMessage = (overrides: Partial<ReportCreatedMessage> = {}): ReportCreatedMessage =>
  reportCreatedMessage({ connectionId: 'acme-workable', enqueueId: 'enq-1', ...overrides });

function sqsRecordFactory(body: unknown, messageId = 'msg-1'): SQSRecord {
  return {
    messageId,
    receiptHandle: `handle-${messageId}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(NOW),
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: String(NOW),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:report-events',
    awsRegion: 'eu-west-1',
  };
}

const rateLimitedByAts = (retryAfterMs?: number) =>
  new AtsError(
    'ats-rate-limited',
    'POST /spi/v3/candidates/1/comments: 429',
    retryAfterMs === undefined ? { status: 429 } : { status: 429, retryAfterMs },
  );

describe('Function: requestedWaitMs', () => {
  it.each([
    ['an ATS 429 with a reset time', 7_000, rateLimitedByAts(7_000)],
    ['an ATS 429 with no hint', WORKER_TIMING.defaultRateLimitWaitMs, rateLimitedByAts()],
    [
      'an interview-service 429 with Retry-After',
      45_000,
      new RateLimitedError('GET /interview/reports: 429', { retryAfterMs: 45_000 }),
    ],
    ['a claim held by another worker', 61_000, new ClaimHeldElsewhereError('report rep-1', 61_000)],
    ["another worker's interview creation", 30_000, new InterviewNotReadyError('acme#3301#ai-screen', 30_000)],
    ['an ATS 5xx', undefined, new AtsError('ats-unavailable', '503', { status: 503 })],
    ['the service unavailable', undefined, new UnavailableError('GET /interview/reports: 502')],
    ['a plain Error', undefined, new Error('boom')],
    ['not an object', undefined, 'boom'],
  ])('%s → %s ms', (_case, expected, error) => {
    expect(requestedWaitMs(error)).toBe(expected);
  });
});

describe('Function: deferralDelaySeconds', () => {
  it.each([
    [7_000, 0, 0, 7],
    [7_000, 0, 0.999, 11],
    [7_000, 2, 0, 28],
    [400, 0, 0, 1],
    [45_000, 6, 0.5, 450],
    [10_000, 9, 0, 80],
    [400_000, 3, 0.5, 900],
  ])('waits %i ms after %i deferrals (random %d) → %i s', (waitMs, deferrals, random, expected) => {
    expect(deferralDelaySeconds(waitMs, deferrals, () => random)).toBe(expected);
  });

  it('never waits less than asked, nor past the 900 s SQS allows', () => {
    for (let deferrals = 0; deferrals < WORKER_TIMING.maxDeferrals; deferrals++) {
      for (const random of [0, 0.5, 0.999]) {
        const seconds = deferralDelaySeconds(30_000, deferrals, () => random);
        expect(seconds).toBeGreaterThanOrEqual(Math.min(900, 30));
        expect(seconds).toBeLessThanOrEqual(900);
      }
    }
  });
});

describe('Function: planDeferral', () => {
  it('plans the same message with one deferral more and the delay asked for, not doubled', () => {
    // The ATS named the wait (Retry-After, its window's reset): kept as it is, whatever the earlier deferrals.
    expect(planDeferral(reportMessage({ deferrals: 2 }), rateLimitedByAts(5_000), () => 0)).toEqual({
      message: reportMessage({ deferrals: 3 }),
      delaySeconds: 5,
    });
  });

  it('carries a turn the message goes back for and the step it was booked for', () => {
    const turn = new AtsError('ats-rate-limited', 'its turn is later', {
      retryAfterMs: 4_000,
      turnAt: 1_000_000,
      turnCalls: 7,
      turnKind: 'writeBackMove',
    });
    const untouched = planDeferral(reportMessage(), turn, () => 0)?.message;
    expect(untouched).toMatchObject({ turnAt: 1_000_000, turnCalls: 7, turnKind: 'writeBackMove', deferrals: 1 });
    // The copy is a valid message of its kind.
    expect(v.safeParse(reportCreatedMessageSchema, untouched).success).toBe(true);
    // Deferred for another reason (a 429): no turn goes with it.
    const later = planDeferral(untouched as QueueMessage, rateLimitedByAts(5_000), () => 0)?.message;
    for (const field of ['turnAt', 'turnCalls', 'turnKind']) expect(later).not.toHaveProperty(field);
    // Cut by the worker's deadline: part of its work may be done, and its turn is spent.
    const cutShort = planDeferralPastDeadline(untouched as QueueMessage, true, Date.now() + 5_000)?.message;
    for (const field of ['turnAt', 'turnCalls', 'turnKind']) expect(cutShort).not.toHaveProperty(field);
  });

  it("carries what the run found (a report's application) whatever sends it back, as a valid message", () => {
    const foundApplication = { atsApplicationId: '4401', triggerId: 'ai-screen' };
    const carry = { foundApplication };
    const turn = new AtsError('ats-rate-limited', 'later', { turnAt: 1_000_000, turnCalls: 2 });
    const planned = [
      planDeferral(reportMessage(), turn, () => 0),
      planDeferral(reportMessage(), rateLimitedByAts(5_000), () => 0),
      planDeferralPastDeadline(reportMessage(), true, Date.now() + 5_000),
    ];
    for (const plan of planned) {
      const copy = withCarried(plan?.message as QueueMessage, carry);
      expect(copy).toMatchObject({ foundApplication, deferrals: 1 });
      expect(v.safeParse(reportCreatedMessageSchema, copy).success).toBe(true);
    }
    // A run that carries nothing leaves the copy as it was.
    const plain = planDeferral(reportMessage(), rateLimitedByAts(5_000), () => 0)?.message as QueueMessage;
    expect(withCarried(plain, undefined)).toBe(plain);
  });

  it('leaves the message to SQS once its deferrals are spent, or when nothing asked to wait', () => {
    const spent = reportMessage({ deferrals: WORKER_TIMING.maxDeferrals });
    expect(planDeferral(spent, rateLimitedByAts(5_000), () => 0)).toBeUndefined();
    expect(planDeferral(reportMessage(), new Error('boom'), () => 0)).toBeUndefined();
  });

  it('lets a message wait for the turn it holds, uncounted, for a day from its receipt; a new turn counts', () => {
    // A bulk move on a slow ATS: the turn is hours away, past what ten 15-minute delays reach.
    const turnAt = Date.now() + 5 * 3_600_000;
    const receivedAt = Date.now() - 3 * 3_600_000;
    const held = reportMessage({ deferrals: WORKER_TIMING.maxDeferrals, turnAt, turnCalls: 2, receivedAt });
    const again = planDeferral(held, new AtsError('ats-rate-limited', 'later', { turnAt, turnCalls: 2 }), () => 0);
    expect(again?.message).toMatchObject({ deferrals: WORKER_TIMING.maxDeferrals, turnAt });
    expect(again?.delaySeconds).toBe(900);
    // A turn booked anew (after a refusal) is another wait: counted, and past the limit SQS's retries take over.
    const rebooked = new AtsError('ats-rate-limited', 'later', { turnAt: turnAt + 60_000, turnCalls: 2 });
    expect(planDeferral(held, rebooked, () => 0)).toBeUndefined();
    const fresh = reportMessage({ deferrals: 3, turnAt, turnCalls: 2, receivedAt });
    expect(planDeferral(fresh, rebooked, () => 0)?.message).toMatchObject({ deferrals: 4 });
    // A day after its receipt the wait counts again: a schedule gone wrong ends in the DLQ, where an alarm sees it.
    const old = { ...held, receivedAt: Date.now() - 25 * 3_600_000 };
    expect(
      planDeferral(old, new AtsError('ats-rate-limited', 'later', { turnAt, turnCalls: 2 }), () => 0),
    ).toBeUndefined();
  });
});

describe('Function: sqsBatchHandler with deferral', () => {
  const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const context = { getRemainingTimeInMillis: () => 60_000 } as never;
  const event = (...records: SQSRecord[]): SQSEvent => ({ Records: records });
  /** A batch of report messages, one per report id, their SQS message ids `a`, `b`, `c`... */
  const reports = (...reportIds: string[]): SQSEvent =>
    event(
      ...reportIds.map((reportId, i) => sqsRecordFactory(reportMessage({ reportId }), String.fromCharCode(97 + i))),
    );

  it('acknowledges a rate-limited message it deferred, and fails the others in the batch', async () => {
    const publishDelayed = vi.fn().mockResolvedValue([true]);
    const backlog = vi.fn().mockResolvedValue(undefined);
    const handler = sqsBatchHandler(
      reportCreatedMessageSchema,
      async (message) => {
        if (message.reportId === 'rate-limited') throw rateLimitedByAts(3_000);
        if (message.reportId === 'down') throw new AtsError('ats-unavailable', '503', { status: 503 });
      },
      logger,
      { defer: { queueUrl: () => 'q', publisher: { publishDelayed }, random: () => 0, backlog } },
    );
    const response = await handler(reports('rate-limited', 'down', 'fine'), context);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'b' }]);
    expect(publishDelayed).toHaveBeenCalledTimes(1);
    expect(publishDelayed).toHaveBeenCalledWith('q', [
      { message: reportMessage({ reportId: 'rate-limited', deferrals: 1 }), delaySeconds: 3 },
    ]);
    // The connection's queue holds that message for its ATS: the sweep yields until it is back.
    expect(backlog).toHaveBeenCalledTimes(1);
    expect(backlog.mock.calls[0]?.[0]).toBe(reportMessage().connectionId);
    expect(backlog.mock.calls[0]?.[1]).toBeGreaterThanOrEqual(Date.now() + 2_000);
  });

  it("notes a message's first deferral on its candidate's timeline, and only counts the later ones", async () => {
    const note = vi.spyOn(activity, 'note');
    try {
      const publishDelayed = vi.fn().mockResolvedValue([true, true]);
      const handler = sqsBatchHandler(
        reportCreatedMessageSchema,
        async () => {
          throw rateLimitedByAts(3_000);
        },
        logger,
        { defer: { queueUrl: () => 'q', publisher: { publishDelayed }, random: () => 0 } },
      );
      const first = reportMessage({ reportId: 'first', atsApplicationId: '4401' });
      const again = reportMessage({ reportId: 'again', atsApplicationId: '4402', deferrals: 2 });
      const response = await handler(event(sqsRecordFactory(first, 'a'), sqsRecordFactory(again, 'b')), context);
      expect(response.batchItemFailures).toEqual([]);
      expect(publishDelayed.mock.calls[0]?.[1]).toHaveLength(2);
      expect(note.mock.calls.map(([entry]) => [entry.atsApplicationId, entry.kind])).toEqual([['4401', 'deferred']]);
    } finally {
      note.mockRestore();
    }
  });

  it('counts a message kept back for its booked turn as paced, one the ATS refused (a 429) as deferred', async () => {
    const counted: string[] = [];
    const handler = sqsBatchHandler(
      reportCreatedMessageSchema,
      async (message) => {
        if (message.reportId === 'turn')
          throw keptBack('report', 4_000, { at: Date.now() + 4_000, calls: 2, step: 'x' });
        throw rateLimitedByAts(3_000);
      },
      logger,
      {
        defer: { queueUrl: () => 'q', publisher: { publishDelayed: vi.fn().mockResolvedValue([true, true]) } },
        metrics: { count: (metric) => counted.push(metric) },
      },
    );
    const response = await handler(reports('turn', 'refused'), context);
    expect(response.batchItemFailures).toEqual([]);
    expect(counted.sort()).toEqual(['Deferred', 'Paced']);
  });

  it('sends each message of a batch cut by one deadline back with its own application, never another', async () => {
    const publishDelayed = vi.fn().mockResolvedValue([true, true, true]);
    // One error for the whole batch, as the deadline's abort is: each run says what it found, then throws it.
    const deadline = new AtsError('ats-rate-limited', 'the deadline', { retryAfterMs: 1_000 });
    const handler = sqsBatchHandler(
      reportCreatedMessageSchema,
      async (message, _record, run) => {
        await new Promise((resolve) => setTimeout(resolve, message.reportId === 'r1' ? 20 : 1));
        run.carry({ foundApplication: { atsApplicationId: `app-${message.reportId}`, triggerId: 't' } });
        await new Promise((resolve) => setTimeout(resolve, message.reportId === 'r1' ? 1 : 30));
        throw deadline;
      },
      logger,
      { defer: { queueUrl: () => 'q', publisher: { publishDelayed }, random: () => 0 } },
    );
    const response = await handler(reports('r1', 'r2', 'r3'), context);
    expect(response.batchItemFailures).toEqual([]);
    const sent = publishDelayed.mock.calls.flatMap(([, copies]) => copies as { message: ReportCreatedMessage }[]);
    expect(sent.map(({ message }) => [message.reportId, message.foundApplication?.atsApplicationId]).sort()).toEqual([
      ['r1', 'app-r1'],
      ['r2', 'app-r2'],
      ['r3', 'app-r3'],
    ]);
    expect(deadline).not.toHaveProperty('carry');
  });

  it('fails the message when it cannot be sent back, so SQS retries it and nothing is lost', async () => {
    const handler = sqsBatchHandler(
      reportCreatedMessageSchema,
      async (message) => {
        if (message.reportId !== 'fine') throw rateLimitedByAts(3_000);
      },
      logger,
      {
        defer: {
          queueUrl: () => 'q',
          publisher: {
            publishDelayed: vi
              .fn()
              .mockRejectedValue(Object.assign(new Error('SQS down'), { code: 'queue-publish-failed' })),
          },
        },
      },
    );
    // A second, healthy record: when every record fails, Powertools fails the whole invocation instead.
    const response = await handler(
      event(sqsRecordFactory(reportMessage(), 'a'), sqsRecordFactory(reportMessage({ reportId: 'fine' }), 'b')),
      context,
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'a' }]);
    expect(logger.warn).toHaveBeenCalledWith('could not defer the message', {
      messageId: 'a',
      code: 'queue-publish-failed',
    });
  });

  it('sends the deferrals of records deferring at once in one request, fails the one SQS did not take', async () => {
    const publishDelayed = vi.fn().mockResolvedValue([true, false]);
    const handler = sqsBatchHandler(
      reportCreatedMessageSchema,
      async (message) => {
        if (message.reportId !== 'fine') throw rateLimitedByAts(3_000);
      },
      logger,
      { defer: { queueUrl: () => 'q', publisher: { publishDelayed }, random: () => 0 } },
    );
    const response = await handler(reports('one', 'two', 'fine'), context);
    expect(publishDelayed).toHaveBeenCalledTimes(1);
    expect(publishDelayed).toHaveBeenCalledWith('q', [
      { message: reportMessage({ reportId: 'one', deferrals: 1 }), delaySeconds: 3 },
      { message: reportMessage({ reportId: 'two', deferrals: 1 }), delaySeconds: 3 },
    ]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'b' }]);
  });

  it("defers a record the deadline cut short to its claim's end, instead of the visibility timeout", async () => {
    const publishDelayed = vi.fn().mockResolvedValue([true]);
    const handler = sqsBatchHandler(
      reportCreatedMessageSchema,
      async (message, _record, run) => {
        if (message.reportId === 'fine') return;
        // A call still on its way at the deadline: aborted by the worker's signal (time is not a verdict).
        await new Promise((_, reject) => run.signal.addEventListener('abort', () => reject(run.signal.reason)));
      },
      logger,
      { defer: { queueUrl: () => 'q', publisher: { publishDelayed }, random: () => 0 } },
    );
    // 600 ms left: the deadline fires at 500 ms (the least it allows); the claim runs past the time left by the
    // time a write sent just before the deadline takes to land.
    const short = { getRemainingTimeInMillis: () => 600 } as never;
    const response = await handler(
      event(sqsRecordFactory(reportMessage(), 'a'), sqsRecordFactory(reportMessage({ reportId: 'fine' }), 'b')),
      short,
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(publishDelayed).toHaveBeenCalledTimes(1);
    const [, entries] = publishDelayed.mock.calls[0] as [string, { message: unknown; delaySeconds: number }[]];
    expect(entries).toHaveLength(1);
    expect(entries[0]?.message).toEqual(reportMessage({ deferrals: 1 }));
    const leaseSeconds = claimLeaseMs(600) / 1000;
    expect(entries[0]?.delaySeconds).toBeGreaterThanOrEqual(Math.floor(leaseSeconds - 0.5));
    expect(entries[0]?.delaySeconds).toBeLessThanOrEqual(Math.ceil(leaseSeconds));
  });

  it('sends back for a second a record whose e-mail was not begun for want of time before the deadline', async () => {
    const publishDelayed = vi.fn().mockResolvedValue([true]);
    const handler = sqsBatchHandler(
      reportCreatedMessageSchema,
      async (message) => {
        if (message.reportId !== 'fine') throw new NoRoomBeforeDeadlineError('invite-emailed', 1_200);
      },
      logger,
      { defer: { queueUrl: () => 'q', publisher: { publishDelayed }, random: () => 0 } },
    );
    const response = await handler(
      event(sqsRecordFactory(reportMessage(), 'a'), sqsRecordFactory(reportMessage({ reportId: 'fine' }), 'b')),
      context,
    );
    // Not a failure (no visibility timeout, no step toward the DLQ): back as soon as SQS allows, with its time.
    expect(response.batchItemFailures).toEqual([]);
    expect(publishDelayed).toHaveBeenCalledWith('q', [{ message: reportMessage({ deferrals: 1 }), delaySeconds: 1 }]);
  });

  it('leaves to SQS a record that failed before its deadline, or whose deferrals are spent', () => {
    const spent = reportMessage({ deferrals: WORKER_TIMING.maxDeferrals });
    expect(planDeferralPastDeadline(reportMessage(), false, Date.now() + 5_000)).toBeUndefined();
    expect(planDeferralPastDeadline(spent, true, Date.now() + 5_000)).toBeUndefined();
    expect(planDeferralPastDeadline(reportMessage(), true, 1_004_200, 1_000_000)).toEqual({
      message: reportMessage({ deferrals: 1 }),
      delaySeconds: 5,
    });
  });

  it('carries the turn it booked, and comes back when its turns said, whatever the earlier deferrals', () => {
    const now = Date.now();
    // The turns name when the message should be back: shortly before its turn (shared/pacing/turn.ts).
    const turn = Object.assign(rateLimitedByAts(21_400), { turnAt: now + 25_000, turnCalls: 2 });
    const planned = planDeferral(reportMessage({ deferrals: 4 }), turn, () => 0.999);
    expect(planned?.message).toEqual(reportMessage({ deferrals: 5, turnAt: now + 25_000, turnCalls: 2 }));
    // A delay counts whole seconds: rounded down, never past the moment asked, not spread by the jitter.
    expect(planned?.delaySeconds).toBe(21);
  });

  it('drops a turn a message no longer holds when it goes back for another reason', () => {
    const held = reportMessage({ turnAt: Date.now() - 1_000, turnCalls: 2 });
    const planned = planDeferral(held, rateLimitedByAts(8_000), () => 0);
    expect(planned?.message).toEqual(reportMessage({ deferrals: 1 }));
    expect(planned?.delaySeconds).toBe(8);
  });
});

describe('Function: backlogRecorder', () => {
  it("records a connection's backlog once a burst, again when it grows, and never throws", async () => {
    const recordBacklog = vi.fn().mockResolvedValue(undefined);
    const backlog = backlogRecorder(() => ({ recordBacklog }));
    await backlog('acme', NOW + 10_000);
    await backlog('acme', NOW + 25_000);
    await backlog('globex', NOW + 10_000);
    await backlog('acme', NOW + 50_000);
    expect(recordBacklog.mock.calls).toEqual([
      ['acme', NOW + 10_000],
      ['globex', NOW + 10_000],
      ['acme', NOW + 50_000],
    ]);
    const failing = backlogRecorder(() => ({ recordBacklog: vi.fn().mockRejectedValue(new Error('throttled')) }));
    await expect(failing('acme', NOW)).resolves.toBeUndefined();
    const unconfigured = backlogRecorder(() => {
      throw new Error('EVENTS_TABLE is not set');
    });
    await expect(unconfigured('acme', NOW)).resolves.toBeUndefined();
  });
});
