import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { DynamoRateSchedule } from '../../../shared/mapping/rate-schedule';
import { checkAwsCalls } from '../../../infra/local/iam-conformance';
import { recordedCalls, synthesizeForLocal } from '../../helpers/iam';
import { waitFor } from '../../helpers/local-http';
import { invitedInterviewId, reportNotes, startTestStack, takeInterview } from '../../helpers/local-stack';

const WORK_DIR = `.local/test-gather-${process.pid}`;
const CONNECTION = 'demo-greenhouse';
/** Longer than the write-back queue's 5-s batching window, so a report sent at once would be written back before. */
const GATHER_SECONDS = 10;

describe("Pipeline: the report webhook gathers a period's reports on the clock", () => {
  let stack: LocalStack;
  let token: string;

  beforeAll(async () => {
    stack = await startTestStack(WORK_DIR, { reportGatherSeconds: GATHER_SECONDS, recordAwsCalls: true });
    token = Object.values(stack.secrets)[0]!.interviewWebhookToken;
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(WORK_DIR, { recursive: true, force: true });
  });

  /** A candidate invited on job 3301 who took the interview, the report's webhook not sent yet. */
  async function tookInterview() {
    const email = `gather-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = stack.greenhouse.addCandidate({ first_name: 'Ga', last_name: 'Ther', email, job_id: 3301 });
    await stack.greenhouse.moveCandidate({ application_id: application.id, stage_name: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email);
    stack.interview.setFaults({ dropWebhookRate: 1 });
    const report = takeInterview(stack, interviewId, { name: 'Ga Ther', email });
    await stack.interview.whenIdle();
    stack.interview.setFaults({ dropWebhookRate: 0 });
    return { ...report, interview_id: interviewId };
  }

  const delayed = async () => {
    const answer = await stack.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: stack.queues.report.url,
        AttributeNames: ['ApproximateNumberOfMessagesDelayed'],
      }),
    );
    return Number(answer.Attributes?.ApproximateNumberOfMessagesDelayed ?? 0);
  };

  // First: a webhook environment that found its connection's schedule free looks again only after a while.
  it("books a report's turn as it is enqueued on a backlogged schedule: received once, in its turn", async () => {
    const report = await tookInterview();
    await stack.waitForQuiet(30_000);
    // A burst's backlog: the connection's ATS schedule booked 40 s ahead, further than a message would wait for, by
    // a worker that recorded what a write-back costs (so the report is booked at its cost, not at the guess).
    const schedule = new DynamoRateSchedule({ table: stack.tables.events, client: stack.dynamo });
    const publish = { 'report-created:stay': 1, 'report-created:move': 3 };
    const turnAt = await schedule.reserve(CONNECTION, 40_000, Date.now(), { publish });
    const before = { ...stack.sources.writeback.stats };

    const answer = await fetch(`${stack.gatewayUrl}/webhooks/interview/${CONNECTION}/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'interview_report.created', data: report }),
    });
    expect(answer.status).toBe(200);
    expect(await delayed()).toBe(1);
    // Out of sight past its gathering period, until shortly before its turn.
    await new Promise((resolve) => setTimeout(resolve, (GATHER_SECONDS + 6) * 1000));
    expect(await delayed()).toBe(1);
    expect(stack.sources.writeback.stats.records - before.records).toBe(0);

    await waitFor(() => reportNotes(stack, report.report_id).length === 1, 60_000, 'the report note');
    // In its turn, after the 40 s booked before it (a call goes out at its turn, give or take the milliseconds).
    expect(Date.now()).toBeGreaterThanOrEqual(turnAt + 39_000);
    await stack.waitForQuiet(30_000);
    // Received once, for its turn: never to book one and go back for it.
    expect(stack.sources.writeback.stats.records - before.records).toBe(1);
    expect(stack.sources.writeback.stats.failures - before.failures).toBe(0);
    expect(await stack.dlqDepths()).toEqual({ stage: 0, report: 0 });
    // The webhook's booking is a call its policy grants (the emulators check none).
    const recorded = recordedCalls(stack);
    expect(recorded).toContainEqual(expect.objectContaining({ fn: 'InterviewWebhook', action: 'dynamodb:UpdateItem' }));
    const { template, names } = synthesizeForLocal(stack, WORK_DIR);
    expect(checkAwsCalls(template, recorded, names)).toEqual([]);
  }, 120_000);

  it('keeps two reports out of sight until the end of their period, then writes both back', async () => {
    const reports = [await tookInterview(), await tookInterview()];
    await stack.waitForQuiet(30_000);
    // The webhook function warm, so both deliveries land early in the period whatever a cold start takes.
    const warm = await fetch(`${stack.gatewayUrl}/webhooks/interview/${CONNECTION}/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'interview.started', data: {} }),
    });
    expect(warm.status).toBe(200);
    // Both webhooks early in one period: their release is at least 8 s away.
    const periodMs = GATHER_SECONDS * 1000;
    const into = Date.now() % periodMs;
    if (into > 1000) await new Promise((resolve) => setTimeout(resolve, periodMs - into + 50));
    const releaseAt = Math.ceil(Date.now() / periodMs) * periodMs;
    const before = { ...stack.sources.writeback.stats };

    const answers = await Promise.all(
      reports.map((data) =>
        fetch(`${stack.gatewayUrl}/webhooks/interview/${CONNECTION}/${token}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ event: 'interview_report.created', data }),
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(await delayed()).toBe(2);

    await waitFor(
      () => reports.every((r) => reportNotes(stack, r.report_id).length === 1),
      30_000,
      'both report notes',
    );
    // Not before their period ended (a delay counts in whole seconds, rounded down).
    expect(Date.now()).toBeGreaterThanOrEqual(releaseAt - 1000);
    await stack.waitForQuiet(30_000);
    // Each handled once (the event source may split the period's two between pollers: SQS makes no promise).
    expect(stack.sources.writeback.stats.records - before.records).toBe(2);
    expect(stack.sources.writeback.stats.failures - before.failures).toBe(0);
    for (const r of reports) expect(reportNotes(stack, r.report_id)).toHaveLength(1);
    expect(await stack.dlqDepths()).toEqual({ stage: 0, report: 0 });
  }, 90_000);
});
