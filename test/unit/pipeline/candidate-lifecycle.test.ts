import { ClaimHeldElsewhereError } from '../../../shared/pipeline/errors';
import { ATS_ERROR_CODES, AtsError } from '../../../shared/ats/errors';
import { confirmAsParsed } from '../../../shared/ats/port';
import { describe, expect, it, type Mock, vi } from 'vitest';
import { handleApplicationChanged } from '../../../shared/pipeline/application-changed.use-case';
import { followUpsDue } from '../../../shared/pipeline/follow-up-due';
import { handleFollowUp } from '../../../shared/pipeline/follow-up.use-case';
import { handleReportCreated } from '../../../shared/pipeline/report-created.use-case';
import { handleStageEntered } from '../../../shared/pipeline/stage-entered.use-case';
import { clearInterviewCache } from '../../../shared/pipeline/ensure-interview.use-case';
import { InterviewServiceError } from '../../../shared/interview-service/errors';
import { ERROR_CODES } from '../../../shared/interview-service/constants';
import type { ApplicationRecord } from '../../../shared/pipeline/records';
import type { ApplicationChangedMessage } from '../../../shared/queue';
import { MemoryMappingStore } from '../../helpers/memory-store';
import { invitedCandidate } from '../../helpers/invited-candidate';
import { dependencies, fakeContext } from '../../helpers/pipeline-fakes';
import {
  applicationRecord,
  followUpMessage,
  jobRecord,
  NOW,
  reportCreatedMessage,
  stageEnteredMessage,
} from '../../helpers/pipeline-records';

const DAY = 86_400_000;
const key = { connectionId: 'acme-greenhouse', atsApplicationId: '4401', triggerId: 'ai-screen' };

/**
 * An invitation expired at NOW whose note its stopped worker still owed, and the candidate's entry into the stage
 * again a second later (`candidate`: what its webhook carries).
 */
function expiredOwingNote(trigger: Record<string, unknown> = {}, candidate?: { name: string; email?: string }) {
  const expired = invitedCandidate(
    { state: 'expired', expiredAt: NOW, steps: {} },
    { reminders: undefined, ...trigger },
  );
  expired.deps.now = () => NOW + 1_000;
  const entered = stageEnteredMessage({ deliveryId: 'evt-2', ...(candidate ? { candidate } : {}) });
  return { ...expired, reentry: { ...entered, receivedAt: NOW + 1_000 } };
}

/** The invitation of a candidate the ATS now shows rejected, whose next status tag fails (retryable) with `code`. */
function rejectedWithTagFailing(message: string, code: string) {
  const candidate = invitedCandidate();
  candidate.ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
  const failure = Object.assign(new Error(message), { code, retryable: true });
  candidate.setStatusTag.mockRejectedValueOnce(failure);
  return { ...candidate, failure };
}

/** The status tag last shown is `tag`, whichever others were taken off. */
const expectLastTag = (setStatusTag: Mock, tag: string) =>
  expect(setStatusTag).toHaveBeenLastCalledWith(expect.anything(), tag, expect.anything(), undefined);

const followUp = followUpMessage;

const changed = (change: 'left' | 'returned', deliveryId = `d-${change}`): ApplicationChangedMessage => ({
  v: 1,
  kind: 'application-changed',
  enqueueId: `enq-${deliveryId}`,
  connectionId: 'acme-greenhouse',
  receivedAt: NOW,
  deliveryId,
  atsApplicationId: '4401',
  change,
});

