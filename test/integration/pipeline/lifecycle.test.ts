import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { createAtsAdapter } from '../../../shared/ats';
import type { DirectAtsKind } from '../../../shared/config';
import { dynamoMappingStore } from '../../../shared/mapping';
import { deadlineAfter } from '../../../shared/http/deadline';
import { NoRoomBeforeDeadlineError } from '../../../shared/pipeline/errors';
import { faultInjection, SimulatedCrash } from '../../../shared/pipeline/fault-injection';
import { AI_INTERVIEW_STATUSES, statusTag, type AiInterviewStatus } from '../../../shared/pipeline/status';
import { dueFollowUp } from '../../../shared/pipeline/follow-up-due';
import { waitFor } from '../../helpers/local-http';
import { emailsTo, invitedInterviewId, startTestStack, takeInterview } from '../../helpers/local-stack';
import { followUps as followUpsOf, inOpenWindow } from '../../helpers/follow-ups';

const KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly DirectAtsKind[];
const HOUR = 3_600_000;
/** The tag each ATS shows a status as: single tokens on Workable, labels elsewhere. */
const tagOf = (kind: DirectAtsKind, status: AiInterviewStatus) =>
  statusTag(status, kind === 'workable' ? 'token' : 'label');

describe('A candidate who never takes the interview: reminders, expiry and the status in the ATS', () => {
  let stack: LocalStack;
  let workDir: string;

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'lifecycle-'));
    // Days and hours as the configuration has them; the fake clock below moves past them.
    stack = await startTestStack(workDir, {
      lifecycle: { status: 'tags', reminders: { afterHours: 48, max: 2 }, expireAfterDays: 7 },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });
  afterEach(() => {
    faultInjection.afterSideEffect = undefined;
  });

  const followUps = (kind: DirectAtsKind, clock: { now: number }) => followUpsOf(stack, kind, clock);

  async function invited(kind: DirectAtsKind, name: string) {
    const email = `${name}.${kind}@candidates.example.com`;
    const application = stack.ats[kind].addCandidate({ firstName: name, lastName: kind, email });
    await stack.ats[kind].moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email);
    await stack.waitForQuiet();
    return { email, application, interviewId };
  }

  it.each(KINDS)(
    '%s: reminds once per configured reminder, expires once, and shows each status',
    async (kind) => {
      const { application } = await invited(kind, 'Nia');
      expect(stack.ats[kind].tagsOf(application.id)).toEqual([tagOf(kind, 'invited')]);
      const clock = { now: Date.now() };
      const g = followUps(kind, clock);
      let record = await g.record(application.id);
      const start = record.steps.inviteEmail?.doneAt as number;

      // Before 48 hours: nothing is due, and a message that comes anyway sends nothing.
      clock.now = start + 47 * HOUR;
      expect(dueFollowUp(g.connection.triggers[0]!, record, clock.now)).toBeUndefined();
      expect((await inOpenWindow(async () => g.run(record, 'remind', 0))).outcome).toBe('not-due');
      clock.now = start + 49 * HOUR;
      expect(dueFollowUp(g.connection.triggers[0]!, record, clock.now)).toEqual({ action: 'remind', reminder: 0 });
      expect((await inOpenWindow(async () => g.run(record, 'remind', 0))).outcome).toBe('reminded');
      // The same reminder again (a duplicate message): not sent twice.
      expect((await inOpenWindow(async () => g.run(record, 'remind', 0))).outcome).toBe('not-due');
      record = await g.record(application.id);
      expect(dueFollowUp(g.connection.triggers[0]!, record, clock.now)).toBeUndefined();
      clock.now = start + 97 * HOUR;
      expect((await inOpenWindow(async () => g.run(record, 'remind', 1))).outcome).toBe('reminded');
      record = await g.record(application.id);
      // max 2: no third reminder, ever.
      clock.now = start + 6 * 24 * HOUR;
      expect(dueFollowUp(g.connection.triggers[0]!, record, clock.now)).toBeUndefined();
      expect(g.sent.map((m) => m.reminder)).toEqual([true, true]);

      clock.now = start + 7 * 24 * HOUR + 1;
      expect(dueFollowUp(g.connection.triggers[0]!, record, clock.now)).toEqual({ action: 'expire' });
      expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'expire'))).outcome).toBe('expired');
      expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'expire'))).outcome).toBe('expired');
      const notes = stack.ats[kind].notesOf(application.id).filter((n) => n.includes('AI interview not completed by'));
      expect(notes).toHaveLength(1);
      expect(stack.ats[kind].tagsOf(application.id)).toEqual([tagOf(kind, 'expired')]);
      expect((await g.record(application.id)).state).toBe('expired');
    },
    90_000,
  );

  it('never sends a reminder twice after a crash between sending and recording, and none after a report', async () => {
    const { application, interviewId, email } = await invited('lever', 'Oda');
    const clock = { now: Date.now() + 49 * HOUR };
    const g = followUps('lever', clock);
    let crashes = 0;
    faultInjection.afterSideEffect = (point) => {
      if (point === 'reminder-emailed' && crashes++ === 0) throw new SimulatedCrash(point);
    };
    const record = await g.record(application.id);
    // Too near the worker's deadline for the ATS's read and SES's answer: not begun (a begun reminder is never sent
    // again), back later; its turn or the reminder's own room check sends it back, nothing recorded.
    // A minute's invocation with 1 s left.
    const nearEnd = deadlineAfter(60_000, () => Date.now() - 59_000);
    const tooLate = await g.run(record, 'remind', 0, nearEnd).catch((error: unknown) => error);
    expect(
      tooLate instanceof NoRoomBeforeDeadlineError || (tooLate as { code?: string }).code === 'ats-rate-limited',
    ).toBe(true);
    expect(g.sent).toHaveLength(0);
    expect((await g.record(application.id)).steps.reminder1).toBeUndefined();
    await expect(inOpenWindow(() => g.run(record, 'remind', 0))).rejects.toThrow(SimulatedCrash);
    // SQS gives the message again: the reminder was begun, so it is never sent again.
    expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'remind', 0))).outcome).toBe(
      'not-due',
    );
    expect(g.sent).toHaveLength(1);

    // A report arrives: no reminder or expiry is due any more.
    const { report_id: reportId } = takeInterview(stack, interviewId, { name: 'Oda Lever', email });
    await waitFor(
      () => stack.lever.notesOf(application.id).some((n) => n.includes(reportId)),
      30_000,
      'the report note',
    );
    await stack.waitForQuiet();
    const done = await g.record(application.id);
    // Marked at its webhook, before it was queued (its write-back's turn was now: the worker marks none).
    expect(done.steps.reportArrived?.doneAt).toBeLessThanOrEqual(done.updatedAt);
    clock.now += 30 * 24 * HOUR;
    expect(dueFollowUp(g.connection.triggers[0]!, done, clock.now)).toBeUndefined();
    expect((await inOpenWindow(async () => g.run(done, 'remind', 1))).outcome).toBe('not-due');
    expect((await inOpenWindow(() => g.run(done, 'expire'))).outcome).toBe('not-due');
    expect(g.sent).toHaveLength(1);
    expect(stack.lever.tagsOf(application.id)).toHaveLength(1);
    expect(stack.lever.tagsOf(application.id)[0]).toMatch(/^AI interview: (advanced|flagged for review)$/);
  }, 90_000);

  it("Greenhouse tags the candidate: a second application's invitation leaves the first one's status", async () => {
    const gh = stack.greenhouse;
    const email = 'two.jobs@candidates.example.com';
    const first = gh.addCandidate({ firstName: 'Tove', lastName: 'Jobs', email, jobId: '3301' });
    await gh.moveCandidate({ applicationId: first.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email);
    const { report_id: reportId } = takeInterview(
      stack,
      interviewId,
      { name: 'Tove Jobs', email },
      { ai_match_score: 91, proctoring_violations: 0 },
    );
    await waitFor(
      () => stack.ats.greenhouse.notesOf(String(first.id)).some((n) => n.includes(reportId)),
      30_000,
      'the first application written back',
    );
    await stack.waitForQuiet();
    expect(stack.ats.greenhouse.tagsOf(String(first.id))).toEqual(['AI interview: advanced']);

    // The same candidate applies to another job and is invited there: the candidate's tag keeps the status of
    // the application furthest along.
    const second = gh.addApplication({ candidateId: first.candidateId, jobId: '3302' });
    await gh.moveCandidate({ applicationId: second.id, stageName: 'AI Interview' });
    await waitFor(async () => (await emailsTo(stack, email)).length === 2, 30_000, 'the second invitation');
    await stack.waitForQuiet();
    const store = dynamoMappingStore({ tables: stack.tables, client: stack.dynamo });
    const [secondRecord] = await store.findApplicationsByAtsId('demo-greenhouse', String(second.id));
    expect(secondRecord?.steps.status?.value).toBe('invited');
    expect(stack.ats.greenhouse.tagsOf(String(second.id))).toEqual(['AI interview: advanced']);
    expect(stack.ats.greenhouse.tagsOf(String(first.id))).toEqual(['AI interview: advanced']);
  }, 90_000);

  it('writes back a report that comes after the expiry, and moves the status forward', async () => {
    const { application, interviewId, email } = await invited('workable', 'Pia');
    const clock = { now: Date.now() + 8 * 24 * HOUR };
    const g = followUps('workable', clock);
    // The reminders it was due go first (a late run), then the invitation expires.
    expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'expire'))).outcome).toBe('not-due');
    expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'remind', 0))).outcome).toBe(
      'reminded',
    );
    expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'remind', 1))).outcome).toBe(
      'reminded',
    );
    expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'expire'))).outcome).toBe('expired');
    expect(stack.ats.workable.tagsOf(application.id)).toEqual(['ai-interview-expired']);
    const { report_id: reportId } = takeInterview(stack, interviewId, { name: 'Pia Workable', email });
    await waitFor(
      () => stack.ats.workable.notesOf(application.id).some((n) => n.includes(reportId)),
      30_000,
      'the report note after the expiry',
    );
    await stack.waitForQuiet();
    const written = await g.record(application.id);
    expect(written.state).toBe('written_back');
    const shown = stack.ats.workable.tagsOf(application.id);
    // Workable keeps a tag's first word only: its status tags are single lower-case tokens.
    expect(shown[0]).toMatch(/^ai-interview-(advanced|flagged)$/);
    expect(await emailsTo(stack, email)).toHaveLength(1);

    // An expiry that raced the report showed "expired" over its status, and stopped before it read the claim
    // again: its message, retried, shows the claimed status once more.
    const statuses = AI_INTERVIEW_STATUSES.map((s) => statusTag(s, 'token'));
    const target = {
      atsApplicationId: written.atsApplicationId,
      atsCandidateId: written.atsCandidateId,
      atsJobId: written.atsJobId,
    };
    const ats = createAtsAdapter(g.connection, stack.secrets[g.connection.secretRef]!);
    // Workable allows 10 requests per 10 s: each call waits for a window with room, as a deferred message would.
    await inOpenWindow(() =>
      ats.setStatusTag!(
        target,
        'ai-interview-expired',
        statuses.filter((s) => s !== 'ai-interview-expired'),
      ),
    );
    expect(stack.ats.workable.tagsOf(application.id)).toEqual(['ai-interview-expired']);
    expect((await inOpenWindow(() => g.run(written, 'expire'))).outcome).toBe('not-due');
    expect(stack.ats.workable.tagsOf(application.id)).toEqual(shown);
  }, 90_000);
});
