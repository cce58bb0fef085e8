import { describe, expect, it } from 'vitest';
import { ForbiddenError, RateLimitedError, UnavailableError } from '../../../shared/interview-service';
import { handleReportCreated } from '../../../shared/pipeline';
import { dueFollowUp } from '../../../shared/pipeline/follow-up-due';
import { REPORT_UNREADABLE_STEP } from '../../../shared/pipeline/report-unreadable';
import type { ReportCreatedMessage } from '../../../shared/queue';
import { connectionDocument } from '../../helpers/connections';
import { INVITED_APPLICATION, MemoryMappingStore, storeWithInvitation } from '../../helpers/memory-store';
import { dependencies, fakeContext } from '../../helpers/pipeline-fakes';
import { applicationRecord, NOW, reportCreatedMessage } from '../../helpers/pipeline-records';

// A candidate took the interview, and the service will not give its report (its key refused, or no answer): the
// recruiter reads so in the ATS once, the candidate is reminded no more, and the report is written back once given.
const APPLICATION = INVITED_APPLICATION;
const FOLLOW_UPS = { reminders: { max: 2, afterHours: 24 }, expireAfterDays: 7 };
const DAY_MS = 86_400_000;

async function setUp(document = connectionDocument(), data: Record<string, unknown> = {}) {
  const store = await storeWithInvitation(NOW, data);
  const { context, ats, interviews } = fakeContext(document);
  const deps = dependencies(store, context);
  const run = (receiveCount: number, message: Partial<ReportCreatedMessage> = { candidateEmail: 'Ana@Example.com' }) =>
    // A retry comes after the failed try's lease ran out (the queue's visibility timeout is longer than the lease).
    handleReportCreated(
      reportCreatedMessage(message),
      { ...deps, now: () => NOW + (receiveCount - 1) * 120_000 },
      { receiveCount },
    );
  const record = async () => (await store.getApplication(APPLICATION))!;
  const notes = () => ats.postNote.mock.calls.map(([, note]) => note as { body: string; marker: string });
  return { store, ats, interviews, deps, run, record, notes };
}