/** A write-back a worker began and stopped (its lease run out): the next try resumes it. */
const STOPPED_WRITE_BACK = {
  state: 'completed' as const,
  reportId: 'rep-1',
  leaseOwner: 'stopped',
  leaseUntil: NOW - 1,
  writeBackAttempts: 1,
};
describe('Use case: a candidate who leaves the process after the invitation', () => {
  it('cancels the invitation on an exit the ATS confirms: no reminder, no expiry, the status cancelled', async () => {
    const { store, deps, ats, setStatusTag } = invitedCandidate();
    ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected', reason: 'Not a fit' });
    expect(await handleApplicationChanged(changed('left'), deps)).toEqual({ outcome: 'left' });
    expect(await store.getApplication(key)).toMatchObject({
      state: 'left',
      leftFrom: 'invited',
      exit: { kind: 'rejected', reason: 'Not a fit' },
    });
    expect(setStatusTag).toHaveBeenLastCalledWith(
      expect.anything(),
      'AI interview: cancelled',
      expect.arrayContaining(['AI interview: invited']),
      undefined,
    );
    deps.now = () => NOW + 8 * DAY;
    expect((await handleFollowUp(followUp('remind', { reminder: 0 }), deps)).outcome).toBe('not-due');
    expect((await handleFollowUp(followUp('expire'), deps)).outcome).toBe('not-due');
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(ats.postNote).not.toHaveBeenCalled();
    // A duplicate of the exit (a day later) reads nothing: its status claim already says "cancelled".
    ats.readStanding.mockClear();
    deps.now = () => NOW + 9 * DAY;
    expect((await handleApplicationChanged(changed('left'), deps)).outcome).toBe('nothing-to-do');
    expect(ats.readStanding).not.toHaveBeenCalled();
    // An undo hint for an invitation that never left reads nothing: no record it concerns.
    const fresh = invitedCandidate();
    expect((await handleApplicationChanged(changed('returned'), fresh.deps)).outcome).toBe('nothing-to-do');
    expect(fresh.ats.readStanding).not.toHaveBeenCalled();
  });

  it('shows "cancelled" on the retry when the ATS refused the status after the exit was recorded', async () => {
    const { store, deps, setStatusTag } = rejectedWithTagFailing('429', 'ats-rate-limited');
    deps.now = () => NOW + 25 * 3_600_000;
    // The reminder's look finds the exit, records it, and is cut short showing the status.
    await expect(handleFollowUp(followUp('remind', { reminder: 0 }), deps)).rejects.toMatchObject({
      code: 'ats-rate-limited',
    });
    expect((await store.getApplication(key))?.state).toBe('left');
    // Its retry shows the status the exit owes; nothing is sent.
    const calls = setStatusTag.mock.calls.length;
    expect((await handleFollowUp(followUp('remind', { reminder: 0 }), deps)).outcome).toBe('not-due');
    expect(setStatusTag.mock.calls.length).toBe(calls + 1);
    expectLastTag(setStatusTag, 'AI interview: cancelled');
    expect((await store.getApplication(key))?.steps.status?.value).toBe('cancelled');
    expect((await handleFollowUp(followUp('remind', { reminder: 0 }), deps)).outcome).toBe('not-due');
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
  });

  it('shows the claimed status again when the exit hint itself is retried after its tag failed', async () => {
    const { store, deps, ats, setStatusTag, failure: failed } = rejectedWithTagFailing('500', 'ats-unavailable');
    // The exit is recorded and "cancelled" claimed; the tag is not shown.
    await expect(handleApplicationChanged(changed('left'), deps)).rejects.toMatchObject({ code: 'ats-unavailable' });
    expect((await store.getApplication(key))?.steps.status?.value).toBe('cancelled');
    // Another delivery of the hint (a first receive) costs no tag call: within the claim's lease it comes back later
    // (the claim's worker may be showing it), after it, it is done with; the message handed over again shows it.
    await expect(handleApplicationChanged(changed('left', 'd-other'), deps)).rejects.toBeInstanceOf(
      ClaimHeldElsewhereError,
    );
    deps.now = () => NOW + 61_000;
    expect((await handleApplicationChanged(changed('left', 'd-other'), deps)).outcome).toBe('nothing-to-do');
    expect(setStatusTag).toHaveBeenCalledOnce();
    await handleApplicationChanged(changed('left'), deps, { receiveCount: 2 });
    expect(setStatusTag).toHaveBeenCalledTimes(2);
    expectLastTag(setStatusTag, 'AI interview: cancelled');
    // The same for an undo cut short between its claim and its tag: its retry shows "invited".
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9001' });
    setStatusTag.mockRejectedValueOnce(failed);
    await expect(handleApplicationChanged(changed('returned'), deps)).rejects.toMatchObject({
      code: 'ats-unavailable',
    });
    expect(await store.getApplication(key)).toMatchObject({
      state: 'invited',
      steps: { status: { value: 'invited' } },
    });
    // Its copy put back for later (a deferral) is the same message again.
    await handleApplicationChanged({ ...changed('returned'), deferrals: 1 }, deps);
    expectLastTag(setStatusTag, 'AI interview: invited');
    expect(setStatusTag).toHaveBeenCalledTimes(4);
  });

  it('waits briefly for an invitation still being sent when the exit comes, then cancels it', async () => {
    for (const holderFinishes of [true, false]) {
      const sending = { state: 'claimed' as const, leaseOwner: 'w1', leaseUntil: NOW + 60_000 };
      const { store, deps, ats, setStatusTag } = invitedCandidate(sending);
      ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
      let clock = NOW;
      deps.now = () => clock;
      // The invitation's holder ends its last steps 600 ms into the wait (or not within it).
      deps.sleep = async (ms: number) => {
        clock += ms;
        if (holderFinishes && clock >= NOW + 600 && (await store.getApplication(key))?.state === 'claimed')
          await store.recordStep(key, { owner: 'w1', finish: 'invited' });
      };
      if (holderFinishes) {
        expect((await handleApplicationChanged(changed('left'), deps)).outcome).toBe('left');
        expect(await store.getApplication(key)).toMatchObject({ state: 'left', leftFrom: 'invited' });
        expectLastTag(setStatusTag, 'AI interview: cancelled');
        expect(clock - NOW).toBeLessThan(5_000);
      } else {
        // Still held after the wait: back when the holder's lease ends, nothing read or shown meanwhile.
        const held = handleApplicationChanged(changed('left'), deps);
        await expect(held).rejects.toBeInstanceOf(ClaimHeldElsewhereError);
        await expect(held).rejects.toMatchObject({ retryAfterMs: NOW + 60_000 - clock });
        expect(ats.readStanding).not.toHaveBeenCalled();
        expect((await store.getApplication(key))?.state).toBe('claimed');
      }
    }
  });

  it('neither waits for nor throws over an invitation whose holder stopped (its lease over)', async () => {
    const { deps, ats } = invitedCandidate({ state: 'claimed', leaseOwner: 'w1', leaseUntil: NOW - 1 });
    ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
    const sleep = vi.fn(async () => undefined);
    deps.sleep = sleep;
    await expect(handleApplicationChanged(changed('left'), deps)).resolves.toBeDefined();
    expect(sleep).not.toHaveBeenCalled();
    expect(ats.readStanding).toHaveBeenCalledOnce();
  });

  it('acts on what the ATS says now, not on the hint: an exit hint for an active candidate: nothing', async () => {
    const { store, deps } = invitedCandidate();
    expect((await handleApplicationChanged(changed('left'), deps)).outcome).toBe('unchanged');
    expect((await store.getApplication(key))?.state).toBe('invited');
  });

  it('catches an exit whose webhook never came by looking before the reminder and before the expiry', async () => {
    // The expiry is due once its two reminders were sent (a reminder due goes first).
    const reminded = { reminder1: { doneAt: NOW }, reminder2: { doneAt: NOW } };
    const steps = { inviteEmail: { doneAt: NOW }, status: { value: 'invited', rank: 1, startedAt: NOW }, ...reminded };
    for (const action of ['remind', 'expire'] as const) {
      const { store, deps, ats } = invitedCandidate(action === 'expire' ? { steps } : {});
      deps.now = () => NOW + (action === 'remind' ? 25 * 3_600_000 : 8 * DAY);
      ats.readStanding.mockResolvedValue({ active: false, exit: 'hired' });
      expect((await handleFollowUp(followUp(action, { reminder: 0 }), deps)).outcome).toBe('left');
      expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
      expect(ats.postNote).not.toHaveBeenCalled();
      expect(await store.getApplication(key)).toMatchObject({ state: 'left', exit: { kind: 'hired' } });
    }
  });

  it('stops following an application the ATS no longer has: left (deleted), no status, never due again', async () => {
    const { store, deps, ats, setStatusTag, context } = invitedCandidate();
    deps.now = () => NOW + 25 * 3_600_000;
    ats.readStanding.mockRejectedValue(
      new AtsError('ats-not-found', 'Greenhouse: no application 4401', { status: 404 }),
    );
    expect((await handleFollowUp(followUp('remind', { reminder: 0 }), deps)).outcome).toBe('left');
    expect(await store.getApplication(key)).toMatchObject({ state: 'left', exit: { kind: 'deleted' } });
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(setStatusTag).not.toHaveBeenCalled();
    expect(await followUpsDue(context.connection, deps, NOW + 8 * DAY)).toEqual([]);
    // Its deletion webhook (Greenhouse's delete_application) comes the same way: a hint, the read, the exit.
    const other = invitedCandidate();
    other.ats.readStanding.mockRejectedValue(new AtsError('ats-not-found', 'no application 4401', { status: 404 }));
    expect(await handleApplicationChanged(changed('left'), other.deps)).toEqual({ outcome: 'left' });
    expect(await other.store.getApplication(key)).toMatchObject({ state: 'left', exit: { kind: 'deleted' } });
  });

  it("takes a deleted application's tag off the candidate where tags are the candidate's", async () => {
    const { store, deps, ats, setStatusTag } = invitedCandidate();
    Object.assign(ats, { tagsCandidates: true });
    ats.readStanding.mockRejectedValue(new AtsError('ats-not-found', 'no application 4401', { status: 404 }));
    expect(await handleApplicationChanged(changed('left'), deps)).toEqual({ outcome: 'left' });
    expect(await store.getApplication(key)).toMatchObject({ state: 'left', exit: { kind: 'deleted' } });
    expectLastTag(setStatusTag, 'AI interview: cancelled');
    expect(setStatusTag).toHaveBeenCalledTimes(1);
  });

  it('stops reminding one moved out of the stage; only entering it again brings the invitation back', async () => {
    const { store, deps, ats, setStatusTag } = invitedCandidate();
    deps.now = () => NOW + 25 * 3_600_000;
    // The recruiter advanced them before they took the interview: in the process, in another stage.
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9100', stageName: 'Hiring Manager Review' });
    expect((await handleFollowUp(followUp('remind', { reminder: 0 }), deps)).outcome).toBe('left');
    expect(await store.getApplication(key)).toMatchObject({ state: 'left', exit: { kind: 'moved' } });
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expectLastTag(setStatusTag, 'AI interview: cancelled');
    // A hint read in that other stage (an unreject elsewhere) is no return.
    expect((await handleApplicationChanged(changed('returned'), deps)).outcome).toBe('unchanged');
    expect((await store.getApplication(key))?.state).toBe('left');
    // Moved into the stage again: the invitation is back where it was.
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9001', stageName: 'AI Interview' });
    const [back] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-again' }), deps);
    expect(back?.outcome).toBe('already-invited');
    expect((await store.getApplication(key))?.state).toBe('invited');
    // A read that does not tell the stage leaves the candidate followed.
    ats.readStanding.mockResolvedValue({ active: true });
    expect((await handleFollowUp(followUp('remind', { reminder: 0 }), deps)).outcome).toBe('reminded');
  });

  it('takes no stage move of a candidate whose report is being written back as their moving on', async () => {
    // The connector's own write-back advanced them (its report claimed); the expiry's look comes meanwhile.
    const { store, deps, ats } = invitedCandidate({ state: 'expired', expiredAt: NOW, reportId: 'rep-1', steps: {} });
    deps.now = () => NOW + 1_000;
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9100', stageName: 'Hiring Manager Review' });
    await handleFollowUp(followUp('expire'), deps);
    const after = await store.getApplication(key);
    expect(after?.state).toBe('expired');
    expect(after?.exit).toBeUndefined();
  });

  it('takes a candidate in the stage they were invited from as not moved, whatever its name is now', async () => {
    const { store, deps, ats } = invitedCandidate({ stageId: '9001' });
    deps.now = () => NOW + 25 * 3_600_000;
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9001', stageName: 'AI Screen (renamed)' });
    expect((await handleFollowUp(followUp('remind', { reminder: 0 }), deps)).outcome).toBe('reminded');
    expect((await store.getApplication(key))?.state).toBe('invited');
  });

  it('writes the note of an expiry recorded before the candidate left, once, whoever finds the exit', async () => {
    // The expiry was written, then its worker stopped before the note; the candidate left before the retry.
    const expiredBefore = { state: 'expired' as const, expiredAt: NOW + 7 * DAY };
    for (const exitSeenBy of ['the retry', 'a webhook'] as const) {
      const { store, deps, ats, setStatusTag } = invitedCandidate(expiredBefore);
      deps.now = () => NOW + 7 * DAY + 120_000;
      ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
      if (exitSeenBy === 'a webhook')
        expect((await handleApplicationChanged(changed('left'), deps)).outcome).toBe('left');
      const outcome = (await handleFollowUp(followUp('expire'), deps, undefined)).outcome;
      expect(outcome).toBe(exitSeenBy === 'the retry' ? 'left' : 'not-due');
      expect(ats.postNote).toHaveBeenCalledOnce();
      expect(ats.postNote.mock.calls[0]?.[1]).toMatchObject({ body: expect.stringContaining('not completed by') });
      expect(await store.getApplication(key)).toMatchObject({ state: 'left', leftFrom: 'expired' });
      expect((await store.getApplication(key))?.steps.expiryNote?.doneAt).toBeDefined();
      expectLastTag(setStatusTag, 'AI interview: cancelled');
      // Handed over again, it writes nothing more.
      await handleFollowUp(followUp('expire'), deps, undefined);
      expect(ats.postNote).toHaveBeenCalledOnce();
    }
  });

  it("gives the expiry note's lease back when a 429 stopped it unsent, keeps it when no answer came", async () => {
    for (const stopped of ['a 429', 'no answer'] as const) {
      const { store, deps, ats } = invitedCandidate({}, { reminders: undefined });
      deps.now = () => NOW + 8 * DAY;
      const failure =
        stopped === 'a 429'
          ? new AtsError('ats-rate-limited', 'POST notes: 429', { status: 429, retryAfterMs: 1_000 })
          : Object.assign(new Error('socket hang up'), {
              code: 'ats-timeout',
              retryable: true,
              mayHaveSucceeded: true,
            });
      // An answer that did not come goes up at once: the note may still be landing, and is looked for later.
      ats.postNote.mockRejectedValueOnce(failure);
      await expect(handleFollowUp(followUp('expire'), deps, undefined, 60_000)).rejects.toBe(failure);
      const posts = ats.postNote.mock.calls.length;
      expect((await store.getApplication(key))?.state).toBe('expired');
      // Its copy, back a second later: the note after a 429; a look after the lease where the POST may have landed.
      deps.now = () => NOW + 8 * DAY + 1_000;
      const again = handleFollowUp(followUp('expire'), deps, undefined, 60_000);
      if (stopped === 'a 429') {
        expect((await again).outcome).toBe('expired');
        expect([posts, ats.postNote.mock.calls.length]).toEqual([1, 2]);
        expect((await store.getApplication(key))?.steps.expiryNote?.doneAt).toBeDefined();
      } else {
        // Back when the first try's lease ends, not a whole lease later.
        await expect(again).rejects.toBeInstanceOf(ClaimHeldElsewhereError);
        await expect(again).rejects.toMatchObject({ retryAfterMs: 59_000 });
        expect([posts, ats.postNote.mock.calls.length, ats.findNote.mock.calls.length]).toEqual([1, 1, 0]);
      }
    }
  });

  it('expires when the ATS refuses the expiry note for good: its status shown, the note not tried again', async () => {
    const refusal = () => new AtsError('ats-invalid-request', 'POST notes: 422', { status: 422 });
    for (const refused of ['the post', 'the look-up'] as const) {
      // The look-up is made by a try after one that stopped once it had recorded the expiry.
      const record = refused === 'the post' ? {} : { state: 'expired' as const, expiredAt: NOW + 8 * DAY };
      const { store, deps, ats, setStatusTag } = invitedCandidate(record, { reminders: undefined });
      deps.now = () => NOW + 8 * DAY + 60_000;
      if (refused === 'the post') ats.postNote.mockRejectedValue(refusal());
      else ats.findNote.mockRejectedValue(refusal());
      expect((await handleFollowUp(followUp('expire'), deps)).outcome).toBe('expired');
      expectLastTag(setStatusTag, 'AI interview: expired');
      const note = (await store.getApplication(key))?.steps.expiryNote;
      expect(note).toMatchObject({ outcome: 'refused', value: 'ats-invalid-request', doneAt: NOW + 8 * DAY + 60_000 });
      expect(deps.logger.error).toHaveBeenCalledWith(
        'follow-up: the ATS refused the expiry note; the expiry goes on',
        expect.objectContaining({ code: 'ats-invalid-request' }),
      );
      // A note that could not be looked up is not posted: it may be there already. Handed over again: nothing more.
      const posts = ats.postNote.mock.calls.length;
      expect(posts).toBe(refused === 'the post' ? 1 : 0);
      await handleFollowUp(followUp('expire'), deps);
      expect([ats.postNote.mock.calls.length, ats.findNote.mock.calls.length]).toEqual([
        posts,
        refused === 'the post' ? 0 : 1,
      ]);
    }
  });

  it('looks the expiry note up only where an earlier try may have posted it, not after expiring here', async () => {
    const here = invitedCandidate({}, { reminders: undefined });
    here.deps.now = () => NOW + 8 * DAY;
    expect((await handleFollowUp(followUp('expire'), here.deps)).outcome).toBe('expired');
    expect([here.ats.findNote.mock.calls.length, here.ats.postNote.mock.calls.length]).toEqual([0, 1]);
    // Expired by a try that stopped before its note was recorded: the note is looked for, and found, not posted again.
    const stopped = invitedCandidate({ state: 'expired', expiredAt: NOW + 8 * DAY }, { reminders: undefined });
    stopped.deps.now = () => NOW + 8 * DAY + 60_000;
    stopped.ats.findNote.mockResolvedValue({ noteId: 'note-expired-1' });
    expect((await handleFollowUp(followUp('expire'), stopped.deps)).outcome).toBe('expired');
    expect([stopped.ats.findNote.mock.calls.length, stopped.ats.postNote.mock.calls.length]).toEqual([1, 0]);
    expect((await stopped.store.getApplication(key))?.steps.expiryNote?.doneAt).toBeDefined();
    // Its note posted by a try whose answer was lost, then extended by an operator: the next expiry recorded here
    // looks for it all the same, and finds it.
    const leased = { leaseUntil: NOW + 8 * DAY + 60_000, startedAt: NOW + 8 * DAY };
    const extended = invitedCandidate(
      { extendedUntil: NOW + 9 * DAY, steps: { inviteEmail: { doneAt: NOW }, expiryNote: leased } },
      { reminders: undefined },
    );
    extended.deps.now = () => NOW + 10 * DAY;
    extended.ats.findNote.mockResolvedValue({ noteId: 'note-expired-1' });
    expect((await handleFollowUp(followUp('expire'), extended.deps)).outcome).toBe('expired');
    expect([extended.ats.findNote.mock.calls.length, extended.ats.postNote.mock.calls.length]).toEqual([1, 0]);
  });

  it('returns an invitation to where it was when the exit is undone, and reminds again', async () => {
    const { store, deps, ats, setStatusTag } = invitedCandidate();
    ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
    await handleApplicationChanged(changed('left'), deps);
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9001' });
    expect((await handleApplicationChanged(changed('returned'), deps)).outcome).toBe('returned');
    expect(await store.getApplication(key)).toMatchObject({ state: 'invited' });
    expectLastTag(setStatusTag, 'AI interview: invited');
    deps.now = () => NOW + 25 * 3_600_000;
    expect((await handleFollowUp(followUp('remind', { reminder: 0 }), deps)).outcome).toBe('reminded');
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
  });

  it('makes a follow-up consumed while the candidate was out due again once they are back', async () => {
    const reminded = { startedAt: NOW, doneAt: NOW };
    const { store, deps, ats, context } = invitedCandidate({
      steps: { inviteEmail: { doneAt: NOW }, reminder1: reminded, reminder2: reminded },
    });
    const expiry = NOW + 8 * DAY;
    const subjectsAt = async (now: number) =>
      (await followUpsDue(context.connection, deps, now)).map((d) => `${d.followUp.action}:${d.subject}`);
    const [before] = await subjectsAt(expiry);
    expect(before).toMatch(/^expire:/);
    ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
    await handleApplicationChanged(changed('left'), deps);
    // The expiry enqueued meanwhile finds the candidate out: it does nothing.
    deps.now = () => expiry;
    expect((await handleFollowUp(followUp('expire'), deps)).outcome).toBe('not-due');
    expect(await subjectsAt(expiry)).toEqual([]);
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9001' });
    await handleApplicationChanged(changed('returned'), deps);
    // Back, the expiry is a new subject: the queue ledger's mark of the consumed one does not hold it back.
    const [after] = await subjectsAt(expiry);
    expect(after).toMatch(/^expire:/);
    expect(after).not.toBe(before);
    expect((await handleFollowUp(followUp('expire'), deps)).outcome).toBe('expired');
    expect(await store.getApplication(key)).toMatchObject({ state: 'expired' });
  });

  it('writes a late report back for a candidate who left, and never moves their stage', async () => {
    const { store, deps, ats } = invitedCandidate();
    ats.readStanding.mockResolvedValue({ active: false, exit: 'hired' });
    await handleApplicationChanged(changed('left'), deps);
    const [result] = [await handleReportCreated(reportCreatedMessage(), deps)];
    expect(result).toMatchObject({ outcome: 'written-back', advanced: false });
    expect(ats.moveToStage).not.toHaveBeenCalled();
    expect(ats.postNote.mock.calls[0]?.[1].body).toContain('Stage not moved: the candidate was hired');
    expect((await store.getApplication(key))?.state).toBe('written_back');
  });

  it('ends a resumed write-back whose steps are all done, its status ranked above the one it would show', async () => {
    // A worker noted, moved, claimed "advanced" and stopped; the candidate's exit was recorded before the retry, so
    // the retry would show "completed" (ranked below): every step is done, and the write-back still ends.
    const { store, deps, ats } = invitedCandidate({
      ...STOPPED_WRITE_BACK,
      exit: { kind: 'rejected', at: NOW - 500 },
      steps: {
        inviteEmail: { doneAt: NOW - 9_000 },
        reportNote: { doneAt: NOW - 2_000, value: 'note-1' },
        stageMove: { doneAt: NOW - 1_000 },
        status: { value: 'advanced', rank: 4, startedAt: NOW - 900 },
      },
    });
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'written-back' });
    expect(ats.postNote).not.toHaveBeenCalled();
    const ended = await store.getApplication(key);
    expect(ended?.state).toBe('written_back');
    expect(ended?.leaseOwner).toBeUndefined();
  });

  it.each([
    // Rejected between the look before the note and the move: the move's own read finds them gone.
    ['gone: its exit recorded', { moved: false, stageId: '9001', exit: 'rejected' }, 'rejected', 'not-moved:rejected'],
    // A retried move (the first one's answer lost) finds the candidate in a stage a recruiter chose since.
    [
      'moved on: no exit',
      { moved: false, stageId: '9005', skipped: 'not-moved:moved-on' },
      undefined,
      'not-moved:moved-on',
    ],
  ] as const)('shows no "advanced" for a candidate the move found %s', async (_what, answer, exit, value) => {
    const { store, deps, ats, setStatusTag } = invitedCandidate();
    ats.moveToStage.mockResolvedValue(answer);
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({
      outcome: 'written-back',
      advanced: false,
    });
    const shown = setStatusTag.mock.calls.map((call) => call[1]);
    expect(shown).not.toContain('AI interview: advanced');
    expect(shown.at(-1)).toBe('AI interview: completed');
    const record = await store.getApplication(key);
    expect([record?.exit?.kind, record?.state, record?.steps.stageMove?.value]).toEqual([exit, 'written_back', value]);
  });

  it('shows "completed" on a write-back resumed after its move found the candidate moved on', async () => {
    const { deps, ats, setStatusTag } = invitedCandidate({
      ...STOPPED_WRITE_BACK,
      steps: {
        inviteEmail: { doneAt: NOW - 9_000 },
        reportNote: { doneAt: NOW - 2_000, value: 'note-1' },
        stageMove: { doneAt: NOW - 1_000, value: 'not-moved:moved-on' },
      },
    });
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ advanced: false });
    expect(ats.moveToStage).not.toHaveBeenCalled();
    expect(setStatusTag.mock.calls.map((call) => call[1]).at(-1)).toBe('AI interview: completed');
  });

  it('reads before an advancing write-back: an exit the connector never heard of moves nothing', async () => {
    const { deps, ats } = invitedCandidate();
    ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'written-back' });
    expect(ats.moveToStage).not.toHaveBeenCalled();
    expect(ats.postNote.mock.calls[0]?.[1].body).toContain('Stage not moved: the candidate was rejected');
  });

  it('reads before an advancing write-back: one a recruiter moved out of the stage is noted, not moved', async () => {
    const { store, deps, ats, setStatusTag } = invitedCandidate();
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9005', stageName: 'Offer' });
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ advanced: false });
    expect(ats.moveToStage).not.toHaveBeenCalled();
    const body = String(ats.postNote.mock.calls[0]?.[1].body);
    expect(body).toContain('Stage not moved: the candidate was moved out of the stage');
    expect(body).not.toContain('Advanced');
    expect(setStatusTag.mock.calls.map((call) => call[1]).at(-1)).toBe('AI interview: completed');
    expect((await store.getApplication(key))?.exit?.kind).toBe('moved');
  });

  it("keeps a result acted on when a retry reopened for its note finds the candidate's exit", async () => {
    // The note was refused, the move made; the candidate was hired since; an operator's retry posts the note.
    const { deps, ats, setStatusTag } = invitedCandidate({
      ...STOPPED_WRITE_BACK,
      writeBackAttempts: 2,
      leaseOwner: undefined,
      leaseUntil: undefined,
      exit: { kind: 'hired', at: NOW - 500 },
      steps: { inviteEmail: { doneAt: NOW - 9_000 }, stageMove: { doneAt: NOW - 1_000, value: '9002' } },
    });
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'written-back' });
    expect(String(ats.postNote.mock.calls[0]?.[1].body)).not.toContain('Stage not moved');
    expect([ats.moveToStage.mock.calls.length, ats.readStanding.mock.calls.length]).toEqual([0, 0]);
    expect(setStatusTag.mock.calls.map((call) => call[1]).at(-1)).toBe('AI interview: advanced');
  });
});

