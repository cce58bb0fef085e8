import { type AttributeValue, GetItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { reportNotes, takeInterview } from '../../helpers/local-stack';
import { CONNECTION, useGreenhouseStack } from '../../helpers/greenhouse-stack';

/** Reports written back on Greenhouse: once however they arrive (three times, dropped, found again), and the move. */
describe('Pipeline: Greenhouse write-backs on the local stack', () => {
  const greenhouse = useGreenhouseStack('greenhouse-write-back');
  const { postReport, invitedCandidate, completedWithoutWebhook } = greenhouse;
  let stack: LocalStack;
  beforeAll(() => {
    ({ stack } = greenhouse.held);
  });

  it('writes one note when the same report webhook arrives three times', async () => {
    const { email, application, interviewId } = await invitedCandidate();
    stack.interview.setFaults({ dropWebhookRate: 1 });
    const { report_id: reportId, candidate_id: candidateId } = takeInterview(stack, interviewId, {
      name: 'Test Candidate',
      email,
    });
    stack.interview.setFaults({ dropWebhookRate: 0 });
    const answers = await Promise.all(
      [1, 2, 3].map(() => postReport({ report_id: reportId, interview_id: interviewId, candidate_id: candidateId })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    await waitFor(() => reportNotes(stack, reportId).length > 0, 60_000, 'the report note');
    await stack.waitForQuiet();
    expect(reportNotes(stack, reportId)).toHaveLength(1);
    expect(reportNotes(stack, reportId)[0]?.candidateId).toBe(application.candidateId);
  }, 90_000);

  it('writes back a report whose webhook was dropped, through the reconciler', async () => {
    const { application, reportId } = await completedWithoutWebhook(90);
    expect(stack.interview.state.deliveries.find((d) => d.report_id === reportId)?.outcome).toBe('dropped');
    await stack.waitForQuiet();
    expect(reportNotes(stack, reportId)).toHaveLength(0);
    const { enqueued } = await stack.reconcileNow();
    expect(enqueued).toBeGreaterThanOrEqual(1);
    await waitFor(() => reportNotes(stack, reportId).length === 1, 20_000, 'the reconciled write-back');
    await waitFor(
      () => stack.greenhouse.state.moves.some((m) => m.applicationId === application.id && m.toStageId === '9002'),
      20_000,
      'the stage move',
    );
    await stack.waitForQuiet();
    await stack.reconcileNow();
    await stack.waitForQuiet();
    expect(reportNotes(stack, reportId)).toHaveLength(1);
    expect(
      stack.greenhouse.state.moves.filter((m) => m.applicationId === application.id && m.toStageId === '9002'),
    ).toHaveLength(1);
  });
  it('enqueues a report once however many reconciler runs find it while it waits; writes it once', async () => {
    const { interviewId, reportId } = await completedWithoutWebhook(60);
    const ofThisReport = (m: Record<string, unknown>) => m.reportId === reportId;
    // Greenhouse answers 429 to everything for now: the write-back is deferred, as behind a spent window.
    stack.ats.greenhouse.setFaults({ rate429: 1 });
    try {
      const first = await stack.reconcileNow();
      expect(first.enqueued).toBeGreaterThanOrEqual(1);
      await waitFor(
        () =>
          stack.watch
            .waiting()
            .some((m) => m.kind === 'report-created' && (m as { reportId?: string }).reportId === reportId),
        20_000,
        'the write-back deferred',
      );
      // Two more runs while its message waits: the report is pending, not enqueued again.
      expect((await stack.reconcileNow()).enqueued).toBe(0);
      expect((await stack.reconcileNow()).enqueued).toBe(0);
    } finally {
      stack.ats.greenhouse.setFaults({ rate429: 0 });
    }
    await waitFor(() => reportNotes(stack, reportId).length === 1, 60_000, 'the write-back');
    await stack.waitForQuiet();
    expect(reportNotes(stack, reportId)).toHaveLength(1);
    expect(stack.watch.distinctReceived('report-created', ofThisReport)).toBe(1);
    // A late webhook for the same report finds it written back: acknowledged, and no second message either.
    expect((await postReport({ report_id: reportId, interview_id: interviewId, candidate_id: 'c' })).status).toBe(200);
    await stack.waitForQuiet();
    expect(stack.watch.distinctReceived('report-created', ofThisReport)).toBe(1);
  }, 120_000);

  it("advances by the job's own stage id (idsByJob, job 3301) and by name (job 3302), once each", async () => {
    // config/connections.local.json: toStage {idsByJob: {"3301": "9002"}, name: "Hiring Manager Review"}.
    const moved: Record<string, number> = {};
    const stageReads = () => stack.greenhouse.state.requests['GET /v3/job_interview_stages'] ?? 0;
    const readsBefore = stageReads();
    for (const [jobId, expected] of [
      ['3301', '9002'],
      ['3302', '9102'],
    ] as const) {
      const { email, application, interviewId } = await invitedCandidate(jobId);
      takeInterview(
        stack,
        interviewId,
        { name: 'Test Candidate', email },
        { ai_match_score: 92, proctoring_violations: 0 },
      );
      await waitFor(
        () => stack.greenhouse.state.moves.some((m) => m.applicationId === application.id && m.toStageId === expected),
        20_000,
        `the move of the job ${jobId} application`,
      );
      await stack.waitForQuiet();
      moved[jobId] = stack.greenhouse.state.moves.filter(
        (m) => m.applicationId === application.id && m.toStageId === expected,
      ).length;
    }
    expect(moved).toEqual({ 3301: 1, 3302: 1 });
    // A name lookup happened for job 3302 only; job 3301's stage came from idsByJob.
    expect(stageReads() - readsBefore).toBe(1);
  });

  it("records the reconciler's look at a quiet interview once it is made, and the next run skips it", async () => {
    const { interviewId } = await invitedCandidate('3302');
    await stack.waitForQuiet();
    // The interview's job and every open invitation of it, quiet for three days.
    const quiet = marshall({ ':t': Date.now() - 3 * 86_400_000 });
    const touch = (TableName: string, Key: Record<string, AttributeValue>) =>
      stack.dynamo.send(
        new UpdateItemCommand({
          TableName,
          Key,
          UpdateExpression: 'SET updatedAt = :t',
          ExpressionAttributeValues: quiet,
        }),
      );
    const byIndex = async (TableName: string, IndexName: string, name: string, value: string) =>
      (
        await stack.dynamo.send(
          new QueryCommand({
            TableName,
            IndexName,
            KeyConditionExpression: '#k = :v',
            ExpressionAttributeNames: { '#k': name },
            ExpressionAttributeValues: marshall({ ':v': value }),
          }),
        )
      ).Items ?? [];
    for (const item of await byIndex(stack.tables.applications, 'byInterview', 'interviewId', interviewId))
      await touch(stack.tables.applications, { pk: item.pk as AttributeValue, sk: item.sk as AttributeValue });
    for (const item of await byIndex(stack.tables.jobs, 'byConnection', 'connectionId', CONNECTION))
      if (item.interviewId?.S === interviewId) await touch(stack.tables.jobs, { pk: item.pk as AttributeValue });
    const look = () =>
      stack.dynamo.send(
        new GetItemCommand({
          TableName: stack.tables.events,
          Key: marshall({ pk: `enqueued#${CONNECTION}#paged#${interviewId}` }),
          ConsistentRead: true,
        }),
      );
    expect((await look()).Item).toBeUndefined();
    const before = Date.now();
    await stack.reconcileNow();
    const recorded = Number((await look()).Item?.enqueuedAt?.N);
    expect(recorded).toBeGreaterThanOrEqual(before);
    // The next run, within the hour: the interview is not looked at again, its record unchanged.
    await stack.reconcileNow();
    expect(Number((await look()).Item?.enqueuedAt?.N)).toBe(recorded);
  });
});
