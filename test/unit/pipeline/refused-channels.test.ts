import { describe, expect, it, type Mock, vi } from 'vitest';
import { AtsError } from '../../../shared/ats/errors';
import { handleReportCreated } from '../../../shared/pipeline/report-created.use-case';
import { handleStageEntered } from '../../../shared/pipeline/stage-entered.use-case';
import { invitedCandidate } from '../../helpers/invited-candidate';
import { NOW, reportCreatedMessage, stageEnteredMessage } from '../../helpers/pipeline-records';

const key = { connectionId: 'acme-greenhouse', atsApplicationId: '4401', triggerId: 'ai-screen' };
/** The write-back ended, with `step` recorded refused with `code`, and an ERROR line saying so. */
async function expectWrittenBackRefused(
  { store, deps }: ReturnType<typeof invitedCandidate>,
  step: 'stageMove' | 'reportNote',
  code: string,
) {
  const written = await store.getApplication(key);
  expect(written?.state).toBe('written_back');
  expect(written?.steps[step]).toMatchObject({ outcome: 'refused', value: code });
  const line = expect.objectContaining({ atsApplicationId: key.atsApplicationId, code });
  expect(deps.logger.error).toHaveBeenCalledWith(expect.stringContaining('the ATS refused the'), line);
}

/** The status tag shown last. */
const lastTag = (setStatusTag: Mock) => setStatusTag.mock.calls.at(-1)?.[1];

describe('Use case: the ATS refuses one channel of a write-back for good', () => {
  it('flags the candidate for review and says so in a note when the ATS refuses the stage move', async () => {
    const candidate = invitedCandidate();
    const { deps, ats, setStatusTag } = candidate;
    const refusal = new AtsError('ats-invalid-request', 'no stage named "Hiring Manager Review" in job 3301');
    ats.moveToStage.mockRejectedValue(refusal);
    const result = await handleReportCreated(reportCreatedMessage(), deps);
    expect(result).toMatchObject({ outcome: 'written-back', advanced: false, flagged: true });
    // The report note first, then one saying the move was refused and what to do.
    const bodies = ats.postNote.mock.calls.map((c) => String(c[1].body));
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toContain('stage not moved: the ATS refused the stage move the result called for');
    expect(bodies[1]).toContain('(ats-invalid-request)');
    expect(lastTag(setStatusTag)).toBe('AI interview: flagged for review');
    await expectWrittenBackRefused(candidate, 'stageMove', 'ats-invalid-request');
    // The same report again: nothing more is posted or moved.
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'already-written-back' });
    expect([ats.postNote.mock.calls.length, ats.moveToStage.mock.calls.length]).toEqual([2, 1]);
  });

  it('writes the report back when the ATS refuses its link field for good: the note carries the link', async () => {
    const { store, deps, ats, setStatusTag } = invitedCandidate();
    const attachReportLink = vi.fn().mockRejectedValue(new AtsError('ats-forbidden', 'addLinks: 403', { status: 403 }));
    Object.assign(ats, { attachReportLink });
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'written-back' });
    expect(ats.postNote).toHaveBeenCalledOnce();
    expect(ats.moveToStage).toHaveBeenCalledOnce();
    expect(lastTag(setStatusTag)).toBe('AI interview: advanced');
    const written = await store.getApplication(key);
    expect(written?.steps.reportLink).toMatchObject({ outcome: 'refused', value: 'ats-forbidden' });
    // The same report again attaches nothing more.
    await handleReportCreated(reportCreatedMessage(), deps);
    expect(attachReportLink).toHaveBeenCalledOnce();
  });

  it('ends a later copy of a report whose write-back was refused for good: it does not keep coming back', async () => {
    const { store, deps, ats } = invitedCandidate();
    // The move refused after a try whose answer was lost (it may have landed): the write-back fails.
    const refusal = new AtsError('ats-invalid-request', 'PUT move: 422', { status: 422, mayHaveSucceeded: true });
    ats.moveToStage.mockRejectedValue(refusal);
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'failed' });
    expect((await store.getApplication(key))?.state).toBe('failed');
    // A copy delivered later (a webhook resent, a redrive): acknowledged, nothing tried again.
    const copy = await handleReportCreated(reportCreatedMessage({ enqueueId: 'enq-copy' }), deps);
    expect(copy).toMatchObject({ outcome: 'already-failed', reason: expect.stringContaining('ops -- failed') });
    expect([ats.moveToStage.mock.calls.length, ats.postNote.mock.calls.length]).toEqual([1, 1]);
  });

  it('writes back when the ATS refuses the look before the move for good: the move looks itself', async () => {
    const { store, deps, ats, setStatusTag } = invitedCandidate();
    ats.readStanding.mockRejectedValue(new AtsError('ats-forbidden', 'GET application: 403', { status: 403 }));
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'written-back' });
    expect([ats.postNote.mock.calls.length, ats.moveToStage.mock.calls.length]).toEqual([1, 1]);
    expect(lastTag(setStatusTag)).toBe('AI interview: advanced');
    const written = await store.getApplication(key);
    expect([written?.state, written?.exit]).toEqual(['written_back', undefined]);
  });

  it('fails the write-back, nothing written, when the ATS refuses the key at the look before the move', async () => {
    const { store, deps, ats } = invitedCandidate();
    ats.readStanding.mockRejectedValue(new AtsError('ats-unauthorized', 'GET application: 401', { status: 401 }));
    await handleReportCreated(reportCreatedMessage(), deps).catch(() => undefined);
    expect([ats.postNote.mock.calls.length, ats.moveToStage.mock.calls.length]).toEqual([0, 0]);
    expect((await store.getApplication(key))?.state).not.toBe('written_back');
  });

  it('attaches the file, moves and shows the status when the ATS refuses the report note for good', async () => {
    const candidate = invitedCandidate();
    const { deps, ats, setStatusTag } = candidate;
    ats.postNote.mockRejectedValue(new AtsError('ats-forbidden', 'POST notes: 403', { status: 403 }));
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'written-back' });
    expect(ats.moveToStage).toHaveBeenCalledOnce();
    expect(lastTag(setStatusTag)).toBe('AI interview: advanced');
    await expectWrittenBackRefused(candidate, 'reportNote', 'ats-forbidden');
  });

  it('goes on when a resumed write-back may not look its note up: the note is not posted, the rest done', async () => {
    const candidate = invitedCandidate({
      state: 'completed',
      reportId: 'rep-1',
      leaseOwner: 'stopped',
      leaseUntil: NOW - 1,
      writeBackAttempts: 1,
    });
    const { store, ats } = candidate;
    ats.findNote.mockRejectedValue(new AtsError('ats-forbidden', 'GET activity_feed: 403', { status: 403 }));
    expect(await handleReportCreated(reportCreatedMessage(), candidate.deps)).toMatchObject({
      outcome: 'written-back',
    });
    expect([ats.postNote.mock.calls.length, ats.moveToStage.mock.calls.length]).toEqual([0, 1]);
    expect((await store.getApplication(key))?.steps.reportNote).toMatchObject({ outcome: 'refused' });
  });
});