describe('Use case: a candidate rejected before their stage change is handled', () => {
  it('reads where they stand before inviting: never invited while out, invited once back', async () => {
    // The stage change waited (a delivery late, retried by the ATS, or waiting its turn); the rejection came first.
    const { context, ats } = fakeContext();
    const store = new MemoryMappingStore().seed({
      jobs: [jobRecord({ state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined })],
    });
    const deps = dependencies(store, context);
    expect((await handleApplicationChanged(changed('left'), deps)).outcome).toBe('nothing-to-do');
    expect(ats.readStanding).not.toHaveBeenCalled();
    ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
    const [late] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-late' }), deps);
    expect(late?.outcome).toBe('candidate-left');
    expect(ats.readStanding).toHaveBeenCalledOnce();
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(ats.postNote).not.toHaveBeenCalled();
    expect(await store.getApplication(key)).toBeUndefined();
    // Unrejected into another stage: in the process, not in the trigger's: the late stage change invites no one.
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9100', stageName: 'Hiring Manager Review' });
    const [elsewhere] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-late' }), deps);
    expect(elsewhere?.outcome).toBe('candidate-left');
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    // Unrejected and moved into the stage again (a minute on): the read says in, and they are invited once.
    deps.now = () => NOW + 60_000;
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9001' });
    const [back] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-back' }), deps);
    expect(back?.outcome).toBe('invited');
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
    // A stage change of an application the ATS never said left reads nothing first.
    ats.readStanding.mockClear();
    const other = { ...key, atsApplicationId: '4402' };
    await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-other', atsApplicationId: '4402' }), deps);
    expect((await store.getApplication(other))?.state).toBe('invited');
    expect(ats.readStanding).not.toHaveBeenCalled();
  });
});

