import { createHmac, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atsWebhooks } from '../../helpers/connections';
import type { LocalStack } from '../../../infra/local/local-stack';
import type { AtsKind } from '../../../shared/config';
import { waitFor } from '../../helpers/local-http';
import { startTestStack, emailsTo, invitedInterviewId, scanTable } from '../../helpers/local-stack';

const WORK_DIR = `.local/test-ats-${process.pid}`;
const KINDS = ['ashby', 'lever', 'workable'] as const satisfies readonly AtsKind[];

describe('Pipeline: Ashby, Lever and Workable end to end on the local stack', () => {
  let stack: LocalStack;
  const { connectionOf, secretOf, post } = atsWebhooks(() => stack);
  const interviewsOf = (kind: AtsKind) =>
    stack.interview.state.interviews.filter((i) => i.interview_name.includes(`(ref ${connectionOf(kind).id}/`)).length;

  beforeAll(async () => {
    stack = await startTestStack(WORK_DIR, { reportDelayMs: 100, functionTimeoutMs: 20_000 });
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(WORK_DIR, { recursive: true, force: true });
  });

  it.each(KINDS)(
    '%s: stage change → one interview, one invite → report → note and move, however often it comes',
    async (kind) => {
      const ats = stack.ats[kind];
      const email = `e2e-${randomUUID().slice(0, 8)}+${kind}@candidates.example.com`;
      const application = ats.addCandidate({ firstName: 'Kemi', lastName: 'Adeyemi', email });
      const deliveries = await ats.moveCandidate({
        applicationId: application.id,
        stageName: 'AI Interview',
        repeat: 3,
      });
      // Lever refuses the second and third as replays of one token; the others accept them and de-duplicate.
      expect(deliveries[0]?.status).toBe(200);
      expect(deliveries.slice(1).every((d) => d.status === (kind === 'lever' ? 401 : 200))).toBe(true);
      const interviewId = await invitedInterviewId(stack, email, 30_000);
      await stack.waitForQuiet(30_000);
      expect(await emailsTo(stack, email)).toHaveLength(1);
      expect(ats.notesOf(application.id).filter((n) => n.includes('ai-interview-invite:'))).toHaveLength(1);
      expect(interviewsOf(kind)).toBe(1);

      const { report_id: reportId } = stack.interview.completeInterview({
        interview_id: interviewId,
        candidate_name: 'Kemi Adeyemi',
        candidate_email: email,
        ai_match_score: 91,
        proctoring_violations: 0,
        delay_ms: 0,
      });
      await waitFor(() => ats.stageNameOf(application.id) === 'Hiring Manager Review', 40_000, `${kind} stage move`);
      await stack.waitForQuiet(30_000);
      const reportNotes = ats.notesOf(application.id).filter((n) => n.includes(`ai-interview-report:${reportId}`));
      expect(reportNotes).toHaveLength(1);
      expect(reportNotes[0]).toContain('AI match score: 91 / 100');
      expect(reportNotes[0]).toContain('Advanced automatically');

      // The same stage change again, now and after the write-back: nothing more happens.
      await ats.resendStageChange(application.id);
      await ats.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
      await stack.waitForQuiet(30_000);
      expect(await emailsTo(stack, email)).toHaveLength(1);
      expect(interviewsOf(kind)).toBe(1);
      expect(ats.notesOf(application.id).filter((n) => n.includes('ai-interview-report:'))).toHaveLength(1);
      expect(await stack.dlqDepths()).toEqual({ stage: 0, report: 0 });
    },
  );

  it('ashby: writes the note through candidate.createNote and moves with application.changeStage', () => {
    const sandbox = stack.ats.ashby as unknown as { requests(): Record<string, number> };
    expect(sandbox.requests()['POST /candidate.createNote']).toBeGreaterThanOrEqual(2);
    expect(sandbox.requests()['POST /application.changeStage']).toBeGreaterThanOrEqual(1);
  });

  it('lever: links the report on the opportunity and writes as the configured user', () => {
    const state = (stack.ats.lever as unknown as { state: { links: { url: string }[]; notes: { author?: string }[] } })
      .state;
    expect(state.links.some((l) => l.url.includes('/files/reports/'))).toBe(true);
    expect(state.notes.every((n) => n.author === 'lever-user-1')).toBe(true);
  });

  it('workable: comments as the configured member', () => {
    const state = (stack.ats.workable as unknown as { state: { notes: { author?: string }[] } }).state;
    expect(state.notes.length).toBeGreaterThan(0);
    expect(state.notes.every((n) => n.author === 'workable-member-1')).toBe(true);
  });

  it('lever: a stage change to a stage no trigger has is answered at once, by the names shared', async () => {
    // The end-to-end run above confirmed a stage change: the invite worker has read Lever's stages and shared them.
    const secret = secretOf('lever');
    /** A Lever stage change signed as Lever signs it (the token and time), computed here, not with the adapter. */
    const stageChange = (toStageId: string) => {
      const token = randomUUID();
      const triggeredAt = Date.now();
      return JSON.stringify({
        triggeredAt,
        token,
        signature: createHmac('sha256', secret).update(`${token}${triggeredAt}`).digest('hex'),
        event: 'candidateStageChange',
        data: { opportunityId: 'o', toStageId },
      });
    };
    const toReview = () => stageChange('d3e4-hm-review');
    // A webhook environment whose copy of the names is older than the worker's reading reads them again within 5 s.
    const answered = async () => ((await (await post('lever', toReview(), {})).json()) as { status: string }).status;
    await waitFor(async () => (await answered()) === 'ignored', 30_000, 'a delivery answered by the shared names');
    await stack.waitForQuiet();
    const replayKeys = async () =>
      (await scanTable(stack, stack.tables.events)).filter((r) => r.kind === 'replay-key').length;
    const before = { records: stack.sources.invite.stats.records, replayKeys: await replayKeys() };
    const answer = await post('lever', toReview(), {});
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ status: 'ignored', reason: 'no-matching-trigger' });
    await stack.waitForQuiet();
    // Nothing enqueued and nothing recorded: not even the delivery's replay key.
    expect(stack.sources.invite.stats.records - before.records).toBe(0);
    expect(await replayKeys()).toBe(before.replayKeys);
    // The trigger's own stage is still enqueued (and confirmed with Lever by the worker).
    expect((await post('lever', stageChange('c1b2-ai-interview'), {})).status).toBe(200);
    await stack.waitForQuiet();
    expect(stack.sources.invite.stats.records - before.records).toBe(1);
  });
});
