import { describe, expect, it, vi } from 'vitest';
import { clearInterviewCache, handleReportCreated, handleStageEntered } from '../../../shared/pipeline';
import { connectionDocument } from '../../helpers/connections';
import { dependencies, fakeContext, fakeStore, readyToInvite } from '../../helpers/pipeline-fakes';
import { applicationRecord, NOW, reportCreatedMessage, stageEnteredMessage } from '../../helpers/pipeline-records';

const CANDIDATE_LINK = 'https://i.example.com/int-1?cid=cand-9';

const perCandidateDocument = (emailedBy: 'connector' | 'service') =>
  connectionDocument({
    interviewService: { baseUrl: 'https://api.interviews.example.com', invites: { mode: 'per-candidate', emailedBy } },
  });

/** A connection in per-candidate mode, its interview ready, and a fresh claim of application 4401. */
function perCandidate(emailedBy: 'connector' | 'service', claimed = applicationRecord({ state: 'claimed' })) {
  clearInterviewCache();
  const store = fakeStore();
  const { context, ats, interviews } = fakeContext(perCandidateDocument(emailedBy));
  const inviteCandidate = vi.fn().mockResolvedValue({ candidate_id: 'cand-9', invite_url: CANDIDATE_LINK });
  const findInvitation = vi.fn().mockResolvedValue(undefined);
  Object.assign(interviews, { inviteCandidate, findInvitation });
  return { store, context, ats, inviteCandidate, findInvitation, deps: readyToInvite(store, context, claimed) };
}