describe('Use case: a candidate rejected while a stopped worker held their claim', () => {
  it('reads where they stand before the claim is taken over: out, nothing sent; in, invited', async () => {
    for (const active of [false, true]) {
      // The worker claimed and stopped before any step; the rejection found the claim and could not end it.
      const { store, deps, ats } = invitedCandidate({ state: 'claimed', steps: {}, leaseUntil: NOW + 60_000 });
      await store.noteExitSeen('acme-greenhouse', '4401', NOW + 10_000);
      deps.now = () => NOW + 120_000;
      ats.readStanding.mockResolvedValue(
        active ? { active: true, stageId: '9001' } : { active: false, exit: 'rejected' },
      );
      const retried = stageEnteredMessage({ deliveryId: 'evt-1' });
      const [result] = await handleStageEntered(retried, deps);
      expect(result?.outcome).toBe(active ? 'invited' : 'candidate-left');
      expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(active ? 1 : 0);
    }
  });
});

describe('Use case: a candidate rejected while their invitation is being sent', () => {
  it('finishes the invitation begun when the stage is no longer confirmed, then records the exit', async () => {
    // The e-mail went out; the message went back for its next step; the recruiter rejected the candidate meanwhile.
    const emailed = { state: 'claimed' as const, steps: { inviteEmail: { startedAt: NOW, doneAt: NOW } } };
    const { store, deps, ats, setStatusTag } = invitedCandidate(emailed);
    ats.confirmStageEntered.mockResolvedValue({ confirmed: false, reason: 'the opportunity is archived' });
    ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
    // The read of where they stand fails once: the retry finds the invitation still claimed, and finishes it.
    ats.readStanding.mockRejectedValueOnce(Object.assign(new Error('503'), { code: 'ats-unavailable' }));
    // A webhook that carries no e-mail (Lever's): the claim's own is used, and no "no usable e-mail" note is posted.
    const lever = stageEnteredMessage({ deliveryId: 'evt-1', candidate: {} });
    await expect(handleStageEntered(lever, deps)).rejects.toMatchObject({ code: 'ats-unavailable' });
    expect((await store.getApplication(key))?.state).toBe('claimed');
    const [result] = await handleStageEntered(lever, deps);
    expect(result?.outcome).toBe('invited');
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(ats.postNote).toHaveBeenCalledOnce();
    expect(ats.postNote.mock.calls[0]?.[1].body).not.toMatch(/no usable e-mail/i);
    expect(await store.getApplication(key)).toMatchObject({ state: 'left', leftFrom: 'invited' });
    expectLastTag(setStatusTag, 'AI interview: cancelled');
    // Another the ATS does not confirm, whose candidate was not e-mailed yet (the service's invitation only): nothing.
    const fresh = invitedCandidate({ state: 'claimed', steps: { serviceInvite: { startedAt: NOW, doneAt: NOW } } });
    fresh.ats.confirmStageEntered.mockResolvedValue({ confirmed: false, reason: 'the opportunity is archived' });
    const [other] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1' }), fresh.deps);
    expect(other?.outcome).toBe('stage-not-confirmed');
    expect(fresh.ats.postNote).not.toHaveBeenCalled();
    expect((await fresh.store.getApplication(key))?.state).toBe('claimed');
  });
});

