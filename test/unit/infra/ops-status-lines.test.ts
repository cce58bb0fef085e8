import { describe, expect, it } from 'vitest';
import { applicationStatusLines, failedApplicationLine } from '../../../infra/cli/ops/lines';
import { applicationRecord } from '../../helpers/pipeline-records';

const at = (minute: number) => Date.UTC(2026, 11, 1, 9, minute);

describe('Function: applicationStatusLines (npm run ops -- status)', () => {
  it('lists the steps as they happened; a status shows what the ATS shows, a refusal is no "begun"', () => {
    const record = applicationRecord({
      state: 'invited',
      createdAt: at(0),
      updatedAt: at(9),
      steps: {
        inviteEmail: { startedAt: at(1), doneAt: at(1) },
        reminder1: { startedAt: at(5), doneAt: at(5) },
        resend: { startedAt: at(3), outcome: 'refused', value: 'not sent' },
        status: { startedAt: at(2), value: 'invited' },
        inviteNote: { startedAt: at(8) },
        failureNoteReportUnreadable: { startedAt: at(9), doneAt: at(9) },
      },
    });
    const steps = applicationStatusLines(record).slice(3, -1);
    expect(steps.map((line) => line.trim().split(/\s{2,}/)[0])).toEqual([
      'invite e-mailed',
      'status shown',
      'link sent again',
      'reminder 1',
      'invite note posted',
      'failure note: report unreadable',
    ]);
    expect(steps[1]).toMatch(/status shown\s+\S+ \(invited\)$/);
    expect(steps[2]).toMatch(/\(refused: not sent\)$/);
    expect(steps[4]).toMatch(/ begun$/);
    // A re-invitation keeps what the invitation before it did, shown first under its own line.
    const again = applicationRecord({
      reinvitations: 1,
      createdAt: at(30),
      earlierSteps: { inviteEmail: { startedAt: at(1), doneAt: at(1) }, expiryNote: { doneAt: at(20) } },
      steps: { inviteEmail: { startedAt: at(31), doneAt: at(31) } },
    });
    const lines = applicationStatusLines(again).map((line) => line.trim().split(/\s{2,}/)[0]);
    expect(lines.slice(2, -1)).toEqual([
      'invitation 1, before this one:',
      'invite e-mailed',
      'expiry note posted',
      'claimed',
      'invite e-mailed',
    ]);
    const held = applicationRecord({ steps: { failureNoteReportUnreadable: { leaseUntil: at(20) } } });
    expect(applicationStatusLines(held).join('\n')).toMatch(
      /failure note: report unreadable\s+held until 2026-12-01T09:20:00.000Z begun/,
    );
  });
});

describe('Function: failedApplicationLine (npm run ops -- failed)', () => {
  it('names every channel the ATS refused of a write-back done all the same, else the reason it failed', () => {
    const refused = (value: string) => ({ doneAt: at(1), outcome: 'refused' as const, value });
    const both = applicationRecord({
      state: 'written_back',
      reportId: 'rep-1',
      steps: { reportNote: refused('ats-forbidden'), stageMove: refused('ats-invalid-request') },
    });
    expect(failedApplicationLine(both)).toMatch(/report note \(ats-forbidden\).*stage move \(ats-invalid-request\)/);
    const failed = applicationRecord({ state: 'failed', failureReason: 'ats-forbidden: GET: 403' });
    expect(failedApplicationLine(failed)).toMatch(/\(invite\).*ats-forbidden: GET: 403$/);
    const unnoted = applicationRecord({ state: 'invited', steps: { inviteNote: refused('ats-forbidden') } });
    expect(failedApplicationLine(unnoted)).toMatch(
      /\(invite\).*invite note \(ats-forbidden\); the e-mailed invitation/,
    );
  });
});
