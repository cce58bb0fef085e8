import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { startTestStack, invitedInterviewId } from '../../helpers/local-stack';

const WORK_DIR = `.local/test-rate-limits-${process.pid}`;

/**
 * An ATS that keeps answering 429 past a worker's deadline: the message is put back on its queue for the wait
 * the ATS asked for, instead of failing into the visibility timeout (6 × the function timeout on AWS) and
 * counting toward the DLQ. The queues here wait 600 s before an ordinary retry, so only a deferral can land
 * the write-back within the test's bounds.
 */
describe('Pipeline: a rate-limited ATS on the local stack', () => {
  let stack: LocalStack;
  const workableRequests = () => Object.values(stack.ats.workable.requests()).reduce((sum, n) => sum + n, 0);

  beforeAll(async () => {
    stack = await startTestStack(WORK_DIR, { functionTimeoutMs: 4_000, visibilityTimeoutSeconds: 600 });
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(WORK_DIR, { recursive: true, force: true });
  });

  it('defers the write-back through Workable 429s, then writes once; nothing failed or dead-lettered', async () => {
    const ats = stack.ats.workable;
    const email = `limited-${randomUUID().slice(0, 8)}+workable@candidates.example.com`;
    const application = ats.addCandidate({ firstName: 'Rae', lastName: 'Limit', email });
    await ats.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email, 30_000);
    await stack.waitForQuiet(30_000);

    ats.setFaults({ rate429: 1 });
    const before = workableRequests();
    const { report_id: reportId } = stack.interview.completeInterview({
      interview_id: interviewId,
      candidate_name: 'Rae Limit',
      candidate_email: email,
      ai_match_score: 55,
      delay_ms: 0,
    });
    // Refused, sent again and refused again, and the message back on the queue for later (after its second 429).
    await waitFor(
      async () =>
        workableRequests() - before >= 2 &&
        (await stack.queueDepths()).report > 0 &&
        stack.sources.writeback.stats.inFlight === 0,
      30_000,
      'the write-back to be rate-limited and deferred',
    );
    const written = ats.notesOf(application.id).filter((n) => n.includes(`ai-interview-report:${reportId}`));
    expect(written).toEqual([]);
    ats.setFaults({ rate429: 0 });

    await waitFor(
      () => ats.notesOf(application.id).some((n) => n.includes(`ai-interview-report:${reportId}`)),
      60_000,
      'the deferred write-back',
    );
    await stack.waitForQuiet(60_000);
    expect(ats.notesOf(application.id).filter((n) => n.includes(`ai-interview-report:${reportId}`))).toHaveLength(1);
    expect(stack.sources.writeback.stats.failures).toBe(0);
    expect(stack.sources.writeback.stats.errors).toBe(0);
    expect(await stack.dlqDepths()).toEqual({ stage: 0, report: 0 });
  }, 150_000);
});