describe('Use case: a candidate rejected while an invitation e-mailed is finished', () => {
  /** A claim whose worker stopped (its lease over) after `steps`, and the recruiter's rejection since. */
  function leftAfter(steps: ApplicationRecord['steps'], invites: Record<string, string>) {
    const left = invitedCandidate({
      state: 'claimed',
      leaseOwner: 'gone',
      leaseUntil: NOW - 1,
      serviceCandidateId: 'cand-9',
      candidateInviteUrl: 'https://i/int-1?cid=cand-9',
      steps,
    });
    Object.assign(left.context.connection.interviewService, { invites });
    const service = { inviteCandidate: vi.fn(), findInvitation: vi.fn().mockResolvedValue(undefined) };
    Object.assign(left.interviews, service);
    left.ats.confirmStageEntered.mockResolvedValue({ confirmed: false, reason: 'the application is in another stage' });
    left.ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
    return { ...left, service };
  }
  const done = { startedAt: NOW, doneAt: NOW };
  const byService = { ...done, value: 'e-mailed by the service' };

  it.each([
    // The service e-mailed it; the webhook's address, no longer one mailbox, is not the one the claim recorded.
    [
      'the service e-mailed',
      { serviceInvite: byService },
      { mode: 'per-candidate', emailedBy: 'service' },
      'x@a.com, y@b.com',
    ],
    // The connector e-mailed it; the connection now has the service e-mail the invitations.
    ['the connector e-mailed', { inviteEmail: done }, { mode: 'per-candidate', emailedBy: 'service' }, undefined],
  ])('finishes an invitation %s, sending nothing new', async (_, steps, invites, webhookEmail) => {
    const { store, deps, ats, service } = leftAfter(steps, invites);
    const candidate = { name: 'Ana', ...(webhookEmail ? { email: webhookEmail } : {}) };
    const [result] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1', candidate }), deps);
    expect(result?.outcome).toBe('invited');
    expect(service.inviteCandidate).not.toHaveBeenCalled();
    expect(service.findInvitation).not.toHaveBeenCalled();
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    // One note, with the candidate's own link, saying it was e-mailed (not that no address could be used).
    expect(ats.postNote).toHaveBeenCalledOnce();
    expect(ats.postNote.mock.calls[0]?.[1].body).toContain('cid=cand-9');
    expect(ats.postNote.mock.calls[0]?.[1].body).toContain('e-mailed to the candidate');
    expect(await store.getApplication(key)).toMatchObject({ state: 'left', leftFrom: 'invited' });
  });

  it('leaves alone a service invitation only begun, or one the service was not to e-mail', async () => {
    // Its record decides, never the configuration now: a service invitation done without its e-mail stays so.
    for (const [steps, emailedBy] of [
      [{ serviceInvite: { startedAt: NOW } }, 'service'],
      [{ serviceInvite: done }, 'service'],
      [{ serviceInvite: done }, 'connector'],
      // Begun with its e-mail asked for, and the service has no such invitation: it never reached the service.
      [{ serviceInvite: { startedAt: NOW, value: 'e-mailed by the service' } }, 'service'],
    ] as const) {
      const { store, deps, ats, service } = leftAfter(steps, { mode: 'per-candidate', emailedBy });
      const [result] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1' }), deps);
      expect(service.findInvitation).toHaveBeenCalledTimes('value' in steps.serviceInvite ? 1 : 0);
      expect(result?.outcome).toBe('stage-not-confirmed');
      expect(service.inviteCandidate).not.toHaveBeenCalled();
      expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
      expect(ats.postNote).not.toHaveBeenCalled();
      expect((await store.getApplication(key))?.state).toBe('claimed');
    }
  });
});

/**
 * A service invitation begun with its e-mail asked for, its worker gone before recording it done; its candidate
 * rejected since.
 */
function begunAtService(emailedBy: 'service' | 'connector') {
  const left = invitedCandidate({
    state: 'claimed',
    leaseOwner: 'gone',
    leaseUntil: NOW - 1,
    steps: { serviceInvite: { startedAt: NOW, value: 'e-mailed by the service' } },
  });
  Object.assign(left.context.connection.interviewService, { invites: { mode: 'per-candidate', emailedBy } });
  const link = { candidate_id: 'cand-9', invite_url: 'https://i/int-1?cid=cand-9' };
  const service = {
    inviteCandidate: vi.fn().mockResolvedValue(link),
    findInvitation: vi.fn().mockResolvedValue({ candidate_id: 'cand-9', interview_id: 'int-1' }),
  };
  Object.assign(left.interviews, service);
  left.ats.confirmStageEntered.mockResolvedValue({ confirmed: false, reason: 'the application is in another stage' });
  left.ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
  return { ...left, service };
}

describe('Use case: a candidate rejected while the service invitation was being sent', () => {
  // The record decides, never the configuration now: the connection may have stopped having the service e-mail.
  it.each(['service', 'connector'] as const)(
    'finishes one the service has (it may have e-mailed them), sending nothing new (%s e-mails now)',
    async (emailedBy) => {
      const { store, deps, ats, service } = begunAtService(emailedBy);
      const [result] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1' }), deps);
      expect(result?.outcome).toBe('invited');
      // Asked again for that candidate only for its link, with no e-mail: the same invitation, nothing new.
      expect(service.inviteCandidate).toHaveBeenCalledOnce();
      expect(service.inviteCandidate.mock.calls[0]?.[0]).toMatchObject({
        candidateId: 'cand-9',
        disableEmailNotification: true,
      });
      expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
      expect(ats.postNote).toHaveBeenCalledOnce();
      expect(ats.postNote.mock.calls[0]?.[1].body).toContain('cid=cand-9');
      expect(ats.postNote.mock.calls[0]?.[1].body).toContain('e-mailed to the candidate');
      const record = await store.getApplication(key);
      expect(record).toMatchObject({ state: 'left', leftFrom: 'invited' });
      expect(record?.steps.serviceInvite).toMatchObject({ doneAt: NOW, value: 'e-mailed by the service' });
    },
  );

  it('never invites anew where the service, found to have it, no longer shows it; the retry leaves it', async () => {
    const { store, deps, ats, service } = begunAtService('service');
    service.findInvitation.mockResolvedValueOnce({ candidate_id: 'cand-9', interview_id: 'int-1' });
    service.findInvitation.mockResolvedValue(undefined);
    const message = stageEnteredMessage({ deliveryId: 'evt-1' });
    await expect(handleStageEntered(message, deps)).rejects.toMatchObject({ code: 'invitation-not-found' });
    const [retry] = await handleStageEntered(message, deps);
    expect(retry?.outcome).toBe('stage-not-confirmed');
    expect(service.inviteCandidate).not.toHaveBeenCalled();
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(ats.postNote).not.toHaveBeenCalled();
    expect((await store.getApplication(key))?.state).toBe('claimed');
  });

  it("tells the recruiter of an e-mail SES refused, though the trigger's e-mail was turned off since", async () => {
    const refused = { startedAt: NOW, doneAt: NOW, outcome: 'refused' as const, value: 'MessageRejected' };
    const left = invitedCandidate(
      { state: 'claimed', leaseOwner: 'gone', leaseUntil: NOW - 1, steps: { inviteEmail: refused } },
      { invite: { email: false, atsNote: true } },
    );
    left.ats.confirmStageEntered.mockResolvedValue({ confirmed: false, reason: 'the application is in another stage' });
    left.ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
    await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1' }), left.deps);
    expect(left.deps.mailer.sendInvite).not.toHaveBeenCalled();
    const markers = left.ats.postNote.mock.calls.map(([, note]) => note.marker);
    expect(markers).toContainEqual(expect.stringContaining('ai-interview-failed:4401:ai-screen:email-refused'));
    expect(await left.store.getApplication(key)).toMatchObject({ state: 'left' });
  });
});

