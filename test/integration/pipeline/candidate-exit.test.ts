import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import type { AtsKind } from '../../../shared/config';
import { statusOfTag } from '../../../shared/pipeline/status';
import { QueuePublisher } from '../../../shared/queue';
import { requestOnInvitation } from '../../../infra/cli/ops/invitations';
import { followUps, inOpenWindow } from '../../helpers/follow-ups';
import { emailsTo, invitedInterviewId, takeInterview, useTestStack } from '../../helpers/local-stack';
import { waitFor } from '../../helpers/local-http';

const KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly AtsKind[];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const isReminder = (m: { subject?: string }) => (m.subject ?? '').startsWith('Reminder');

/**
 * Candidates after their invitation, on each ATS's sandbox with the real local services: the exit (its webhook, or
 * none and the look before contacting), the late report of a hired candidate, a re-entry after the expiry, and an
 * operator's resend and extension. Reminders and the expiry run the invite worker's follow-up with a fake clock.
 */
describe('A candidate after the invitation: exits, late reports, re-entries, resends', () => {
  const held = useTestStack('candidate-exit', {
    lifecycle: { status: 'tags', reminders: { afterHours: 48, max: 2 }, expireAfterDays: 7 },
  });
  let stack: LocalStack;
  beforeAll(() => {
    stack = held.stack;
  });

  async function invited(kind: AtsKind, name: string) {
    const email = `${name}.${kind}@candidates.example.com`.toLowerCase();
    const application = stack.ats[kind].addCandidate({ firstName: name, lastName: kind, email });
    await stack.ats[kind].moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email);
    await stack.waitForQuiet();
    return { email, application, interviewId };
  }
  const statusesOf = (kind: AtsKind, id: string) => stack.ats[kind].tagsOf(id).map((t) => statusOfTag(t) ?? t);
  const expiryNotes = (kind: AtsKind, id: string) =>
    stack.ats[kind].notesOf(id).filter((n) => n.includes('AI interview not completed by'));

  it.each(KINDS)(
    '%s: a candidate rejected after the invitation gets no reminder and no expiry note, and shows cancelled',
    async (kind) => {
      const { application, email } = await invited(kind, 'Rae');
      await stack.ats[kind].changeLifecycle({ applicationId: application.id, action: 'reject' });
      const clock = { now: Date.now() };
      const g = followUps(stack, kind, clock);
      await waitFor(async () => (await g.record(application.id)).state === 'left', 20_000, 'the exit recorded');
      await stack.waitForQuiet();
      expect(statusesOf(kind, application.id)).toEqual(['cancelled']);
      clock.now += 8 * DAY;
      expect((await g.run(await g.record(application.id), 'remind', 0)).outcome).toBe('not-due');
      expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'expire'))).outcome).toBe('not-due');
      expect(g.sent).toHaveLength(0);
      expect(expiryNotes(kind, application.id)).toHaveLength(0);
      expect((await emailsTo(stack, email)).filter(isReminder)).toHaveLength(0);
    },
    90_000,
  );

  it.each(KINDS)(
    '%s: the same with the rejection webhook lost: the look before the reminder catches it',
    async (kind) => {
      const { application } = await invited(kind, 'Sol');
      await stack.ats[kind].changeLifecycle({ applicationId: application.id, action: 'withdraw', deliver: false });
      const clock = { now: Date.now() + 49 * HOUR };
      const g = followUps(stack, kind, clock);
      expect((await g.record(application.id)).state).toBe('invited');
      expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'remind', 0))).outcome).toBe('left');
      expect(g.sent).toHaveLength(0);
      const record = await g.record(application.id);
      expect(record).toMatchObject({ state: 'left', leftFrom: 'invited' });
      // Lever's read tells an archived opportunity, not why (the reason is an id of the account's own list).
      expect(kind === 'lever' ? ['archived'] : ['rejected', 'withdrawn']).toContain(record.exit?.kind);
      clock.now += 8 * DAY;
      expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'expire'))).outcome).toBe('not-due');
      expect(expiryNotes(kind, application.id)).toHaveLength(0);
      expect(statusesOf(kind, application.id)).toEqual(['cancelled']);
    },
    90_000,
  );

  it.each(KINDS)(
    "%s: a hired candidate's late report is written back with no stage move",
    async (kind) => {
      const { application, email, interviewId } = await invited(kind, 'Tam');
      const movesBefore = stack.ats[kind].movesOf(application.id).length;
      await stack.ats[kind].changeLifecycle({ applicationId: application.id, action: 'hire' });
      const { report_id: reportId } = takeInterview(
        stack,
        interviewId,
        { name: `Tam ${kind}`, email },
        { ai_match_score: 95, proctoring_violations: 0 },
      );
      const note = () => stack.ats[kind].notesOf(application.id).find((n) => n.includes(reportId));
      await waitFor(() => note() !== undefined, 30_000, 'the report note');
      await stack.waitForQuiet();
      expect(note()).toContain('Stage not moved: the candidate was');
      // A score that would advance anyone else: the connector moved the hired application nowhere.
      expect(stack.ats[kind].movesOf(application.id).slice(movesBefore)).not.toContain('Hiring Manager Review');
      expect(stack.ats[kind].stageNameOf(application.id)).not.toBe('Hiring Manager Review');
      expect(statusesOf(kind, application.id)).toEqual(['completed']);
    },
    90_000,
  );

  it.each(KINDS)(
    '%s: a re-entry after the expiry makes exactly one new invitation, its webhook delivered three times',
    async (kind) => {
      const { application, email } = await invited(kind, 'Uma');
      const clock = { now: Date.now() + 8 * DAY };
      const g = followUps(stack, kind, clock);
      // The reminders it was due go first, then the invitation expires.
      for (const reminder of [0, 1])
        await inOpenWindow(async () => g.run(await g.record(application.id), 'remind', reminder));
      expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'expire'))).outcome).toBe('expired');
      expect(statusesOf(kind, application.id)).toEqual(['expired']);
      await stack.ats[kind].moveCandidate({ applicationId: application.id, stageName: 'Hiring Manager Review' });
      await stack.ats[kind].moveCandidate({ applicationId: application.id, stageName: 'AI Interview', repeat: 3 });
      await waitFor(
        async () => (await emailsTo(stack, email)).filter((m) => !isReminder(m)).length >= 2,
        30_000,
        'the new invitation',
      );
      await stack.waitForQuiet();
      // The sweep finds nothing more to do either.
      await stack.reconcileNow();
      await stack.waitForQuiet();
      expect((await emailsTo(stack, email)).filter((m) => !isReminder(m))).toHaveLength(2);
      expect(await g.record(application.id)).toMatchObject({ state: 'invited', reinvitations: 1 });
      expect(statusesOf(kind, application.id)).toEqual(['invited']);
      const inviteNotes = stack.ats[kind].notesOf(application.id).filter((n) => n.includes('ai-interview-invite:'));
      expect(inviteNotes).toHaveLength(2);
    },
    90_000,
  );

  it.each(KINDS)(
    '%s: ops resend and ops extend act once each, however often their messages are delivered',
    async (kind) => {
      const { application, email } = await invited(kind, 'Vic');
      const connectionId = stack.connections.find((c) => c.ats === kind)?.id as string;
      const publisher = new QueuePublisher({ client: stack.sqs });
      const store = followUps(stack, kind, { now: Date.now() }).store;
      const deps = { store, publisher: duplicating(publisher), stageQueueUrl: stack.queues.stage.url };
      const resend = await requestOnInvitation({ action: 'resend', connectionId, applicationId: application.id }, deps);
      expect(resend[0]).toContain('resend queued');
      await waitFor(async () => (await emailsTo(stack, email)).length >= 2, 30_000, 'the link sent again');
      await stack.waitForQuiet();
      expect(await emailsTo(stack, email)).toHaveLength(2);
      const record = (await store.findApplicationsByAtsId(connectionId, application.id))[0];
      expect(record?.steps.resend?.doneAt).toBeGreaterThan(0);
      expect(record?.operatorRequests).toHaveLength(1);

      await requestOnInvitation({ action: 'extend', connectionId, applicationId: application.id, days: 3 }, deps);
      const before = Date.now();
      await waitFor(
        async () => (await store.findApplicationsByAtsId(connectionId, application.id))[0]?.extendedUntil !== undefined,
        30_000,
        'the extension',
      );
      await stack.waitForQuiet();
      const extended = (await store.findApplicationsByAtsId(connectionId, application.id))[0];
      expect(extended?.state).toBe('invited');
      // Three days after the later of now and the invitation's own expiry (7 days after it was sent).
      expect(extended?.extendedUntil).toBeGreaterThanOrEqual(before + 10 * DAY - 60_000);
      expect(extended?.operatorRequests).toHaveLength(2);
      expect(await emailsTo(stack, email)).toHaveLength(2);
    },
    90_000,
  );
});

/** A publisher that sends every message twice, as SQS may deliver it twice: the worker must act once. */
function duplicating(publisher: QueuePublisher): QueuePublisher {
  return new Proxy(publisher, {
    get(target, property, receiver) {
      if (property !== 'publish') return Reflect.get(target, property, receiver);
      return async (...args: Parameters<QueuePublisher['publish']>) => {
        await target.publish(...args);
        return target.publish(...args);
      };
    },
  });
}
