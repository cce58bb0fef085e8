import { describe, expect, it, vi } from 'vitest';
import { AtsError } from '../../../shared/ats/errors';
import { handleReportCreated } from '../../../shared/pipeline/report-created.use-case';
import { invitedCandidate } from '../../helpers/invited-candidate';
import { reportCreatedMessage } from '../../helpers/pipeline-records';

const key = { connectionId: 'acme-greenhouse', atsApplicationId: '4401', triggerId: 'ai-screen' };

describe('Use case: the ATS refuses one channel of a write-back for good', () => {
  it('flags the candidate for review and says so in a note when the ATS refuses the stage move', async () => {
    const { store, deps, ats, setStatusTag } = invitedCandidate();
    const refusal = new AtsError('ats-invalid-request', 'no stage named "Hiring Manager Review" in job 3301');
    ats.moveToStage.mockRejectedValue(refusal);
    const result = await handleReportCreated(reportCreatedMessage(), deps);
    expect(result).toMatchObject({ outcome: 'written-back', advanced: false, flagged: true });
    // The report note first, then one saying the move was refused and what to do.
    const bodies = ats.postNote.mock.calls.map((c) => String(c[1].body));
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toContain('stage not moved: the ATS refused the stage move the result called for');
    expect(bodies[1]).toContain('(ats-invalid-request)');
    expect(setStatusTag).toHaveBeenLastCalledWith(
      expect.anything(),
      'AI interview: flagged for review',
      expect.anything(),
      undefined,
    );
    const written = await store.getApplication(key);
    expect(written?.state).toBe('written_back');
    expect(written?.steps.stageMove).toMatchObject({ outcome: 'refused', value: 'ats-invalid-request' });
    expect(deps.logger.error).toHaveBeenCalledWith(
      'report: the ATS refused the stage move; the candidate is flagged for review',
      expect.objectContaining({ code: 'ats-invalid-request' }),
    );
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
    expect(setStatusTag).toHaveBeenLastCalledWith(
      expect.anything(),
      'AI interview: advanced',
      expect.anything(),
      undefined,
    );
    const written = await store.getApplication(key);
    expect(written?.steps.reportLink).toMatchObject({ outcome: 'refused', value: 'ats-forbidden' });
    // The same report again attaches nothing more.
    await handleReportCreated(reportCreatedMessage(), deps);
    expect(attachReportLink).toHaveBeenCalledOnce();
  });

  it('ends a later copy of a report whose write-back was refused for good: it does not keep coming back', async () => {
    const { store, deps, ats } = invitedCandidate();
    ats.postNote.mockRejectedValue(new AtsError('ats-invalid-request', 'POST notes: 422', { status: 422 }));
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'failed' });
    expect((await store.getApplication(key))?.state).toBe('failed');
    // A copy delivered later (a webhook resent, a redrive): acknowledged, nothing tried again.
    const copy = await handleReportCreated(reportCreatedMessage({ enqueueId: 'enq-copy' }), deps);
    expect(copy).toMatchObject({ outcome: 'already-failed', reason: expect.stringContaining('ops -- failed') });
    expect(ats.postNote).toHaveBeenCalledOnce();
  });
});