describe('Write-back: a report the interview service will not give', () => {
  it('tells the recruiter at once on a refusal, once, and stops the reminders and the expiry', async () => {
    const { interviews, run, record, notes } = await setUp();
    expect(dueFollowUp(FOLLOW_UPS, await record(), NOW + DAY_MS)).toEqual({ action: 'remind', reminder: 0 });
    interviews.listReports.mockRejectedValue(new ForbiddenError('key expired', { status: 403 }));
    await expect(run(1)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(run(2)).rejects.toMatchObject({ code: 'forbidden' });
    expect(notes()).toHaveLength(1);
    expect(notes()[0]?.marker).toContain('ai-interview-failed:4401:ai-screen:report-unreadable');
    expect(notes()[0]?.body).toMatch(/^AI interview taken; its report is not here yet: .* \(forbidden\)\./);
    expect(notes()[0]?.body).toContain('no reminder or expiry follows');
    expect((await record()).steps[REPORT_UNREADABLE_STEP]).toMatchObject({ startedAt: NOW, doneAt: NOW });
    expect(dueFollowUp(FOLLOW_UPS, await record(), NOW + DAY_MS)).toBeUndefined();
    expect(dueFollowUp(FOLLOW_UPS, await record(), NOW + 30 * DAY_MS)).toBeUndefined();
  });

  it('waits out a few receives of no answer before telling, and a rate limit never tells', async () => {
    const { interviews, run, notes } = await setUp();
    interviews.listReports.mockRejectedValue(new RateLimitedError('slow down', { status: 429 }));
    await expect(run(8)).rejects.toMatchObject({ code: 'rate-limited' });
    expect(notes()).toHaveLength(0);
    interviews.listReports.mockRejectedValue(new UnavailableError('502', { status: 502 }));
    for (const receive of [1, 2, 3]) await expect(run(receive)).rejects.toMatchObject({ code: 'unavailable' });
    expect(notes()).toHaveLength(0);
    await expect(run(4)).rejects.toMatchObject({ code: 'unavailable' });
    expect(notes()).toHaveLength(1);
    expect(notes()[0]?.body).toContain('(unavailable)');
  });

  it('writes the report back as any other once the service gives it', async () => {
    const { interviews, run, record, notes } = await setUp();
    interviews.listReports.mockRejectedValueOnce(new ForbiddenError('key expired', { status: 403 }));
    await expect(run(1)).rejects.toMatchObject({ code: 'forbidden' });
    expect(await run(2)).toMatchObject({ outcome: 'written-back' });
    expect(notes().map((n) => n.marker)).toEqual([
      expect.stringContaining('report-unreadable'),
      'ai-interview-report:rep-1',
    ]);
    expect((await record()).state).toBe('written_back');
  });

  it("finds a per-candidate invitation by the service's candidate id, with no e-mail in the message", async () => {
    const perCandidate = connectionDocument({
      interviewService: { baseUrl: 'https://api.interviews.example.com', invites: { mode: 'per-candidate' } },
    });
    const { interviews, run, notes } = await setUp(perCandidate, { serviceCandidateId: 'cand-1' });
    interviews.listReports.mockRejectedValue(new ForbiddenError('no permission', { status: 403 }));
    await expect(run(1, {})).rejects.toMatchObject({ code: 'forbidden' });
    expect(notes()).toHaveLength(1);
  });

  it('tells nothing where no application of this interview is found, and the message still fails', async () => {
    const { interviews, run, notes, deps } = await setUp();
    interviews.listReports.mockRejectedValue(new ForbiddenError('key expired', { status: 403 }));
    await expect(run(1, {})).rejects.toMatchObject({ code: 'forbidden' });
    await expect(run(1, { candidateEmail: 'someone@example.com' })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(run(1, { candidateEmail: 'ana@example.com', interviewId: 'int-2' })).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect(notes()).toHaveLength(0);
    expect(deps.logger.warn).not.toHaveBeenCalled();
  });

  it('a note the ATS did not take is looked for, then posted, on the next try; no reminder meanwhile', async () => {
    const { ats, interviews, run, record } = await setUp();
    interviews.listReports.mockRejectedValue(new ForbiddenError('key expired', { status: 403 }));
    ats.postNote.mockRejectedValue(Object.assign(new Error('no answer'), { retryable: true }));
    await expect(run(1)).rejects.toMatchObject({ code: 'forbidden' });
    // Begun and not done: the next try looks for the note by its marker before posting again.
    expect((await record()).steps[REPORT_UNREADABLE_STEP]?.doneAt).toBeUndefined();
    expect(dueFollowUp(FOLLOW_UPS, await record(), NOW + DAY_MS)).toBeUndefined();
    ats.postNote.mockResolvedValue({ noteId: 'n' });
    ats.findNote.mockResolvedValue(undefined);
    await expect(run(2)).rejects.toMatchObject({ code: 'forbidden' });
    expect((await record()).steps[REPORT_UNREADABLE_STEP]?.doneAt).toBe(NOW + 120_000);
    expect(ats.findNote).toHaveBeenCalledTimes(1);
    expect(ats.postNote).toHaveBeenCalledTimes(2);
  });

  it('posts one note when two messages of the application fail at once', async () => {
    const { interviews, run, notes } = await setUp();
    interviews.listReports.mockRejectedValue(new ForbiddenError('key expired', { status: 403 }));
    const runs = await Promise.allSettled([run(1), run(1), run(1, { reportId: 'rep-2' })]);
    expect(runs.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(notes()).toHaveLength(1);
  });

  it('tells nothing of an invitation that failed: moved into the stage again, it is reminded as before', async () => {
    const { store, interviews, run, record, notes } = await setUp();
    store.seed({ applications: [{ ...(await record()), state: 'failed' }] });
    interviews.listReports.mockRejectedValue(new ForbiddenError('key expired', { status: 403 }));
    await expect(run(1)).rejects.toMatchObject({ code: 'forbidden' });
    expect(notes()).toHaveLength(0);
    expect((await record()).steps[REPORT_UNREADABLE_STEP]).toBeUndefined();
  });

  it('tells one whose invitation failed only as the service e-mailed it, its link withheld', async () => {
    const { store, interviews, run, record, notes } = await setUp();
    const withheld = { failureNoteLinkWithheld: { startedAt: NOW, doneAt: NOW } };
    store.seed({ applications: [{ ...(await record()), state: 'failed', steps: withheld }] });
    interviews.listReports.mockRejectedValue(new ForbiddenError('key expired', { status: 403 }));
    await expect(run(1)).rejects.toMatchObject({ code: 'forbidden' });
    expect(notes().map((n) => n.marker)).toEqual([expect.stringContaining(':report-unreadable')]);
  });

  it('finds the application a return carried, with no e-mail in the message', async () => {
    const { interviews, run, notes } = await setUp();
    interviews.listReports.mockRejectedValue(new ForbiddenError('key expired', { status: 403 }));
    await expect(run(1, { foundApplication: { atsApplicationId: '4401', triggerId: 'ai-screen' } })).rejects.toThrow();
    expect(notes()).toHaveLength(1);
  });

  it("finds an operator's match among the application's triggers by the report's interview", async () => {
    const { deps, interviews, run, record, notes } = await setUp();
    // The index lists the application's records by trigger: another trigger's, of another interview, comes first.
    const other = applicationRecord({ triggerId: 'a-first-trigger', interviewId: 'int-other' });
    deps.store = new MemoryMappingStore().seed({ applications: [other, await record()] });
    interviews.listReports.mockRejectedValue(new ForbiddenError('key expired', { status: 403 }));
    await expect(run(1, { atsApplicationId: '4401' })).rejects.toMatchObject({ code: 'forbidden' });
    expect(notes()).toHaveLength(1);
    expect(notes()[0]?.marker).toContain(':ai-screen:report-unreadable');
  });
});
