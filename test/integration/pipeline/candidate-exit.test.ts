import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import type { DirectAtsKind } from '../../../shared/config';
import { followUps, inOpenWindow, isReminder, useLifecycleStack } from '../../helpers/follow-ups';
import { emailsTo, takeInterview } from '../../helpers/local-stack';
import { waitFor } from '../../helpers/local-http';

const KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly DirectAtsKind[];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Candidates who leave after their invitation, on each ATS's sandbox with the real local services: the exit (its
 * webhook, or none and the look before contacting) and the late report of a hired candidate (candidate-return.test.ts
 * holds re-entries and an operator's resend). Reminders and the expiry run the invite worker's follow-up with a fake
 * clock.
 */
describe('A candidate after the invitation: exits and late reports', () => {
  const { stack: heldStack, invited, statusesOf } = useLifecycleStack('candidate-exit');
  let stack: LocalStack;
  beforeAll(() => {
    stack = heldStack();
  });
  const expiryNotes = (kind: DirectAtsKind, id: string) =>
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
      // Within a minute: a report that finds the application's claim held by another worker waits 5 s for it, then
      // comes back after that claim's lease (15 s here; ClaimHeldElsewhereError). One run of about twenty took 25.7 s.
      await waitFor(() => note() !== undefined, 60_000, 'the report note');
      await stack.waitForQuiet();
      expect(note()).toContain('Stage not moved: the candidate was');
      // A score that would advance anyone else: the connector moved the hired application nowhere.
      expect(stack.ats[kind].movesOf(application.id).slice(movesBefore)).not.toContain('Hiring Manager Review');
      expect(stack.ats[kind].stageNameOf(application.id)).not.toBe('Hiring Manager Review');
      expect(statusesOf(kind, application.id)).toEqual(['completed']);
    },
    90_000,
  );
});