describe('Use case: a candidate who enters the stage again', () => {
  it('makes exactly one new invitation per re-entry after an expiry, however often it is delivered', async () => {
    const { store, deps, ats } = invitedCandidate({
      state: 'expired',
      expiredAt: NOW,
      steps: { expiryNote: { doneAt: NOW } },
    });
    // Learnt of after the expiry: a delivery learnt of before it is that invitation's (mapping rules).
    const reentry = { ...stageEnteredMessage({ deliveryId: 'evt-2' }), receivedAt: NOW + 1_000 };
    const results = [];
    for (const enqueueId of ['enq-a', 'enq-b', 'enq-c'])
      results.push(...(await handleStageEntered({ ...reentry, enqueueId }, deps)));
    expect(results.map((r) => r.outcome).filter((o) => o === 'invited')).toHaveLength(1);
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
    expect(await store.getApplication(key)).toMatchObject({
      state: 'invited',
      reinvitations: 1,
      entryDeliveryId: 'evt-2',
    });
    // The note of the second invitation is its own (another marker), not the first one's found again.
    expect(ats.postNote.mock.calls[0]?.[1].marker).toBe('ai-interview-invite:4401:ai-screen:2');
    // The first entry's own delivery again invites nobody.
    expect((await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1' }), deps))[0]?.outcome).not.toBe(
      'invited',
    );
  });

  it("holds a re-entry off while the expiry's note is written; the next expiry writes its own", async () => {
    const { store, deps, ats } = invitedCandidate({ state: 'expired', expiredAt: NOW }, { reminders: undefined });
    deps.now = () => NOW + 1_000;
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9001' });
    // The candidate is moved back into the stage while the expiry's note is on its way: the re-entry comes back once
    // the note's worker is done with it (its lease).
    const reentry = { ...stageEnteredMessage({ deliveryId: 'evt-2' }), receivedAt: NOW + 1_000 };
    let heldOff: unknown;
    ats.postNote.mockImplementationOnce(async () => {
      heldOff = await handleStageEntered(reentry, deps).catch((error: unknown) => error);
      return { noteId: 'note-expired-1' };
    });
    expect((await handleFollowUp(followUp('expire'), deps)).outcome).toBe('expired');
    expect(heldOff).toBeInstanceOf(ClaimHeldElsewhereError);
    expect((heldOff as ClaimHeldElsewhereError).retryAfterMs).toBeGreaterThan(0);
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    // Back after the lease: invited, with nothing of the expiry's note carried (it was written).
    expect((await handleStageEntered(reentry, deps))[0]?.outcome).toBe('invited');
    const record = await store.getApplication(key);
    expect(record).toMatchObject({ state: 'invited', reinvitations: 1 });
    expect(record?.steps.expiryNote).toBeUndefined();
    expect(record?.priorExpiry).toBeUndefined();
    expect(ats.postNote.mock.calls.map((call) => call[1].marker)).toEqual([
      'ai-interview-expired:4401:ai-screen',
      'ai-interview-invite:4401:ai-screen:2',
    ]);
    // The new invitation expires in its turn, and its note is written.
    ats.postNote.mockClear();
    deps.now = () => NOW + 1_000 + 7 * DAY + 60_000;
    expect((await handleFollowUp(followUp('expire'), deps)).outcome).toBe('expired');
    expect(ats.postNote).toHaveBeenCalledOnce();
    expect(ats.postNote.mock.calls[0]?.[1].marker).toBe('ai-interview-expired:4401:ai-screen:2');
  });

  it('writes the note a stopped expiry still owed before inviting the candidate who re-entered, once', async () => {
    // The expiry was recorded and its worker stopped before the note; the candidate re-enters before its retry.
    const { store, deps, ats, reentry } = expiredOwingNote();
    // The worker that re-invites stops after posting the expiry's note, before recording it: the next looks it up.
    ats.postNote.mockImplementationOnce(async () => {
      throw Object.assign(new Error('no answer'), { code: 'network', retryable: true });
    });
    await expect(handleStageEntered(reentry, deps)).rejects.toThrow('no answer');
    // The candidate was contacted first: the note of the old invitation delays no e-mail.
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
    expect(await store.getApplication(key)).toMatchObject({ priorExpiry: { expiredAt: NOW, round: 0 } });
    ats.findNote.mockImplementation(async (_target: unknown, marker: string) =>
      marker === 'ai-interview-expired:4401:ai-screen' ? { noteId: 'note-expired-1' } : undefined,
    );
    deps.now = () => NOW + 1_000 + 10 * 60_000;
    expect((await handleStageEntered({ ...reentry, enqueueId: 'enq-retry' }, deps))[0]?.outcome).toBe('invited');
    const notes = ats.postNote.mock.calls.map((call) => [call[1].marker, call[1].body]);
    expect(notes).toEqual([
      ['ai-interview-expired:4401:ai-screen', expect.stringContaining('not completed by 2026-11-21')],
      ['ai-interview-invite:4401:ai-screen:2', expect.any(String)],
    ]);
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
    const record = await store.getApplication(key);
    expect(record).toMatchObject({ state: 'invited', reinvitations: 1 });
    expect(record?.steps.priorExpiryNote?.doneAt).toBeDefined();
    // The stopped expiry's own message, back after its visibility timeout, writes nothing on the new invitation.
    ats.postNote.mockClear();
    expect((await handleFollowUp(followUp('expire'), deps)).outcome).toBe('not-due');
    expect(ats.postNote).not.toHaveBeenCalled();
  });

  it.each([
    ['note', 'postNote', 'POST'],
    ["note's look-up", 'findNote', 'GET'],
  ] as const)(
    're-invites all the same when the ATS refuses the carried expiry %s for good, said on the record',
    async (_what, call, method) => {
      const { store, deps, ats, reentry } = expiredOwingNote();
      ats[call].mockRejectedValueOnce(new AtsError('ats-forbidden', `${method} /v1/applications/4401/notes: 403`));
      expect((await handleStageEntered(reentry, deps))[0]?.outcome).toBe('invited');
      expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
      const record = await store.getApplication(key);
      expect(record?.steps.priorExpiryNote).toMatchObject({ outcome: 'refused', value: 'ats-forbidden' });
      expect(record?.steps.inviteNote?.doneAt).toBeDefined();
      // Tried once when refused; never when it could not be looked up (it may be on the record already).
      const expiryNotes = ats.postNote.mock.calls.filter((c) => c[1].marker === 'ai-interview-expired:4401:ai-screen');
      expect(expiryNotes).toHaveLength(call === 'postNote' ? 1 : 0);
    },
  );

  it('writes the expiry note a re-entry carried when the candidate left before any step of it, once', async () => {
    const { store, deps, ats, reentry } = expiredOwingNote();
    // The worker stops right after its claim: the e-mail's start could not be recorded (no answer from DynamoDB).
    vi.spyOn(store, 'recordStep').mockRejectedValueOnce(Object.assign(new Error('no answer'), { retryable: true }));
    await expect(handleStageEntered(reentry, deps)).rejects.toThrow('no answer');
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(ats.postNote).not.toHaveBeenCalled();
    // The recruiter moves the candidate on. A copy of the message within the claim's lease leaves the note to its
    // holder and comes back after it; the message after the lease writes it.
    ats.confirmStageEntered.mockResolvedValue({ confirmed: false, reason: 'the application is in another stage' });
    deps.now = () => NOW + 1_000 + 30_000;
    await expect(handleStageEntered(reentry, deps)).rejects.toBeInstanceOf(ClaimHeldElsewhereError);
    expect(ats.postNote).not.toHaveBeenCalled();
    deps.now = () => NOW + 1_000 + 10 * 60_000;
    for (let delivery = 0; delivery < 2; delivery++)
      expect((await handleStageEntered(reentry, deps))[0]?.outcome).toBe('stage-not-confirmed');
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(ats.postNote.mock.calls.map((call) => call[1].marker)).toEqual(['ai-interview-expired:4401:ai-screen']);
    const record = await store.getApplication(key);
    expect(record?.steps.priorExpiryNote?.doneAt).toBeDefined();
    // The claim handed back: a later entry into the stage invites them, with no second expiry note.
    expect(record?.state).toBe('claimed');
    expect(record?.leaseOwner).toBeUndefined();
    ats.confirmStageEntered.mockImplementation(confirmAsParsed);
    deps.now = () => NOW + 1_000 + 20 * 60_000;
    const back = { ...stageEnteredMessage({ deliveryId: 'evt-3' }), receivedAt: deps.now() };
    expect((await handleStageEntered(back, deps))[0]?.outcome).toBe('invited');
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
    expect(ats.postNote.mock.calls.map((call) => call[1].marker)).toEqual([
      'ai-interview-expired:4401:ai-screen',
      'ai-interview-invite:4401:ai-screen:2',
    ]);
  });

  // The other claim's holder stopped (its lease over) or is still at work (the message comes back after its lease).
  it.each([
    ['over', NOW],
    ['live', NOW + 15 * 60_000],
  ])(
    'writes a carried expiry note not begun beside an e-mailed invitation of one delivery (lease %s)',
    async (_, until) => {
      const { store, deps, ats, context } = invitedCandidate({}, { reminders: undefined });
      const screen = context.connection.triggers[0] as (typeof context.connection.triggers)[number];
      context.connection.triggers.push({ ...screen, id: 'ai-tech' });
      // One delivery re-entered both triggers' invitations: the screen's was e-mailed, the other's claimed (carrying
      // its expiry's note) and nothing more; both holders stopped. The recruiter then moved the candidate on.
      const claimedBy = { state: 'claimed' as const, entryDeliveryId: 'evt-2', reinvitations: 1, leaseOwner: 'gone' };
      store.seed({
        jobs: [jobRecord({ state: 'ready', interviewId: 'int-2', triggerId: 'ai-tech', leaseOwner: undefined })],
        applications: [
          applicationRecord({ ...claimedBy, leaseUntil: NOW, steps: { inviteEmail: { startedAt: NOW } } }),
          applicationRecord({
            ...claimedBy,
            triggerId: 'ai-tech',
            interviewId: 'int-2',
            leaseUntil: until,
            priorExpiry: { expiredAt: NOW - DAY, round: 0 },
            steps: {},
          }),
        ],
      });
      ats.confirmStageEntered.mockResolvedValue({ confirmed: false, reason: 'the application is in another stage' });
      deps.now = () => NOW + 10 * 60_000;
      const back = { ...stageEnteredMessage({ deliveryId: 'evt-2' }), receivedAt: NOW };
      if (until > deps.now()) {
        // The e-mailed invitation is finished first; the note is left to its holder, the message back after the lease.
        await expect(handleStageEntered(back, deps)).rejects.toBeInstanceOf(ClaimHeldElsewhereError);
        expect((await store.getApplication(key))?.state).toBe('invited');
        expect(ats.postNote.mock.calls.map((call) => call[1].marker)).not.toContain(
          'ai-interview-expired:4401:ai-tech',
        );
        deps.now = () => until + 1;
      }
      await handleStageEntered(back, deps);

      const tech = await store.getApplication({ ...key, triggerId: 'ai-tech' });
      expect(tech?.steps.priorExpiryNote?.doneAt).toBeDefined();
      expect(tech?.leaseOwner).toBeUndefined();
      expect(ats.postNote.mock.calls.map((call) => call[1].marker)).toContain('ai-interview-expired:4401:ai-tech');
      expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
      // The screen's invitation, e-mailed already, is finished.
      expect((await store.getApplication(key))?.state).toBe('invited');
    },
  );

  it('writes the carried expiry note before telling the recruiter the re-entry could not be invited', async () => {
    // No usable e-mail address in the re-entry and no invite note: the new invitation cannot go out.
    const { store, deps, ats, reentry } = expiredOwingNote(
      { invite: { email: true, atsNote: false } },
      { name: 'Ana' },
    );
    const [result] = await handleStageEntered(reentry, deps);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'no-invite-channel' });
    const notes = () => ats.postNote.mock.calls.map((call) => [call[1].marker, call[1].body]);
    expect(notes()).toEqual([
      ['ai-interview-expired:4401:ai-screen', expect.stringContaining('not completed by 2026-11-21')],
      [expect.any(String), expect.stringContaining('no usable e-mail address')],
    ]);
    const record = await store.getApplication(key);
    expect(record).toMatchObject({ state: 'failed', reinvitations: 1 });
    expect(record?.steps.priorExpiryNote?.doneAt).toBeDefined();
    expect(record?.steps.status?.value).toBe('failed');
    // The same entry delivered again (its failed invitation claimed again) posts neither note twice.
    await handleStageEntered({ ...reentry, enqueueId: 'enq-again' }, deps);
    expect(notes()).toHaveLength(2);
  });

  it('invites nobody again for a stage entry learnt of before the expiry, however late it is delivered', async () => {
    const { store, deps } = invitedCandidate({ state: 'expired', expiredAt: NOW });
    // Another delivery of the entry that began the invitation (a resent webhook), received before the expiry.
    const late = { ...stageEnteredMessage({ deliveryId: 'evt-resent' }), receivedAt: NOW - 1_000 };
    const [result] = await handleStageEntered(late, deps);
    expect(result?.outcome).toBe('already-invited');
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(await store.getApplication(key)).toMatchObject({ state: 'expired', entryDeliveryId: 'evt-1' });
  });

  it('undoes the exit of a candidate back in the stage, inviting anew only one whose had expired', async () => {
    for (const leftFrom of ['invited', 'expired'] as const) {
      const { store, deps } = invitedCandidate({ state: 'left', leftFrom, exit: { kind: 'rejected', at: NOW } });
      const [result] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-back' }), deps);
      expect(result?.outcome).toBe(leftFrom === 'invited' ? 'already-invited' : 'invited');
      const after = await store.getApplication(key);
      expect(after?.state).toBe('invited');
      expect(after?.reinvitations ?? 0).toBe(leftFrom === 'invited' ? 0 : 1);
      expect(after?.exit).toBeUndefined();
      expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(leftFrom === 'invited' ? 0 : 1);
    }
  });

  it('shows "invited" again on the retry of an undone exit whose tag write got no answer', async () => {
    const left = { state: 'left', leftFrom: 'invited', exit: { kind: 'rejected', at: NOW } } as const;
    const status = { value: 'cancelled', rank: 2.5, startedAt: NOW };
    const { store, deps, setStatusTag } = invitedCandidate({
      ...left,
      steps: { inviteEmail: { doneAt: NOW }, status },
    });
    const lost = new AtsError(ATS_ERROR_CODES.unavailable, 'timed out after 10000 ms', { mayHaveSucceeded: true });
    setStatusTag.mockRejectedValueOnce(lost);
    const message = stageEnteredMessage({ deliveryId: 'evt-back' });
    await expect(handleStageEntered(message, deps)).rejects.toBe(lost);
    expect((await store.getApplication(key))?.state).toBe('invited');
    // The same message again: the candidate is found invited, and the status its first try owed is shown.
    const [result] = await handleStageEntered(message, deps, { receiveCount: 2 });
    expect(result?.outcome).toBe('already-invited');
    expect(setStatusTag).toHaveBeenCalledTimes(2);
    expectLastTag(setStatusTag, 'AI interview: invited');
  });

  it('leaves an expired invitation be where the trigger never re-invites', async () => {
    const { deps } = invitedCandidate({ state: 'expired', expiredAt: NOW }, { reinvite: 'never' });
    const [result] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-2' }), deps);
    expect(result?.outcome).toBe('already-invited');
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
  });
});

