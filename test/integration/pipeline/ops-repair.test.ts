import { randomUUID } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { emailsTo, invitedInterviewId, useTestStack } from '../../helpers/local-stack';
import { runOps } from '../../helpers/ops-cli';

/**
 * An operator repairs what failed for good, with `npm run ops` on the local stack: a candidate the ATS refused, a
 * write-back it refused, and a DLQ (privacy-and-ops.test.ts holds status, matching and purges).
 */
describe('Operator repairs on the local stack', () => {
  const held = useTestStack('ops-repair');
  let stack: LocalStack;
  beforeAll(() => {
    stack = held.stack;
  });
  const ops = (...args: string[]) => runOps(stack, ...args);
  /** While Greenhouse refuses the key for good (403): `act`, then the application listed failed; the fault cleared. */
  const refusedForGood = async (applicationId: string, what: string, act: () => unknown) => {
    stack.ats.greenhouse.setFaults({ rate403: 1 });
    try {
      await act();
      const listed = async () =>
        (await ops('failed', '--connection', 'demo-greenhouse')).out.includes(`application ${applicationId} `);
      await waitFor(listed, 60_000, what);
      // Whatever else the work does goes on under the refusal too, before the cause is fixed.
      await stack.waitForQuiet();
    } finally {
      stack.ats.greenhouse.setFaults({ rate403: 0 });
    }
  };

  it('ops: lists an invitation whose note the ATS refused; the e-mailed invitation goes on to its report', async () => {
    const greenhouse = stack.ats.greenhouse;
    const email = `refused-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = greenhouse.addCandidate({ firstName: 'Ren', lastName: 'Refused', email });
    // The key lost its permission for notes: the e-mail goes out, the invite note is refused for good.
    await refusedForGood(application.id, 'the refused invite note', () =>
      greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' }),
    );
    const listed = await ops('failed', '--connection', 'demo-greenhouse');
    expect(listed.status).toBe(0);
    expect(listed.out).toMatch(
      new RegExp(`application ${application.id} .*\\(invite\\).*invite note \\(ats-forbidden\\); the e-mailed`),
    );
    expect(listed.out).not.toContain(email);
    await stack.waitForQuiet();
    expect(greenhouse.notesOf(application.id).filter((n) => n.includes('ai-interview-invite:'))).toEqual([]);
    expect(await emailsTo(stack, email)).toHaveLength(1);
    expect((await ops('status', '--connection', 'demo-greenhouse', '--application', application.id)).out).toMatch(
      new RegExp(`application ${application.id} .*: invited`),
    );

    // Fixed; the candidate takes the interview from their e-mail: its report is written back as any other.
    const interviewId = await invitedInterviewId(stack, email);
    const { report_id: reportId } = stack.interview.completeInterview({
      interview_id: interviewId,
      candidate_name: 'Ren Refused',
      candidate_email: email,
      ai_match_score: 40,
      proctoring_violations: 0,
      delay_ms: 0,
    });
    const reportNote = () => greenhouse.notesOf(application.id).filter((n) => n.includes(`ai-interview-report:`));
    await waitFor(() => reportNote().length > 0, 60_000, 'the report note');
    await stack.waitForQuiet();
    expect(reportNote()).toHaveLength(1);
    expect(reportNote()[0]).toContain(reportId);
    expect(await emailsTo(stack, email)).toHaveLength(1);
  }, 180_000);

  it('ops: writes back again, once, a report the ATS refused for good, after the cause is fixed', async () => {
    const greenhouse = stack.ats.greenhouse;
    const email = `refused-wb-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = greenhouse.addCandidate({ firstName: 'Wes', lastName: 'Refused', email });
    await greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email);
    await stack.waitForQuiet();
    let reportId = '';
    await refusedForGood(application.id, 'the failed write-back', () => {
      ({ report_id: reportId } = stack.interview.completeInterview({
        interview_id: interviewId,
        candidate_name: 'Wes Refused',
        candidate_email: email,
        ai_match_score: 90,
        proctoring_violations: 0,
        delay_ms: 0,
      }));
    });
    // The key lost its permissions: the note and move are refused, recorded and listed (written back all the same).
    expect((await ops('failed', '--connection', 'demo-greenhouse')).out).toMatch(
      new RegExp(`application ${application.id} .*report ${reportId} \\(write-back\\).*refused the report note`),
    );
    expect(greenhouse.notesOf(application.id).filter((n) => n.includes('ai-interview-report:'))).toEqual([]);

    const retried = await ops('retry', '--connection', 'demo-greenhouse', '--application', application.id);
    expect(retried.status).toBe(0);
    expect(retried.out).toContain(
      `report ${reportId} queued for write-back again (the refused report note, stage move`,
    );
    await waitFor(
      () => greenhouse.stageNameOf(application.id) === 'Hiring Manager Review',
      60_000,
      'the retried write-back and its stage move',
    );
    await stack.waitForQuiet();
    expect(
      greenhouse.notesOf(application.id).filter((n) => n.includes(`ai-interview-report:${reportId}`)),
    ).toHaveLength(1);
    expect((await ops('status', '--connection', 'demo-greenhouse', '--application', application.id)).out).toContain(
      ': written_back',
    );
    // Nothing is failed any more: a second retry is refused and changes nothing.
    expect((await ops('retry', '--connection', 'demo-greenhouse', '--application', application.id)).status).toBe(2);
    // Nor is its link sent again: refused (exit 2), which a script tells from a failure (exit 1).
    const resend = await ops('resend', '--connection', 'demo-greenhouse', '--application', application.id);
    expect([resend.status, resend.out]).toEqual([2, expect.stringContaining('written_back; nothing to resend')]);
  }, 180_000);

  it('ops: lists a DLQ and redrives it', async () => {
    await stack.sqs.send(
      new SendMessageCommand({
        QueueUrl: stack.queues.report.dlqUrl,
        MessageBody: JSON.stringify({
          v: 1,
          kind: 'report-created',
          connectionId: 'demo-greenhouse',
          reportId: 'r-dlq',
        }),
      }),
    );
    const listed = await ops('dlq', 'list', '--queue', 'report');
    expect(listed.out).toContain('1 message(s) in the report DLQ');
    expect(listed.out).toContain('report-created connection=demo-greenhouse report=r-dlq');
    // A look leaves the message visible: the next look, at once, and a redrive see it.
    expect((await ops('dlq', 'list', '--queue', 'report')).out).toContain('1 message(s) in the report DLQ');
    const redriven = await ops('dlq', 'redrive', '--queue', 'report');
    expect(redriven.status).toBe(0);
    expect(redriven.out).toContain('1 message(s) moved back to the report queue');
    await stack.waitForQuiet();
    expect((await stack.dlqDepths()).report).toBe(0);
    expect((await ops('nonsense')).status).toBe(2);
  }, 120_000);
});
