import { describe, expect, it } from 'vitest';
import { DAY_MS, dueFollowUp } from '../../../shared/pipeline/follow-up-due';
import { applicationRecord, NOW } from '../../helpers/pipeline-records';

const trigger = { reminders: { afterHours: 24, max: 2 }, expireAfterDays: 7 };

describe('Follow-ups: when an invitation is due one', () => {
  it('reminds an invitation with an e-mail on record, then expires it', () => {
    const invited = applicationRecord({ steps: { inviteEmail: { doneAt: NOW } } });
    expect(dueFollowUp(trigger, invited, NOW + DAY_MS)).toEqual({ action: 'remind', reminder: 0 });
    const reminded = {
      ...invited,
      steps: { ...invited.steps, reminder1: { doneAt: NOW }, reminder2: { doneAt: NOW } },
    };
    expect(dueFollowUp(trigger, reminded, NOW + 7 * DAY_MS)).toEqual({ action: 'expire' });
  });

  it('never reminds an invitation with no e-mail on record (its link in the ATS note), and expires it on time', () => {
    const noteOnly = applicationRecord({ candidateEmail: undefined, steps: { inviteNote: { doneAt: NOW } } });
    expect(dueFollowUp(trigger, noteOnly, NOW + 3 * DAY_MS)).toBeUndefined();
    expect(dueFollowUp(trigger, noteOnly, NOW + 7 * DAY_MS)).toEqual({ action: 'expire' });
  });
});