describe("Use case: an operator's resend and extension", () => {
  it('resends the link once per request, only to a candidate still in the process', async () => {
    const { store, deps, ats } = invitedCandidate();
    const resend = followUp('resend', { requestId: 'ops-1' });
    expect((await handleFollowUp(resend, deps)).outcome).toBe('resent');
    expect((await handleFollowUp({ ...resend, enqueueId: 'again' }, deps)).outcome).toBe('not-open');
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
    expect((await store.getApplication(key))?.steps.resend?.doneAt).toBe(NOW);
    ats.readStanding.mockResolvedValue({ active: false, exit: 'withdrawn' });
    expect((await handleFollowUp(followUp('resend', { requestId: 'ops-2' }), deps)).outcome).toBe('left');
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
  });

  it('names the job as the invitation did, and greets by no name it does not hold', async () => {
    const { store, deps } = invitedCandidate();
    const name = 'Backend Engineer – AI interview (ref acme-greenhouse/3301/ai-screen)';
    const job = { state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined } as const;
    store.seed({ jobs: [jobRecord({ ...job, interviewName: name, jobName: 'Backend Engineer' })] });
    expect((await handleFollowUp(followUp('resend', { requestId: 'ops-4' }), deps)).outcome).toBe('resent');
    expect(deps.mailer.sendInvite.mock.calls[0]?.[0]).toMatchObject({ jobName: 'Backend Engineer', candidateName: '' });
  });

  it('sends no link again to a candidate who took the interview, its report not given yet', async () => {
    const taken = { failureNoteReportUnreadable: { startedAt: NOW, doneAt: NOW } };
    const { deps } = invitedCandidate({ steps: { inviteEmail: { doneAt: NOW }, ...taken } });
    expect((await handleFollowUp(followUp('resend', { requestId: 'ops-5' }), deps)).outcome).toBe('not-open');
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
  });

  it('records a resend SES refused as refused, never as sent', async () => {
    const { store, deps } = invitedCandidate();
    deps.mailer.sendInvite.mockRejectedValueOnce(new Error('MessageRejected'));
    expect((await handleFollowUp(followUp('resend', { requestId: 'ops-3' }), deps)).outcome).toBe('failed');
    expect((await store.getApplication(key))?.steps.resend).toMatchObject({ outcome: 'refused', startedAt: NOW });
    expect((await store.getApplication(key))?.steps.resend?.doneAt).toBeUndefined();
  });

  it('extends the expiry once per request, and opens an expired invitation again', async () => {
    const { store, deps, setStatusTag } = invitedCandidate(
      { state: 'expired', expiredAt: NOW },
      { reminders: undefined },
    );
    const extend = followUp('extend', { requestId: 'ops-3', days: 5 });
    expect((await handleFollowUp(extend, deps)).outcome).toBe('extended');
    expect((await handleFollowUp(extend, deps)).outcome).toBe('not-open');
    // Five days after the later of now and the invitation's own expiry (seven days after it was sent).
    expect(await store.getApplication(key)).toMatchObject({ state: 'invited', extendedUntil: NOW + 12 * DAY });
    expectLastTag(setStatusTag, 'AI interview: invited');
    // Due at 7 + 5 days, not 7.
    deps.now = () => NOW + 8 * DAY;
    expect((await handleFollowUp(followUp('expire'), deps)).outcome).toBe('not-due');
    deps.now = () => NOW + 13 * DAY;
    expect((await handleFollowUp(followUp('expire'), deps)).outcome).toBe('expired');
  });
});

