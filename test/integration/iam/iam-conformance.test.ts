import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_ENTRIES } from '../../../infra/aws/functions';
import { type CfnTemplate, checkAwsCalls, type LocalNames } from '../../../infra/local/iam-conformance';
import { recordedCalls, synthesizeForLocal } from '../../helpers/iam';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { startTestStack, invitedInterviewId, reportNotes } from '../../helpers/local-stack';

const WORK_DIR = `.local/test-iam-${process.pid}`;

/**
 * The emulators check no permission. The local runner records every AWS call each function makes while the
 * pipeline runs (an SDK middleware, infra/local/aws-calls.ts), and each is held against that function's policy
 * as `cdk synth` writes it for the same connections.
 */
describe('IAM conformance: every AWS call a function makes is granted by its synthesized policy', () => {
  let stack: LocalStack;
  let template: CfnTemplate;
  let names: LocalNames;

  beforeAll(async () => {
    // Reminders on (never due here): a report's webhook marks its invitation.
    stack = await startTestStack(WORK_DIR, { recordAwsCalls: true, lifecycle: { reminders: { afterHours: 1000 } } });
    ({ template, names } = synthesizeForLocal(stack, WORK_DIR));
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(WORK_DIR, { recursive: true, force: true });
  });

  const calls = () => recordedCalls(stack);

  it('finds no call outside the policy in invitations, duplicate reports, a deletion, the reconciler', async () => {
    // Invitations on two ATSs (a Lever replay key in the ATS webhook, the claim transaction, SES, the job lease).
    const emails = ['greenhouse', 'lever'].map(
      (kind) => `iam-${randomUUID().slice(0, 8)}+${kind}@candidates.example.com`,
    );
    const gh = stack.ats.greenhouse.addCandidate({ firstName: 'Ira', lastName: 'Am', email: emails[0] as string });
    const lv = stack.ats.lever.addCandidate({ firstName: 'Lou', lastName: 'Am', email: emails[1] as string });
    await stack.ats.greenhouse.moveCandidate({ applicationId: gh.id, stageName: 'AI Interview' });
    await stack.ats.lever.moveCandidate({ applicationId: lv.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, emails[0] as string);
    await invitedInterviewId(stack, emails[1] as string);
    // A report delivered three times at once: the second and third meet the first's claim and wait on it.
    stack.interview.setFaults({ dropWebhookRate: 1 });
    const { report_id: reportId, candidate_id: candidateId } = stack.interview.completeInterview({
      interview_id: interviewId,
      candidate_name: 'Ira Am',
      candidate_email: emails[0] as string,
      delay_ms: 0,
      ai_match_score: 91,
      proctoring_violations: 0,
    });
    await stack.interview.whenIdle();
    stack.interview.setFaults({ dropWebhookRate: 0 });
    const connection = stack.connections.find((c) => c.ats === 'greenhouse')!;
    const token = stack.secrets[connection.secretRef]!.interviewWebhookToken;
    const delivery = JSON.stringify({
      event: 'interview_report.created',
      data: {
        report_id: reportId,
        interview_id: interviewId,
        candidate_id: candidateId,
        candidate_email_id: emails[0],
      },
    });
    await Promise.all(
      [1, 2, 3].map(() =>
        fetch(`${stack.gatewayUrl}/webhooks/interview/${connection.id}/${token}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: delivery,
        }),
      ),
    );
    await waitFor(() => reportNotes(stack, reportId).length === 1, 20_000, 'the write-back');
    // An order placed from inside Greenhouse, taken, completed and told: the order API records and queues it, the
    // workers invite and complete it, the reconciler reads the orders with work left.
    const ordered = `iam-${randomUUID().slice(0, 8)}+order@candidates.example.com`;
    const app = stack.greenhouse.addCandidate({ firstName: 'Ora', lastName: 'Am', email: ordered, jobId: '3301' });
    const test = await stack.greenhouse.assessments.sendTest({
      application_id: app.id,
      partner_test_id: 'backend-screen',
    });
    stack.interview.completeInterview({
      interview_id: await invitedInterviewId(stack, ordered),
      candidate_name: 'Ora Am',
      candidate_email: ordered,
      delay_ms: 0,
      ai_match_score: 70,
    });
    await waitFor(() => test.status === 'complete', 30_000, 'the order completed');
    // A deletion (tombstone, candidate index, deletes) and a reconciler run (jobs scan, interview index).
    await stack.ats.lever.deleteCandidate(lv.id);
    await stack.waitForQuiet();
    await stack.reconcileNow();
    await stack.waitForQuiet();

    // The admin API: a connection listed, created, patched, turned off and on, its audit read, deleted.
    const admin = JSON.parse(readFileSync(stack.stackFile, 'utf8')).admin as { url: string; key: string };
    const adminCall = async (method: string, path: string, body?: unknown) =>
      (
        await fetch(`${admin.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${admin.key}`, 'content-type': 'application/json' },
          ...(body ? { body: JSON.stringify(body) } : {}),
        })
      ).status;
    const read = await fetch(`${admin.url}/${connection.id}`, { headers: { authorization: `Bearer ${admin.key}` } });
    const copy = { ...((await read.json()) as { connection: object }).connection, id: 'iam-copy' };
    expect(await adminCall('GET', '')).toBe(200);
    expect(await adminCall('PUT', '/iam-copy', { connection: copy })).toBe(201);
    expect(await adminCall('PATCH', '/iam-copy', { patch: { webhookFreshnessMinutes: 20 }, version: 1 })).toBe(200);
    expect(await adminCall('POST', '/iam-copy/disable', {})).toBe(200);
    expect(await adminCall('POST', '/iam-copy/enable', {})).toBe(200);
    expect(await adminCall('GET', '/iam-copy/audit')).toBe(200);
    expect(await adminCall('DELETE', '/iam-copy?version=4')).toBe(200);

    // The console: the overview, a candidate, the doctor, the stages, a connect link used, and the dead letters
    // peeked, one retried and one redriven (a report already written back: worked again, it changes nothing).
    const consoleCall = async (method: string, path: string, body?: unknown) =>
      (
        await fetch(`${stack.gatewayUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${admin.key}`, 'content-type': 'application/json' },
          ...(body ? { body: JSON.stringify(body) } : {}),
        })
      ).json() as Promise<Record<string, any>>;
    expect((await consoleCall('GET', '/console-api/overview')).connections.length).toBeGreaterThan(0);
    expect((await consoleCall('GET', `/console-api/candidates/${connection.id}/${gh.id}`)).applications).toHaveLength(
      1,
    );
    expect(
      (await consoleCall('POST', `/console-api/connections/${connection.id}/doctor`)).lines.length,
    ).toBeGreaterThan(0);
    expect(
      (await consoleCall('GET', `/console-api/connections/${connection.id}/stages`)).stages.length,
    ).toBeGreaterThan(0);
    const link = await consoleCall('POST', `/console-api/connections/${connection.id}/connect-link`, {});
    expect((await consoleCall('GET', `/connect-api/${link.token}`)).connectionId).toBe(connection.id);
    expect((await consoleCall('POST', `/connect-api/${link.token}/finish`)).finished).toBe(true);
    const dead = JSON.stringify({
      v: 1,
      enqueueId: randomUUID(),
      connectionId: connection.id,
      receivedAt: Date.now(),
      kind: 'report-created',
      source: 'reconciler',
      reportId,
      interviewId,
      candidateId,
    });
    const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
    const sent = await stack.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.queues.report.dlqUrl, MessageBody: dead }),
    );
    const failures = await consoleCall('GET', '/console-api/failures');
    expect(failures.deadLetters.report.count).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const retried = await consoleCall('POST', '/console-api/failures/retry', {
      queue: 'report',
      messageId: sent.MessageId,
    });
    expect(retried.retried).toBe(true);
    await stack.sqs.send(new SendMessageCommand({ QueueUrl: stack.queues.report.dlqUrl, MessageBody: dead }));
    // SQS's count of a queue's messages is approximate: a message just sent may show in it a moment later.
    let preview: Record<string, any> = {};
    await waitFor(
      async () => {
        preview = await consoleCall('GET', '/console-api/failures/redrive?queue=report');
        return preview.count !== 0;
      },
      10_000,
      'the preview to count the dead letter',
    );
    expect(preview.count).toBe(1);
    expect((await consoleCall('POST', '/console-api/failures/redrive', { queue: 'report', expected: 1 })).moving).toBe(
      1,
    );
    await waitFor(async () => (await stack.dlqDepths()).report === 0, 15_000, 'the redrive');
    await stack.waitForQuiet();
    expect(reportNotes(stack, reportId)).toHaveLength(1);

    const recorded = calls();
    expect(new Set(recorded.map((c) => c.fn))).toEqual(new Set(Object.keys(FUNCTION_ENTRIES)));
    expect(recorded.map((c) => c.action)).toEqual(
      expect.arrayContaining([
        'dynamodb:ConditionCheckItem',
        'dynamodb:Query',
        'dynamodb:BatchWriteItem',
        'sqs:SendMessage',
        'sqs:StartMessageMoveTask',
        'sqs:DeleteMessage',
        'ses:SendEmail',
      ]),
    );
    // The report's webhook found and marked its invitation.
    expect(recorded.filter((c) => c.fn === 'InterviewWebhook').map((c) => c.action)).toEqual(
      expect.arrayContaining(['dynamodb:Query', 'dynamodb:UpdateItem']),
    );
    expect(checkAwsCalls(template, recorded, names)).toEqual([]);
  }, 90_000);

  it('finds the call a removed grant no longer allows', () => {
    const recorded = calls().filter((c) => c.fn === 'WritebackWorker' && c.action === 'dynamodb:UpdateItem');
    expect(recorded.length).toBeGreaterThan(0);
    const without = structuredClone(template) as typeof template;
    for (const resource of Object.values(without.Resources)) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      for (const statement of (resource.Properties.PolicyDocument as { Statement: { Action: string[] }[] }).Statement)
        statement.Action = [statement.Action].flat().filter((a: string) => a !== 'dynamodb:UpdateItem');
    }
    const violations = checkAwsCalls(without, recorded, names);
    expect(violations.length).toBeGreaterThan(0);
    // Its claims on the applications table (and its turns on the events table's schedule) are refused.
    const reasons = violations.map((v) => v.reason);
    expect(reasons.some((r) => /^WritebackWorker may not dynamodb:UpdateItem on ApplicationsTable/.test(r))).toBe(true);
    expect(reasons.every((r) => /^WritebackWorker may not dynamodb:UpdateItem on /.test(r))).toBe(true);
  });
});