describe('Use case: per-candidate invitations', () => {
  it("asks the service for the candidate's own link, records its id, and e-mails and notes that link", async () => {
    const { store, ats, inviteCandidate, deps } = perCandidate('connector');
    const [result] = await handleStageEntered(stageEnteredMessage(), deps);
    expect(result).toMatchObject({ outcome: 'invited' });
    expect(inviteCandidate).toHaveBeenCalledTimes(1);
    expect(inviteCandidate.mock.calls[0]![0]).toMatchObject({
      interviewId: 'int-1',
      email: 'Ana@Example.com',
      disableEmailNotification: true,
    });
    expect(deps.mailer.sendInvite).toHaveBeenCalledWith(expect.objectContaining({ inviteUrl: CANDIDATE_LINK }));
    expect(ats.postNote.mock.calls[0]![1].body).toContain(CANDIDATE_LINK);
    // The start is recorded before the call, the invitation after it.
    const steps = store.recordStep.mock.calls.map(([, write]) => write);
    expect(steps[0]).toMatchObject({ step: { name: 'serviceInvite', record: { startedAt: NOW } } });
    expect(steps[1]).toMatchObject({
      step: { name: 'serviceInvite', record: { doneAt: NOW } },
      data: { serviceCandidateId: 'cand-9', candidateInviteUrl: CANDIDATE_LINK },
    });
    expect(steps.at(-1)).toMatchObject({ finish: 'invited' });
  });

  it('leaves the e-mail to the service when it sends it: no SES, the note still carries the link', async () => {
    const { store, ats, inviteCandidate, deps } = perCandidate('service');
    await handleStageEntered(stageEnteredMessage(), deps);
    expect(inviteCandidate.mock.calls[0]![0]).toMatchObject({ disableEmailNotification: false });
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(ats.postNote.mock.calls[0]![1].body).toContain(CANDIDATE_LINK);
    // Its record says the service was to e-mail it: what a message finishing it later reads.
    const done = store.recordStep.mock.calls.map(([, write]) => write).find((w) => w.step?.record?.doneAt);
    expect(done).toMatchObject({ step: { name: 'serviceInvite', record: { value: 'e-mailed by the service' } } });
  });

  it('after a crash between inviting and recording, finds the invitation instead of inviting again', async () => {
    const claimed = applicationRecord({ state: 'claimed', steps: { serviceInvite: { startedAt: NOW - 5_000 } } });
    const { inviteCandidate, findInvitation, deps } = perCandidate('service', claimed);
    findInvitation.mockResolvedValue({ candidate_id: 'cand-9', interview_id: 'int-1' });
    await handleStageEntered(stageEnteredMessage(), deps);
    expect(findInvitation).toHaveBeenCalledWith('int-1', 'Ana@Example.com', expect.anything());
    // Asked again for that candidate, without a second e-mail: the same invitation, not a new one.
    expect(inviteCandidate).toHaveBeenCalledTimes(1);
    expect(inviteCandidate.mock.calls[0]![0]).toMatchObject({ candidateId: 'cand-9', disableEmailNotification: true });
  });

  // The configuration changed between the start and the retry: what the start recorded decides.
  it.each([
    ['service', 'connector', { value: 'e-mailed by the service' }],
    ['connector', 'service', {}],
  ] as const)('records a found invitation as its start asked (%s e-mails, %s now)', async (_, now, asked) => {
    const began = { startedAt: NOW - 5_000, ...asked };
    const claimed = applicationRecord({ state: 'claimed', steps: { serviceInvite: began } });
    const { store, findInvitation, deps } = perCandidate(now, claimed);
    findInvitation.mockResolvedValue({ candidate_id: 'cand-9', interview_id: 'int-1' });
    await handleStageEntered(stageEnteredMessage(), deps);
    const done = store.recordStep.mock.calls.map(([, write]) => write).find((w) => w.step?.name === 'serviceInvite');
    expect(done?.step?.record).toEqual({ startedAt: NOW - 5_000, doneAt: NOW, ...asked });
  });

  it('never e-mails through SES an invitation its record says the service e-mailed, whatever it says now', async () => {
    const byService = { startedAt: NOW - 5_000, doneAt: NOW - 5_000, value: 'e-mailed by the service' };
    const claimed = applicationRecord({ state: 'claimed', steps: { serviceInvite: byService } });
    const { ats, inviteCandidate, deps } = perCandidate('connector', claimed);
    await handleStageEntered(stageEnteredMessage(), deps);
    expect(inviteCandidate).not.toHaveBeenCalled();
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(ats.postNote).toHaveBeenCalledOnce();
  });

  // The configuration changed since the service's invitation began: whether its e-mail went is what the start recorded.
  it.each([
    ['the service e-mailed it (connector now)', 'connector', { value: 'e-mailed by the service' }, 'invited'],
    ['no one did (service now)', 'service', {}, 'failed'],
  ] as const)('decides a refused invite note by whether an e-mail went: %s', async (_, now, asked, outcome) => {
    const { AtsError } = await import('../../../shared/ats');
    const began = { startedAt: NOW - 5_000, doneAt: NOW - 5_000, ...asked };
    const claimed = applicationRecord({ state: 'claimed', steps: { serviceInvite: began } });
    const { ats, deps } = perCandidate(now, claimed);
    ats.postNote.mockRejectedValue(new AtsError('ats-forbidden', 'POST /notes: 403', { status: 403 }));
    expect((await handleStageEntered(stageEnteredMessage(), deps))[0]).toMatchObject({ outcome });
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
  });

  it('invites once after a crash before the call reached the service (no invitation found)', async () => {
    const claimed = applicationRecord({ state: 'claimed', steps: { serviceInvite: { startedAt: NOW - 5_000 } } });
    const { inviteCandidate, findInvitation, deps } = perCandidate('connector', claimed);
    await handleStageEntered(stageEnteredMessage(), deps);
    expect(findInvitation).toHaveBeenCalledTimes(1);
    expect(inviteCandidate).toHaveBeenCalledTimes(1);
    expect(inviteCandidate.mock.calls[0]![0].candidateId).toBeUndefined();
  });

  it('retries the message when the deadline cuts the call short; a definite 400 fails the application', async () => {
    const { InterviewServiceClient } = await import('../../../shared/interview-service');
    const deadline = new AbortController();
    deadline.abort();
    // The real client's classification of a call its caller aborted, fed to the use case.
    const aborted = await new InterviewServiceClient({ baseUrl: 'https://api.interviews.example.com', apiKey: 'k' })
      .inviteCandidate(
        { interviewId: 'int-1', name: 'Ana', email: 'ana@example.com', disableEmailNotification: true },
        { signal: deadline.signal },
      )
      .catch((error: unknown) => error);
    const cut = perCandidate('connector');
    cut.inviteCandidate.mockRejectedValue(aborted);
    await expect(handleStageEntered(stageEnteredMessage(), cut.deps)).rejects.toMatchObject({
      code: 'unavailable',
      retryable: true,
    });
    expect(cut.store.markApplicationFailed).not.toHaveBeenCalled();

    const refused = perCandidate('connector');
    const { InvalidRequestError } = await import('../../../shared/interview-service');
    refused.inviteCandidate.mockRejectedValue(new InvalidRequestError('Invalid request', { status: 400 }));
    const [result] = await handleStageEntered(stageEnteredMessage(), refused.deps);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'invalid-request' });
    expect(refused.store.markApplicationFailed).toHaveBeenCalledTimes(1);
  });

  it('retries the message when the deadline cuts the note short; a 403 after the e-mail ends it refused', async () => {
    const { createAtsAdapter } = await import('../../../shared/ats');
    const { parseConnections } = await import('../../../shared/config');
    const deadline = new AbortController();
    deadline.abort();
    // The real adapter's classification of a note its caller aborted (the worker's deadline), fed to the use case.
    const adapter = createAtsAdapter(parseConnections(connectionDocument({ ats: 'ashby', id: 'acme-ashby' }))[0]!, {
      interviewApiKey: 'k',
      interviewWebhookToken: 't'.repeat(32),
      atsWebhookSecret: 'whsec_test_0123456789',
      atsApiKey: 'key',
    });
    const aborted = await adapter
      .postNote(
        { atsApplicationId: 'a', atsCandidateId: 'c', atsJobId: 'j' },
        { body: 'x', marker: 'm' },
        deadline.signal,
      )
      .catch((error: unknown) => error);
    expect(aborted).toMatchObject({ code: 'ats-unavailable', retryable: true });
    const cut = perCandidate('connector');
    cut.ats.postNote.mockRejectedValue(aborted);
    await expect(handleStageEntered(stageEnteredMessage(), cut.deps)).rejects.toMatchObject({ retryable: true });
    expect(cut.store.markApplicationFailed).not.toHaveBeenCalled();

    const { AtsError } = await import('../../../shared/ats');
    const forbidden = () => new AtsError('ats-forbidden', 'POST /notes: 403', { status: 403 });
    // The e-mail took the link to the candidate: the refused note ends refused, and the invitation goes on.
    const refused = perCandidate('connector');
    refused.ats.postNote.mockRejectedValue(forbidden());
    expect((await handleStageEntered(stageEnteredMessage(), refused.deps))[0]).toMatchObject({ outcome: 'invited' });
    expect(refused.store.markApplicationFailed).not.toHaveBeenCalled();
    const writes = refused.store.recordStep.mock.calls.map(([, write]) => write);
    expect(writes.find((w) => w.step?.name === 'inviteNote')).toMatchObject({
      step: { record: { outcome: 'refused', value: 'ats-forbidden' } },
    });
    expect(writes.at(-1)).toMatchObject({ finish: 'invited' });
    // SES refused the e-mail too: the note was the link's only way, and its refusal fails the invitation.
    const { MailerError } = await import('../../../shared/mail/ses.mailer');
    const unreached = perCandidate('connector');
    unreached.ats.postNote.mockRejectedValue(forbidden());
    unreached.deps.mailer.sendInvite.mockRejectedValue(new MailerError('MessageRejected', true, new Error('no')));
    const [failed] = await handleStageEntered(stageEnteredMessage(), unreached.deps);
    expect(failed).toMatchObject({ outcome: 'failed', reason: 'ats-forbidden' });
    expect(unreached.store.markApplicationFailed).toHaveBeenCalledTimes(1);
  });

  it('matches a report by the service candidate id first, though the candidate typed another e-mail', async () => {
    const store = fakeStore();
    const { context, interviews } = fakeContext(perCandidateDocument('connector'));
    const invited = applicationRecord({ serviceCandidateId: 'cand-9', candidateEmail: 'ana@example.com' });
    store.findApplicationByServiceCandidate.mockResolvedValue(invited);
    interviews.listReports.mockResolvedValue([
      {
        report_id: 'rep-9',
        interview_id: 'int-1',
        candidate_id: 'cand-9',
        candidate_email_id: 'ana.personal@elsewhere.example',
        ai_match_score: 80,
        proctoring_violations: [],
        technical_skills_evaluation: [],
        soft_skills_evaluation: [],
        custom_question_evaluation: [],
        interview_transcript: [],
      },
    ]);
    store.claimWriteBack.mockResolvedValue({ kind: 'claimed', record: { ...invited, state: 'completed' } });
    const result = await handleReportCreated(
      reportCreatedMessage({ enqueueId: 'e', reportId: 'rep-9', candidateId: 'cand-9' }),
      dependencies(store, context),
    );
    expect(store.findApplicationByServiceCandidate).toHaveBeenCalledWith('int-1', 'cand-9');
    expect(store.findApplicationByInterview).not.toHaveBeenCalled();
    expect(store.parkUnmatchedReport).not.toHaveBeenCalled();
    expect(result).toMatchObject({ outcome: expect.not.stringMatching('unmatched') });
  });

  it('spends no read on the service candidate index for a shared-link connection', async () => {
    const store = fakeStore();
    const { context } = fakeContext();
    store.findApplicationByInterview.mockResolvedValue(applicationRecord());
    store.claimWriteBack.mockResolvedValue({ kind: 'claimed', record: applicationRecord({ state: 'completed' }) });
    await handleReportCreated(reportCreatedMessage({ enqueueId: 'e' }), dependencies(store, context));
    expect(store.findApplicationByServiceCandidate).not.toHaveBeenCalled();
    expect(store.findApplicationByInterview).toHaveBeenCalledTimes(1);
  });
});