describe('Use case: an invitation that cannot go out is told in the ATS', () => {
  it('notes a missing e-mail once, however often the message is retried', async () => {
    const { deps, ats, context } = invitedCandidate();
    const store = new MemoryMappingStore().seed({
      jobs: [jobRecord({ state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined })],
    });
    const noEmail = stageEnteredMessage({ candidate: { name: 'Ana' } });
    const run = { ...deps, store, contextFor: async () => context };
    for (let i = 0; i < 3; i++) await handleStageEntered(noEmail, run);
    const failureNotes = ats.postNote.mock.calls.filter((c) => String(c[1].body).includes('not sent'));
    expect(failureNotes).toHaveLength(1);
    expect(failureNotes[0]?.[1].body).toContain('no usable e-mail address');
    expect(failureNotes[0]?.[1].body).toContain('move them into the stage again');
  });

  it('notes the service refusing the interview once, with the status "failed", however often retried', async () => {
    const { deps, ats, context, interviews, setStatusTag } = invitedCandidate();
    const refused = new InterviewServiceError(ERROR_CODES.invalidRequest, false, 'custom_question_list: too long');
    interviews.createInterview.mockRejectedValue(refused);
    // The job's interview is not known in this environment either: it is created, and refused.
    clearInterviewCache();
    const store = new MemoryMappingStore();
    let clock = NOW;
    // Each retry comes after the job's lease of the one before ran out (a minute).
    const run = { ...deps, store, contextFor: async () => context, now: () => clock };
    for (let i = 0; i < 3; i++) {
      expect((await handleStageEntered(stageEnteredMessage(), run))[0]?.outcome).not.toBe('invited');
      clock += 5 * 60_000;
    }
    const notes = ats.postNote.mock.calls.filter((c) => String(c[1].body).includes('not sent'));
    expect(notes).toHaveLength(1);
    expect(notes[0]?.[1].body).toContain(
      'the interview service refused the interview or the invitation (invalid-request)',
    );
    expectLastTag(setStatusTag, 'AI interview: failed');
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
  });

  it('posts the failure note once when its first post got no answer and landed: the retry finds it', async () => {
    const { deps, ats, context, interviews, setStatusTag } = invitedCandidate();
    interviews.createInterview.mockRejectedValue(new InterviewServiceError(ERROR_CODES.invalidRequest, false, 'no'));
    const timeout = new AtsError('ats-unavailable', 'POST notes timed out', { mayHaveSucceeded: true });
    // The ATS was still writing the note when its post timed out: it is there for any look after that.
    ats.postNote.mockImplementationOnce(async () => {
      ats.findNote.mockResolvedValue({ noteId: 'note-late' });
      throw timeout;
    });
    clearInterviewCache();
    const store = new MemoryMappingStore();
    let clock = NOW;
    const run = { ...deps, store, contextFor: async () => context, now: () => clock };
    for (let i = 0; i < 3; i++) {
      await handleStageEntered(stageEnteredMessage(), run).catch((error: unknown) => expect(error).toBe(timeout));
      clock += 5 * 60_000;
    }
    expect(ats.postNote).toHaveBeenCalledOnce();
    expectLastTag(setStatusTag, 'AI interview: failed');
    const steps = (await store.getApplication(key))?.steps ?? {};
    expect(steps.failureNoteServiceRefused?.doneAt).toBeDefined();
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
  });

  it("posts the refused e-mail's note once its first post got no answer and did not land, on a retry", async () => {
    const { deps, ats, context } = invitedCandidate();
    const { MailerError } = await import('../../../shared/mail/ses.mailer');
    deps.mailer.sendInvite.mockRejectedValue(new MailerError('MessageRejected', true, new Error('not verified')));
    const timeout = new AtsError('ats-unavailable', 'POST notes timed out', { mayHaveSucceeded: true });
    const failureNote = (body: unknown) => String(body).includes('mail service refused');
    let timedOut = false;
    ats.postNote.mockImplementation(async (_target: unknown, note: { body: string }) => {
      if (failureNote(note.body) && !timedOut) {
        timedOut = true;
        throw timeout;
      }
      return { noteId: 'note-new' };
    });
    const store = new MemoryMappingStore().seed({
      jobs: [jobRecord({ state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined })],
    });
    let clock = NOW;
    const run = { ...deps, store, contextFor: async () => context, now: () => clock };
    for (let i = 0; i < 3; i++) {
      await handleStageEntered(stageEnteredMessage(), run).catch((error: unknown) => expect(error).toBe(timeout));
      clock += 5 * 60_000;
    }
    const posted = ats.postNote.mock.calls.filter(([, note]) => failureNote(note.body));
    expect(posted).toHaveLength(2);
    expect((await store.getApplication(key))?.steps.failureNoteEmailRefused?.doneAt).toBeDefined();
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
  });

  it('ends the invitation on a retry no longer owing the "no usable e-mail" note (an address came)', async () => {
    const { deps, ats, context } = invitedCandidate();
    // No status tags: the invite note, or the step after it, ends the invitation.
    Object.assign(ats, { setStatusTag: undefined });
    const timeout = new AtsError('ats-unavailable', 'POST notes timed out', { mayHaveSucceeded: true });
    ats.postNote.mockImplementation(async (_target: unknown, note: { body: string }) => {
      if (note.body.includes('no usable e-mail')) throw timeout;
      return { noteId: 'note-new' };
    });
    const store = new MemoryMappingStore().seed({
      jobs: [jobRecord({ state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined })],
    });
    const noEmail = stageEnteredMessage({ candidate: { name: 'Ana' } });
    await expect(handleStageEntered(noEmail, { ...deps, store, contextFor: async () => context })).rejects.toBe(
      timeout,
    );
    // The recruiter added the address; the ATS's read of the stage change, on the retry after the lease, carries it.
    ats.confirmStageEntered.mockImplementation(async (event) =>
      confirmAsParsed({ ...event, candidate: { name: 'Ana', email: 'ana@example.com' } }),
    );
    const later = { ...deps, store, contextFor: async () => context, now: () => NOW + 10 * 60_000 };
    expect((await handleStageEntered(noEmail, later))[0]?.outcome).toBe('invited');
    expect((await store.getApplication(key))?.state).toBe('invited');
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
  });

  it("brings the stage change back when the e-mail's failure note meets a refused key; posts it, fixed", async () => {
    const { deps, ats, context } = invitedCandidate();
    const { MailerError } = await import('../../../shared/mail/ses.mailer');
    deps.mailer.sendInvite.mockRejectedValue(new MailerError('MessageRejected', true, new Error('not verified')));
    const keyRefused = new AtsError('ats-unauthorized', 'POST notes: 401', { status: 401 });
    const failureNote = (body: unknown) => String(body).includes('mail service refused');
    ats.postNote.mockImplementation(async (_target: unknown, note: { body: string }) => {
      if (failureNote(note.body)) throw keyRefused;
      return { noteId: 'note-new' };
    });
    const store = new MemoryMappingStore().seed({
      jobs: [jobRecord({ state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined })],
    });
    const run = { ...deps, store, contextFor: async () => context };
    await expect(handleStageEntered(stageEnteredMessage(), run)).rejects.toBe(keyRefused);
    expect((await store.getApplication(key))?.state).toBe('claimed');
    // The key fixed, the message redriven: the note is posted once, and the invitation ends.
    ats.postNote.mockResolvedValue({ noteId: 'note-new' });
    expect((await handleStageEntered(stageEnteredMessage(), run))[0]?.outcome).toBe('invited');
    expect(ats.postNote.mock.calls.filter(([, note]) => failureNote(note.body))).toHaveLength(2);
    expect((await store.getApplication(key))?.steps.failureNoteEmailRefused?.doneAt).toBeDefined();
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
  });

  it('shows "failed" when the ATS refuses the failure note for good; that note is not tried again', async () => {
    const { deps, ats, context, interviews, setStatusTag } = invitedCandidate();
    interviews.createInterview.mockRejectedValue(new InterviewServiceError(ERROR_CODES.invalidRequest, false, 'no'));
    ats.postNote.mockRejectedValue(new AtsError('ats-forbidden', 'POST notes: 403', { status: 403 }));
    clearInterviewCache();
    const store = new MemoryMappingStore();
    let clock = NOW;
    const run = { ...deps, store, contextFor: async () => context, now: () => clock };
    for (let i = 0; i < 2; i++) {
      await handleStageEntered(stageEnteredMessage(), run);
      clock += 5 * 60_000;
    }
    expectLastTag(setStatusTag, 'AI interview: failed');
    expect(ats.postNote).toHaveBeenCalledOnce();
    const steps = (await store.getApplication(key))?.steps ?? {};
    expect(Object.values(steps)).toContainEqual(
      expect.objectContaining({ outcome: 'refused', value: 'ats-forbidden' }),
    );
  });

  it.each([
    ['the service e-mailed it', 'service', 0, 'e-mailed by the interview service; its link is not available here'],
    ['the connector was to e-mail it', 'connector', 0, 'not sent: the interview service refused'],
    // A later invitation's start may find the one before, e-mailed then: nothing says this one reached them.
    ['a later invitation was begun', 'service', 1, 'not sent: the interview service refused'],
  ] as const)(
    'tells the recruiter what a refusal of the link found again means, once however often retried, where %s',
    async (_case, emailedBy, reinvitations, said) => {
      const { store, deps, ats, service, setStatusTag } = begunAtService(emailedBy);
      // A resume while the candidate is still in the stage.
      ats.confirmStageEntered.mockImplementation(confirmAsParsed);
      ats.readStanding.mockResolvedValue({ active: true, stageId: '9001' });
      const begun = (await store.getApplication(key)) as ApplicationRecord;
      const asked = emailedBy === 'service' ? { value: 'e-mailed by the service' } : {};
      store.seed({
        applications: [{ ...begun, reinvitations, steps: { serviceInvite: { startedAt: NOW, ...asked } } }],
      });
      const refused = new InterviewServiceError(ERROR_CODES.invalidRequest, false, 'candidate_id: not allowed');
      service.inviteCandidate.mockRejectedValue(refused);
      for (let i = 0; i < 3; i++) await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1' }), deps);
      // Never invited anew: only asked for the link of the one found, without an e-mail.
      expect(service.inviteCandidate.mock.calls.every(([invite]) => invite.disableEmailNotification)).toBe(true);
      expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
      const notes = ats.postNote.mock.calls.map(([, note]) => String(note.body));
      expect(notes).toHaveLength(1);
      expect(notes[0]).toContain(`AI interview invitation ${said}`);
      expect(notes[0]).toContain('(invalid-request)');
      expect((await store.getApplication(key))?.state).toBe('failed');
      const tags = setStatusTag.mock.calls.map(([, tag]) => tag);
      expect(tags.includes('AI interview: failed')).toBe(said.startsWith('not sent'));
      // The candidate who takes the interview all the same has their report written back, the failure over.
      expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'written-back' });
      const after = await store.getApplication(key);
      expect(after).toMatchObject({ state: 'written_back', reportId: reportCreatedMessage().reportId });
      expect(after?.failureReason).toBeUndefined();
    },
  );
});