describe('Use case: the ATS refuses the invite note for good after the e-mail went out', () => {
  const fresh = (resumed: boolean) => {
    const candidate = invitedCandidate(
      resumed
        ? { state: 'claimed', leaseOwner: 'gone', leaseUntil: NOW - 1, steps: { inviteEmail: { doneAt: NOW } } }
        : { state: 'claimed', leaseOwner: 'gone', leaseUntil: NOW - 1, steps: {} },
    );
    candidate.deps.now = () => NOW + 60_000;
    return candidate;
  };

  it.each([
    ['its post', false],
    ['its look-up by a worker taking the claim over', true],
  ] as const)('records the note refused (%s) and goes on: invited, its status shown', async (_what, resumed) => {
    const candidate = fresh(resumed);
    const { deps, ats, store, setStatusTag } = candidate;
    const refusal = new AtsError('ats-forbidden', 'POST notes: 403', { status: 403 });
    if (resumed) ats.findNote.mockRejectedValue(refusal);
    else ats.postNote.mockRejectedValue(refusal);
    const [result] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-2' }), deps);
    expect(result).toMatchObject({ outcome: 'invited' });
    const invited = await store.getApplication(key);
    expect(invited?.state).toBe('invited');
    expect(invited?.steps.inviteNote).toMatchObject({ outcome: 'refused', value: 'ats-forbidden' });
    expect(lastTag(setStatusTag)).toBe('AI interview: invited');
    expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(resumed ? 0 : 1);
    const line = expect.objectContaining({ code: 'ats-forbidden' });
    expect(deps.logger.error).toHaveBeenCalledWith(expect.stringContaining('refused the invite note'), line);
    // Nothing is tried again: the same stage change finds the candidate invited.
    const again = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-2' }), deps);
    expect(again[0]?.outcome).not.toBe('invited');
    expect(ats.postNote).toHaveBeenCalledTimes(resumed ? 0 : 1);
  });

  it('records the note uncertain when a second post is refused after the first got a 5xx: it may be in', async () => {
    const { deps, ats, store } = fresh(false);
    ats.postNote
      .mockRejectedValueOnce(
        new AtsError('ats-unavailable', 'POST notes: 500', { status: 500, mayHaveSucceeded: true }),
      )
      .mockRejectedValueOnce(new AtsError('ats-forbidden', 'POST notes: 403', { status: 403 }));
    expect((await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-2' }), deps))[0]).toMatchObject({
      outcome: 'invited',
    });
    const invited = await store.getApplication(key);
    expect(invited?.steps.inviteNote).toMatchObject({ outcome: 'uncertain', value: 'ats-forbidden' });
    expect(ats.postNote).toHaveBeenCalledTimes(2);
  });
});
