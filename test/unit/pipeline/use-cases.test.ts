import { beforeEach, describe, expect, it, vi } from 'vitest';
import { AtsError } from '../../../shared/ats/errors';
import { LeaseLostError } from '../../../shared/mapping/errors';
import { MailerError } from '../../../shared/mail/ses.mailer';
import {
  clearInterviewCache,
  ensureInterviewForTrigger,
  handleReportCreated,
  handleStageEntered,
} from '../../../shared/pipeline';
import { type ConnectionContext, type StepWrite, stepsBefore } from '../../../shared/pipeline/ports';
import type { ApplicationRecord } from '../../../shared/pipeline/records';
import { connectionDocument } from '../../helpers/connections';
import { dependencies, fakeContext, fakeStore, MemoryQueueLedger, readyToInvite } from '../../helpers/pipeline-fakes';
import {
  applicationRecord,
  jobRecord,
  NOW,
  reportFactory,
  reportCreatedMessage,
  stageEnteredMessage,
} from '../../helpers/pipeline-records';
import { MemoryMappingStore } from '../../helpers/memory-store';
import { claimLeaseMs } from '../../../functions/_runtime/sqs-batch';

const stageMessage = stageEnteredMessage;
const reportMessage = reportCreatedMessage();

beforeEach(() => clearInterviewCache());

/** The application × trigger of the default stage-entered message. */
const APPLICATION = { connectionId: 'acme-greenhouse', atsApplicationId: '4401', triggerId: 'ai-screen' };

/** The interview of job 3301 for the connection's first trigger, ensured at NOW by worker `owner-1`. */
function ensureFirst(
  store: MemoryMappingStore,
  context: ConnectionContext,
  connection: ConnectionContext['connection'],
  event: { atsJobId: string; jobName?: string } = { atsJobId: '3301' },
) {
  const deps = { ...dependencies(store, context), now: () => NOW, newOwner: () => 'owner-1' };
  return ensureInterviewForTrigger(context, connection.triggers[0]!, event, deps);
}

describe('Use case: ensureInterviewForTrigger', () => {
  const JOB = { connectionId: 'acme-greenhouse', atsJobId: '3301', triggerId: 'ai-screen' };
  const NAME = 'Backend Engineer – AI interview (ref acme-greenhouse/3301/ai-screen)';
  /** Another worker holds the job's creation lease, taken at `at` for a minute. */
  const otherCreator = (store: MemoryMappingStore, at = NOW) =>
    store.leaseJob(JOB, { interviewName: NAME, templateHash: 'h' }, { owner: 'other', now: at, durationMs: 60_000 });
  /** Dependencies on a clock that sleeping moves on; `onSleep` runs after each sleep. */
  function onAClock(store: MemoryMappingStore, context: ConnectionContext, onSleep = async (_n: number) => {}) {
    let clock = NOW;
    let sleeps = 0;
    return {
      ...dependencies(store, context),
      now: () => clock,
      newOwner: () => 'me',
      sleep: async (ms: number) => {
        clock += ms;
        await onSleep(++sleeps);
      },
    };
  }

  it('adopts the interview an earlier, crashed creator made instead of creating a second one', async () => {
    const store = new MemoryMappingStore();
    const { context, interviews, connection } = fakeContext();
    // The earlier creator's lease ran out: it may have created the interview and stopped before recording it.
    await otherCreator(store, NOW - 120_000);
    interviews.findInterviewsByName.mockResolvedValue([
      { interview_id: 'int-orphan', interview_name: 'n', invite_url: 'https://i.example.com/int-orphan' },
    ]);
    const ready = await ensureFirst(store, context, connection, { atsJobId: '3301', jobName: 'Backend Engineer' });
    expect(ready.interviewId).toBe('int-orphan');
    expect(interviews.createInterview).not.toHaveBeenCalled();
    expect(interviews.findInterviewsByName).toHaveBeenCalledWith(NAME, expect.anything());
    expect(await store.getJob(JOB)).toMatchObject({ state: 'ready', interviewId: 'int-orphan', createAttempts: 2 });
    // The job's own name is kept for the reminders and resends, which name the job as the invitation did.
    expect((await store.getJob(JOB))?.jobName).toBe('Backend Engineer');
  });

  it('creates on a first lease, and sets update-only fields (skills, coding round) with a PUT', async () => {
    const store = new MemoryMappingStore();
    const trigger = {
      id: 'ai-screen',
      stage: { name: 'AI Interview' },
      interview: {
        questions: [{ question: 'q', time: 2, type: 'audio' }],
        skills: [{ name: 'Go', description: '' }],
        codingRound: { language: 'go' },
      },
    };
    const { context, interviews, connection } = fakeContext(connectionDocument({ triggers: [trigger] }));
    const ready = await ensureFirst(store, context, connection);
    expect(ready.interviewId).toBe('int-new');
    expect(interviews.findInterviewsByName).not.toHaveBeenCalled();
    expect(interviews.updateInterview).toHaveBeenCalledWith(
      'int-new',
      {
        skills: [{ name: 'Go', description: '' }],
        is_coding_round_required: true,
        only_coding_round: false,
        selected_coding_language: 'go',
      },
      expect.anything(),
    );
    expect(await store.getJob(JOB)).toMatchObject({ state: 'ready', interviewId: 'int-new', createAttempts: 1 });
  });

  it('updates the existing interview in place when the template changed', async () => {
    const store = new MemoryMappingStore();
    const { context, interviews, connection } = fakeContext();
    await otherCreator(store);
    await store.completeJob(JOB, 'other', {
      interviewId: 'int-old',
      inviteUrl: 'https://i/int-old',
      templateHash: 'stale',
    });
    const ready = await ensureFirst(store, context, connection);
    expect(ready.interviewId).toBe('int-old');
    expect(interviews.createInterview).not.toHaveBeenCalled();
    expect(interviews.updateInterview).toHaveBeenCalledWith(
      'int-old',
      expect.objectContaining({ custom_question_list: expect.any(Array) }),
      expect.anything(),
    );
    // The record holds the new template's hash: the next worker does not update it again.
    expect((await store.getJob(JOB))?.templateHash).not.toBe('stale');
  });

  it('waits for another creator, and gives up with a retryable error when it never finishes', async () => {
    const store = new MemoryMappingStore();
    const { context, connection } = fakeContext();
    await otherCreator(store);
    // The other creator finishes while this worker polls (after its second sleep).
    const finishing = onAClock(store, context, async (sleeps) => {
      if (sleeps === 2)
        await store.completeJob(JOB, 'other', {
          interviewId: 'int-other',
          inviteUrl: 'https://i/int-other',
          templateHash: 'h',
        });
    });
    const trigger = connection.triggers[0]!;
    expect((await ensureInterviewForTrigger(context, trigger, { atsJobId: '3301' }, finishing)).interviewId).toBe(
      'int-other',
    );
    clearInterviewCache();
    const never = new MemoryMappingStore();
    await otherCreator(never);
    await expect(
      ensureInterviewForTrigger(context, trigger, { atsJobId: '3301' }, onAClock(never, context)),
    ).rejects.toMatchObject({ code: 'interview-not-ready', retryable: true });
  });

  it("asks to be retried when the creator's lease ends, so the worker defers the message to then", async () => {
    const store = new MemoryMappingStore();
    const { context, connection } = fakeContext();
    // The creator took its lease 20 s ago: it holds it 40 s more.
    await otherCreator(store, NOW - 20_000);
    const deps = { ...onAClock(store, context), leaseMs: 21_000 };
    // It polls for half its own time (its 21-s lease less the 5 s a lease keeps past the deadline: 8 s), then the
    // creator still holds 32 s of its lease.
    await expect(
      ensureInterviewForTrigger(context, connection.triggers[0]!, { atsJobId: '3301' }, deps),
    ).rejects.toMatchObject({ code: 'interview-not-ready', retryAfterMs: 32_000 });
  });
});

describe('Use case: handleStageEntered', () => {
  /** Workers claimed the default delivery and stopped (the last without a word), recording `steps` on the way. */
  async function stoppedEarlier(store: MemoryMappingStore, steps: { inviteEmailAt?: number; cleanStops?: number }) {
    const delivery = { source: 'greenhouse:acme-greenhouse', deliveryId: 'evt-1', enqueueId: 'enq-1' };
    const input = {
      ...APPLICATION,
      atsCandidateId: '7702',
      atsJobId: '3301',
      stageId: '9001',
      candidateEmail: 'ana@example.com',
    };
    let at = NOW - 600_000;
    await store.claimApplication(delivery, input, { owner: 'w0', now: at, durationMs: 60_000 });
    if (steps.inviteEmailAt)
      await store.recordStep(APPLICATION, {
        owner: 'w0',
        step: { name: 'inviteEmail', record: { doneAt: steps.inviteEmailAt } },
        data: { interviewId: 'int-new', candidateEmail: 'ana@example.com' },
      });
    // Claims that stopped cleanly (a 429 before the call), each taken over by the next.
    for (let n = 0; n < (steps.cleanStops ?? 0); n++) {
      await store.releaseClaim(APPLICATION, `w${n}`, `invite:${n}`);
      at += 120_000;
      await store.claimApplication(delivery, input, { owner: `w${n + 1}`, now: at, durationMs: 60_000 });
    }
  }

  it('after a takeover, finds the invite note the earlier worker posted and does not post it again', async () => {
    const store = new MemoryMappingStore();
    const { context, ats } = fakeContext();
    await stoppedEarlier(store, { inviteEmailAt: NOW - 1000 });
    ats.findNote.mockResolvedValue({ noteId: 'note-earlier' });
    const deps = dependencies(store, context);
    expect(await handleStageEntered(stageMessage(), deps)).toEqual([{ triggerId: 'ai-screen', outcome: 'invited' }]);
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(ats.postNote).not.toHaveBeenCalled();
    expect(await store.getApplication(APPLICATION)).toMatchObject({
      state: 'invited',
      steps: { inviteNote: { doneAt: NOW } },
      inviteClaims: 1,
    });
  });

  it.each([
    [
      'the write-back took the claim: the candidate already used the link',
      'invited',
      applicationRecord({ state: 'completed', reportId: 'rep-1', leaseOwner: 'writeback' }),
    ],
    [
      'another invite worker took the claim over',
      'held-elsewhere',
      applicationRecord({ state: 'claimed', leaseOwner: 'other' }),
    ],
  ])('when the lease is lost mid-invite and %s, answers %s', async (_case, outcome, holder) => {
    const store = fakeStore();
    const { context, ats } = fakeContext();
    // The e-mail is recorded; recording the invite note then finds the claim gone.
    store.recordStep.mockImplementation(async (_key: unknown, write: StepWrite) => {
      if (write.step?.name === 'inviteNote') throw new LeaseLostError('application 4401');
    });
    store.getApplication.mockResolvedValue(holder);
    const deps = readyToInvite(store, context);
    const [result] = await handleStageEntered(stageMessage(), deps);
    expect(result).toEqual({ triggerId: 'ai-screen', outcome });
    expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(1);
    expect(ats.postNote).toHaveBeenCalledTimes(1);
    expect(store.markApplicationFailed).not.toHaveBeenCalled();
  });

  it("records the sent e-mail with the note's write; a crash between leaves it uncertain, never resent", async () => {
    const store = new MemoryMappingStore();
    const { context, ats } = fakeContext();
    const deps = dependencies(store, context);
    const writes: StepWrite[] = [];
    const recordStep = store.recordStep.bind(store);
    vi.spyOn(store, 'recordStep').mockImplementation(async (key, write) => {
      writes.push(write);
      return recordStep(key, write);
    });
    expect(await handleStageEntered(stageMessage(), deps)).toEqual([{ triggerId: 'ai-screen', outcome: 'invited' }]);
    // Two writes: the e-mail's start, then the note's, which carries the e-mail's done mark and ends the claim.
    expect(writes.map((w) => [w.step?.name, stepsBefore(w.before)[0]?.name, w.finish])).toEqual([
      ['inviteEmail', undefined, undefined],
      ['inviteNote', 'inviteEmail', 'invited'],
    ]);
    expect(await store.getApplication(APPLICATION)).toMatchObject({
      steps: { inviteEmail: { doneAt: NOW }, inviteNote: { doneAt: NOW } },
    });

    // The worker dies between the e-mail and the note's write: its mark was never written.
    const dying = new MemoryMappingStore();
    const died = new Error('the environment died');
    vi.spyOn(dying, 'recordStep').mockImplementation(async function (this: MemoryMappingStore, key, write) {
      if (write.before) throw died;
      return MemoryMappingStore.prototype.recordStep.call(this, key, write);
    });
    const first = dependencies(dying, context);
    await expect(handleStageEntered(stageMessage(), first)).rejects.toBe(died);
    vi.mocked(dying.recordStep).mockRestore();
    // Its lease ran out; the message comes back to another worker.
    const later = { ...dependencies(dying, context), now: () => NOW + 10 * 60_000 };
    expect(await handleStageEntered(stageMessage(), later)).toEqual([{ triggerId: 'ai-screen', outcome: 'invited' }]);
    expect((await dying.getApplication(APPLICATION))?.steps.inviteEmail).toMatchObject({ outcome: 'uncertain' });
    expect(first.mailer.sendInvite).toHaveBeenCalledTimes(1);
    expect(later.mailer.sendInvite).not.toHaveBeenCalled();
    // The note the dead worker may have posted is looked up by its marker before one is posted.
    expect(ats.findNote).toHaveBeenCalledTimes(1);
  });

  it('hands the claim back at once after a 429 on the note, and the next claim posts it without a lookup', async () => {
    const store = new MemoryMappingStore();
    const { context, ats } = fakeContext();
    const deps = dependencies(store, context);
    // The first delivery: the interview made, the e-mail sent, the note meets a spent window (nothing sent).
    ats.postNote.mockRejectedValueOnce(new AtsError('ats-rate-limited', 'POST /v3/notes: 429', { status: 429 }));
    await expect(handleStageEntered(stageMessage(), deps)).rejects.toMatchObject({ code: 'ats-rate-limited' });
    const stopped = await store.getApplication(APPLICATION);
    expect(stopped).toMatchObject({ state: 'claimed', cleanStop: 'invite:0', steps: { inviteEmail: { doneAt: NOW } } });
    expect(stopped?.leaseOwner).toBeUndefined();
    // The message comes back: the claim is taken over from that clean stop; no note lookup, one note.
    expect(await handleStageEntered(stageMessage(), deps)).toEqual([{ triggerId: 'ai-screen', outcome: 'invited' }]);
    expect(await store.getApplication(APPLICATION)).toMatchObject({
      state: 'invited',
      steps: { inviteNote: { doneAt: NOW } },
      inviteClaims: 1,
    });
    expect(ats.findNote).not.toHaveBeenCalled();
    expect(ats.postNote).toHaveBeenCalledTimes(2);
    expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(1);
  });

  it("takes a stage change's turn as an invitation declares it, and the turn it went back for", async () => {
    const store = new MemoryMappingStore();
    const { context } = fakeContext();
    const take = vi.fn(async () => undefined);
    Object.assign(context, { turns: { take, takeNear: vi.fn() } });
    await handleStageEntered(stageMessage(), dependencies(store, context));
    const back = { ...stageMessage({ stage: { id: '9002' } }), turnAt: NOW + 5_000, turnCalls: 3 };
    await handleStageEntered(back, dependencies(store, context));
    expect(take.mock.calls.map((call: unknown[]) => call.slice(0, 2))).toEqual([
      ['invitation', undefined],
      ['invitation', { at: NOW + 5_000, calls: 3 }],
    ]);
  });

  it('records an e-mail whose answer was lost as uncertain at once; one shown unsent is retried', async () => {
    const store = new MemoryMappingStore();
    const { context, ats } = fakeContext();
    const deps = dependencies(store, context);
    // SES took the request and no answer came: it may have sent it. The note with the link still goes out.
    vi.mocked(deps.mailer.sendInvite).mockRejectedValueOnce(
      new MailerError('TimeoutError', false, new Error('request timed out')),
    );
    expect(await handleStageEntered(stageMessage(), deps)).toEqual([{ triggerId: 'ai-screen', outcome: 'invited' }]);
    expect(await store.getApplication(APPLICATION)).toMatchObject({
      state: 'invited',
      steps: { inviteEmail: { outcome: 'uncertain', startedAt: NOW }, inviteNote: { doneAt: NOW } },
    });
    expect(ats.postNote).toHaveBeenCalledTimes(1);
    expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(1);
    // Throttled (a 4xx, nothing sent): a rate limit, its message deferred and tried again; nothing recorded as done.
    const other = new MemoryMappingStore();
    const throttled = dependencies(other, context);
    vi.mocked(throttled.mailer.sendInvite).mockRejectedValueOnce(
      new MailerError('TooManyRequestsException', true, new Error('throttled')),
    );
    await expect(handleStageEntered(stageMessage(), throttled)).rejects.toMatchObject({ code: 'rate-limited' });
    expect((await other.getApplication(APPLICATION))?.steps.inviteEmail).toBeUndefined();
  });

  it('looks the note up after a takeover from a worker that did not stop cleanly', async () => {
    const store = new MemoryMappingStore();
    const { context, ats } = fakeContext();
    // A clean stop, then a claim that stopped without a word: it may have posted the note and crashed.
    await stoppedEarlier(store, { inviteEmailAt: NOW - 1000, cleanStops: 1 });
    ats.findNote.mockResolvedValue({ noteId: 'note-earlier' });
    const deps = dependencies(store, context);
    expect(await handleStageEntered(stageMessage(), deps)).toEqual([{ triggerId: 'ai-screen', outcome: 'invited' }]);
    expect(ats.findNote).toHaveBeenCalledTimes(1);
    expect(ats.postNote).not.toHaveBeenCalled();
    expect(await store.getApplication(APPLICATION)).toMatchObject({ state: 'invited', inviteClaims: 2 });
  });

  it('marks the application failed when there is no way to invite, and returns values for duplicates', async () => {
    const store = new MemoryMappingStore();
    const { context } = fakeContext(
      connectionDocument({
        triggers: [
          {
            id: 'ai-screen',
            jobs: 'all',
            stage: { name: 'AI Interview' },
            interview: { questions: [{ question: 'q', time: 2, type: 'audio' }] },
            invite: { email: true, atsNote: false },
          },
        ],
      }),
    );
    const deps = dependencies(store, context);
    expect(await handleStageEntered(stageMessage({ candidate: { name: 'No Mail' } }), deps)).toEqual([
      { triggerId: 'ai-screen', outcome: 'failed', reason: 'no-invite-channel' },
    ]);
    expect(await store.getApplication(APPLICATION)).toMatchObject({
      state: 'failed',
      failureReason: expect.stringContaining('no usable e-mail address'),
    });
    // The same delivery enqueued again (another message of the same webhook) is a duplicate.
    expect(await handleStageEntered({ ...stageMessage(), enqueueId: 'enq-2' }, deps)).toEqual([
      { triggerId: 'ai-screen', outcome: 'duplicate-delivery' },
    ]);
    expect(await handleStageEntered(stageMessage({ stage: { name: 'Offer' } }), deps)).toEqual([
      { outcome: 'no-matching-trigger' },
    ]);
    expect(await handleStageEntered({ ...stageMessage(), connectionId: 'gone' }, deps)).toEqual([
      { outcome: 'unknown-connection' },
    ]);
  });

  it('drops a stage change named by id alone, with no ATS call, where the adapter knows its name', async () => {
    const { context, ats } = fakeContext();
    const names: Record<string, string> = { '9001': 'AI Interview', '9002': 'Offer' };
    const knownStageNames = vi.fn(() => new Map(Object.entries(names)));
    Object.assign(ats, { knownStageNames });
    // As Lever's confirmation, which fills in the stage's name.
    ats.confirmStageEntered.mockImplementation(async (event) => ({
      confirmed: true,
      event: { ...event, atsJobId: '3301', stage: { ...event.stage, name: names[event.stage.id ?? ''] } },
    }));
    const store = new MemoryMappingStore();
    vi.spyOn(store, 'rememberStageNames');
    const deps = dependencies(store, context);
    // Lever's webhooks carry the stage's id only: the stage a write-back moved the application to costs nothing.
    expect(await handleStageEntered(stageMessage({ stage: { id: '9002' } }), deps)).toEqual([
      { outcome: 'no-matching-trigger' },
    ]);
    expect(ats.confirmStageEntered).not.toHaveBeenCalled();
    // A stage not read yet, or the trigger's own, is confirmed with the ATS as before.
    await handleStageEntered({ ...stageMessage({ stage: { id: '9003' } }), enqueueId: 'enq-2' }, deps);
    expect(ats.confirmStageEntered).toHaveBeenCalledTimes(1);
    expect(await handleStageEntered(stageMessage({ stage: { id: '9001' } }), deps)).toEqual([
      { triggerId: 'ai-screen', outcome: 'invited' },
    ]);
    expect(ats.confirmStageEntered).toHaveBeenCalledTimes(2);
    expect(knownStageNames).toHaveBeenCalled();
    // What it read is shared with the webhook function, once for this environment's adapter.
    expect(deps.store.rememberStageNames).toHaveBeenCalledTimes(1);
    expect(deps.store.rememberStageNames).toHaveBeenCalledWith('acme-greenhouse', names, expect.any(Number));
  });
});

describe('Use case: handleReportCreated', () => {
  /** Application 4401 invited to interview int-1, as the invite worker leaves it. */
  async function invited(store: MemoryMappingStore, triggerId = 'ai-screen', interviewId = 'int-1') {
    const key = { ...APPLICATION, triggerId };
    const claim = {
      ...key,
      atsCandidateId: '7702',
      atsJobId: '3301',
      stageId: '9001',
      candidateEmail: 'ana@example.com',
    };
    await store.claimApplication(
      { source: 'greenhouse', deliveryId: triggerId, enqueueId: 'e' },
      claim,
      lease('invite'),
    );
    await store.recordStep(key, { owner: 'invite', finish: 'invited', data: { interviewId } });
  }
  const lease = (owner: string, now = NOW) => ({ owner, now, durationMs: 60_000 });

  it('after a takeover, adopts the report note found by its marker, then moves the stage', async () => {
    const store = new MemoryMappingStore();
    const { context, ats } = fakeContext();
    await invited(store);
    // A worker claimed this report and stopped without a word: its lease has run out since.
    await store.claimWriteBack(APPLICATION, 'rep-1', lease('crashed', NOW - 120_000), 'cand-1');
    ats.findNote.mockResolvedValue({ noteId: 'note-earlier' });
    const result = await handleReportCreated(reportMessage, dependencies(store, context));
    expect(result).toEqual({ outcome: 'written-back', advanced: true, flagged: false });
    expect(ats.findNote).toHaveBeenCalledWith(expect.anything(), 'ai-interview-report:rep-1', undefined);
    expect(ats.postNote).not.toHaveBeenCalled();
    expect(ats.moveToStage).toHaveBeenCalledWith(
      expect.objectContaining({ fromStageId: '9001', fromStage: { name: 'AI Interview' } }),
      { name: 'Hiring Manager Review' },
      undefined,
    );
    expect(await store.getApplication(APPLICATION)).toMatchObject({
      state: 'written_back',
      reportId: 'rep-1',
      steps: { reportNote: { value: 'note-earlier' }, stageMove: { value: '9002', doneAt: NOW } },
      writeBackAttempts: 2,
    });
  });

  it('takes over a note still in flight only once it has landed: the lookup finds it, no second note', async () => {
    const store = new MemoryMappingStore();
    const { context, ats } = fakeContext();
    await invited(store);
    // The holder had 3 s left; the deadline cut the note it had just sent, which lands at the ATS 2 s after it.
    const deadline = NOW + 3_000;
    await store.claimWriteBack(APPLICATION, 'rep-1', { ...lease('cut'), durationMs: claimLeaseMs(3_000) }, 'cand-1');
    let clock = deadline + 1_100;
    ats.findNote.mockImplementation(async () => (clock >= deadline + 2_000 ? { noteId: 'note-late' } : undefined));
    const sleep = async (ms: number) => {
      clock += ms;
    };
    const deps = { ...dependencies(store, context), now: () => clock, sleep };
    expect(await handleReportCreated(reportMessage, deps)).toEqual({ outcome: 'held-elsewhere' });
    clock = NOW + claimLeaseMs(3_000) + 1;
    expect(await handleReportCreated(reportMessage, deps)).toMatchObject({ outcome: 'written-back' });
    expect(ats.postNote).not.toHaveBeenCalled();
    expect(await store.getApplication(APPLICATION)).toMatchObject({ steps: { reportNote: { value: 'note-late' } } });
  });

  /** An invited application on an ATS with a link field (Lever's), its link attached by `attachReportLink`. */
  const withReportLink = async () => {
    const store = new MemoryMappingStore();
    const { context, ats } = fakeContext();
    const attachReportLink = vi.fn().mockResolvedValue(undefined);
    Object.assign(ats, { attachReportLink });
    await invited(store);
    return { store, context, ats, attachReportLink };
  };

  it('attaches the report link with the note, both recorded by one write', async () => {
    const { store, context, ats, attachReportLink } = await withReportLink();
    const recordStep = vi.spyOn(store, 'recordStep');
    expect(await handleReportCreated(reportMessage, dependencies(store, context))).toMatchObject({
      outcome: 'written-back',
    });
    expect(attachReportLink.mock.invocationCallOrder[0]).toBeLessThan(ats.postNote.mock.invocationCallOrder[0] ?? 0);
    const linkWrites = recordStep.mock.calls.filter(([, write]) =>
      stepsBefore(write.before).some((done) => done.name === 'reportLink'),
    );
    expect(linkWrites.map(([, write]) => write.step?.name)).toEqual(['reportNote']);
    expect(recordStep.mock.calls.filter(([, write]) => write.step?.name === 'reportLink')).toEqual([]);
    expect(await store.getApplication(APPLICATION)).toMatchObject({
      state: 'written_back',
      steps: { reportLink: { doneAt: NOW }, reportNote: { doneAt: NOW } },
    });
  });

  it("tells the note's failure, not the link's record's, when both fail", async () => {
    const { store, context, ats } = await withReportLink();
    const recordStep = store.recordStep.bind(store);
    vi.spyOn(store, 'recordStep').mockImplementation((key, write) =>
      write.step?.name === 'reportLink' ? Promise.reject(new Error('DynamoDB unavailable')) : recordStep(key, write),
    );
    ats.postNote.mockRejectedValueOnce(new AtsError('ats-rate-limited', 'POST /v3/notes: 429', { status: 429 }));
    await expect(handleReportCreated(reportMessage, dependencies(store, context))).rejects.toMatchObject({
      code: 'ats-rate-limited',
    });
  });

  it('records the link alone when the note fails after it, and does not attach it again', async () => {
    const { store, context, ats, attachReportLink } = await withReportLink();
    const deps = dependencies(store, context);
    // The link is attached; the note then meets a spent window, and the message goes back for its turn.
    ats.postNote.mockRejectedValueOnce(new AtsError('ats-rate-limited', 'POST /v3/notes: 429', { status: 429 }));
    await expect(handleReportCreated(reportMessage, deps)).rejects.toMatchObject({ code: 'ats-rate-limited' });
    expect(attachReportLink).toHaveBeenCalledWith(
      expect.objectContaining({ atsApplicationId: '4401' }),
      'https://files.example.com/r.pdf',
      undefined,
    );
    expect(await store.getApplication(APPLICATION)).toMatchObject({
      state: 'completed',
      steps: { reportLink: { doneAt: NOW } },
    });
    // Back: the note, not the link again.
    expect(await handleReportCreated(reportMessage, deps)).toMatchObject({ outcome: 'written-back' });
    expect(attachReportLink).toHaveBeenCalledTimes(1);
    expect(ats.postNote).toHaveBeenCalledTimes(2);
    expect(await store.getApplication(APPLICATION)).toMatchObject({
      state: 'written_back',
      steps: { reportNote: { doneAt: NOW } },
    });
  });

  it('flags for review and never moves when the score is below the bar', async () => {
    const store = new MemoryMappingStore();
    const { context, ats, interviews } = fakeContext();
    interviews.listReports.mockResolvedValue([reportFactory({ ai_match_score: 60 })]);
    await invited(store);
    expect(await handleReportCreated(reportMessage, dependencies(store, context))).toEqual({
      outcome: 'written-back',
      advanced: false,
      flagged: true,
    });
    expect(ats.moveToStage).not.toHaveBeenCalled();
    expect(ats.postNote.mock.calls[0]?.[1].body).toContain('Flagged for review: AI match score 60 is below 75.');
    const record = await store.getApplication(APPLICATION);
    expect(record).toMatchObject({ state: 'written_back', flaggedForReview: true });
    expect(record?.steps.stageMove).toBeUndefined();
  });

  it("takes a write-back's turn by its sort unless it is done; a later turn sends it back unclaimed", async () => {
    const store = new MemoryMappingStore();
    const { context, interviews, ats } = fakeContext();
    const taken: unknown[] = [];
    // The first turn is later: the message goes back carrying it; the second runs in it.
    const take = vi.fn(async (step: string, held: unknown) => {
      taken.push([step, held]);
      if (taken.length === 1)
        throw new AtsError('ats-rate-limited', 'later', { turnAt: NOW + 30_000, turnCalls: 7, turnKind: step });
    });
    Object.assign(context, { turns: { take, takeNear: vi.fn() } });
    await invited(store);
    const deps = dependencies(store, context);
    const away = await handleReportCreated(reportMessage, deps).catch((error: unknown) => error);
    expect(away).toMatchObject({ code: 'ats-rate-limited', turnKind: 'writeBackMove', turnCalls: 7 });
    // Sent back before anything is claimed: nothing held, nothing written.
    const after = await store.getApplication(APPLICATION);
    expect(after?.leaseOwner).toBeUndefined();
    expect(after?.writeBackAttempts).toBeUndefined();
    expect(ats.postNote).not.toHaveBeenCalled();
    const back = { ...reportMessage, turnAt: NOW + 30_000, turnCalls: 7, turnKind: 'writeBackMove' };
    expect(await handleReportCreated(back, deps)).toMatchObject({ outcome: 'written-back', advanced: true });
    // Done: a duplicate finds it so before any turn.
    expect(await handleReportCreated(reportMessage, deps)).toEqual({ outcome: 'already-written-back' });
    // A report below the bar is a write-back without a move.
    interviews.listReports.mockResolvedValue([reportFactory({ report_id: 'rep-2', ai_match_score: 60 })]);
    const other = new MemoryMappingStore();
    await invited(other);
    const low = { ...reportMessage, reportId: 'rep-2' };
    expect(await handleReportCreated(low, dependencies(other, context))).toMatchObject({ flagged: true });
    expect(taken).toEqual([
      ['writeBackMove', undefined],
      ['writeBackMove', { at: NOW + 30_000, calls: 7 }],
      ['writeBack', undefined],
    ]);
  });

  it('sends a write-back back with its application, claimed with no lookup; gone since, it is parked', async () => {
    const store = new MemoryMappingStore();
    const { context, ats } = fakeContext();
    const later = new AtsError('ats-rate-limited', 'later', { turnAt: NOW + 30_000, turnCalls: 7 });
    const take = vi.fn(async (_step: string, held: unknown) => {
      if (!held) throw later;
    });
    Object.assign(context, { turns: { take, takeNear: vi.fn() } });
    await invited(store);
    const deps = dependencies(store, context);
    let carry = {} as { foundApplication: { atsApplicationId: string; triggerId: string } };
    const run = { carry: (fields: Record<string, unknown>) => Object.assign(carry, fields) };
    const away = await handleReportCreated(reportMessage, deps, run).catch((error: unknown) => error);
    // Said to its own run, and the error left as it was thrown (one deadline's error may be a whole batch's).
    expect(carry).toMatchObject({ foundApplication: { atsApplicationId: '4401' } });
    expect(away).toBe(later);
    expect(away).not.toHaveProperty('carry');
    carry = { ...carry };
    const back = { ...reportMessage, turnAt: NOW + 30_000, turnCalls: 7, ...carry };
    const lookups = [
      vi.spyOn(store, 'findApplicationByInterview'),
      vi.spyOn(store, 'findApplicationsByAtsId'),
      vi.spyOn(store, 'getApplication'),
    ];
    expect(await handleReportCreated(back, deps)).toMatchObject({ outcome: 'written-back' });
    expect(lookups.map((lookup) => lookup.mock.calls.length)).toEqual([0, 0, 0]);
    expect(ats.postNote).toHaveBeenCalledTimes(1);
    // Again, as a duplicate of the return: its claim says it is done.
    expect(await handleReportCreated(back, deps)).toEqual({ outcome: 'already-written-back' });
    // Back without a turn (a 429, the deadline): it reads its application first, so a done one books nothing.
    const booked = take.mock.calls.length;
    const noTurn = { ...reportMessage, ...carry };
    expect(await handleReportCreated(noTurn, deps)).toEqual({ outcome: 'already-written-back' });
    expect(take.mock.calls.length).toBe(booked);
    // The candidate was purged while the message was away: parked as any report with no application.
    const purged = new MemoryMappingStore();
    const gone = { ...back, foundApplication: { ...carry.foundApplication, atsApplicationId: '9999' } };
    expect(await handleReportCreated(gone, dependencies(purged, context))).toMatchObject({ outcome: 'unmatched' });
    expect(await purged.isReportParked(APPLICATION.connectionId, reportMessage.reportId)).toBe(true);
    expect(ats.postNote).toHaveBeenCalledTimes(1);
  });

  it('prefers the ATS application id the service sends, when it maps to this interview', async () => {
    const store = new MemoryMappingStore();
    const { context, interviews } = fakeContext();
    interviews.listReports.mockResolvedValue([reportFactory({ ats_job_application_id: '4401' })]);
    // The same application under another trigger, invited to another interview: not this report's.
    await invited(store, 'other', 'int-9');
    await invited(store);
    expect(await handleReportCreated(reportMessage, dependencies(store, context))).toMatchObject({
      outcome: 'written-back',
    });
    expect(await store.getApplication(APPLICATION)).toMatchObject({ state: 'written_back', reportId: 'rep-1' });
    expect(await store.getApplication({ ...APPLICATION, triggerId: 'other' })).toMatchObject({ state: 'invited' });
    expect(await handleReportCreated(reportMessage, dependencies(store, context))).toEqual({
      outcome: 'already-written-back',
    });
  });

  it("writes a report an operator matched to an application back to its own interview's invitation", async () => {
    const store = new MemoryMappingStore();
    const { context, interviews } = fakeContext();
    interviews.listReports.mockResolvedValue([reportFactory()]);
    // Listed first: the same application under another trigger, invited to another interview.
    await invited(store, 'a-first', 'int-9');
    await invited(store);
    const matched = { ...reportMessage, atsApplicationId: '4401' };
    expect(await handleReportCreated(matched, dependencies(store, context))).toMatchObject({ outcome: 'written-back' });
    expect(await store.getApplication(APPLICATION)).toMatchObject({ state: 'written_back', reportId: 'rep-1' });
    expect(await store.getApplication({ ...APPLICATION, triggerId: 'a-first' })).toMatchObject({ state: 'invited' });
  });

  it('retries a report the service does not list yet, then parks it', async () => {
    const store = new MemoryMappingStore();
    const { context, interviews } = fakeContext();
    interviews.listReports.mockResolvedValue([]);
    await expect(
      handleReportCreated(reportMessage, dependencies(store, context), { receiveCount: 1 }),
    ).rejects.toMatchObject({ code: 'report-not-visible', retryable: true });
    expect(await store.isReportParked('acme-greenhouse', 'rep-1')).toBe(false);
    expect(await handleReportCreated(reportMessage, dependencies(store, context), { receiveCount: 3 })).toMatchObject({
      outcome: 'unmatched',
    });
    expect(await store.isReportParked('acme-greenhouse', 'rep-1')).toBe(true);
  });

  it('marks the application failed on a permanent ATS error, and lets a transient one go back to SQS', async () => {
    const store = new MemoryMappingStore();
    const { context, ats } = fakeContext();
    await invited(store);
    // A move refused after a try that may have landed (a note, a move or a link refused is recorded, and the rest
    // goes on).
    const refusal = new AtsError('ats-invalid-request', 'POST /v1/move: 422', { mayHaveSucceeded: true });
    ats.moveToStage.mockRejectedValueOnce(refusal);
    expect(await handleReportCreated(reportMessage, dependencies(store, context))).toEqual({
      outcome: 'failed',
      reason: 'ats-invalid-request',
    });
    expect(await store.getApplication(APPLICATION)).toMatchObject({
      state: 'failed',
      failureReason: 'ats-invalid-request: POST /v1/move: 422',
    });
    const other = new MemoryMappingStore();
    await invited(other);
    ats.postNote.mockRejectedValueOnce(new AtsError('ats-unavailable', 'POST /v3/notes: 503'));
    await expect(handleReportCreated(reportMessage, dependencies(other, context))).rejects.toMatchObject({
      code: 'ats-unavailable',
    });
    // Nothing marked: the claim stays with its lease, and SQS brings the message back.
    expect(await other.getApplication(APPLICATION)).toMatchObject({ state: 'completed', leaseOwner: 'owner-1' });
  });
});

describe('Use case: reconcileConnection', () => {
  it('enqueues open and unknown reports of active interviews, and leaves quiet old interviews alone', async () => {
    const { reconcileConnection } = await import('../../../shared/pipeline');
    const { context, interviews } = fakeContext();
    const old = NOW - 30 * 86_400_000;
    const store = new MemoryMappingStore().seed({
      jobs: [
        jobRecord({ atsJobId: '3301', state: 'ready', interviewId: 'int-active', updatedAt: NOW }),
        jobRecord({ atsJobId: '3302', state: 'ready', interviewId: 'int-quiet', updatedAt: old }),
      ],
      applications: [
        applicationRecord({ interviewId: 'int-active', state: 'invited', candidateEmail: 'open@example.com' }),
        applicationRecord({
          atsApplicationId: '4402',
          interviewId: 'int-active',
          state: 'written_back',
          candidateEmail: 'done@example.com',
        }),
        applicationRecord({
          atsApplicationId: '4403',
          interviewId: 'int-quiet',
          state: 'written_back',
          updatedAt: old,
        }),
      ],
    });
    // A stranger's report parked before is left to the operator.
    await store.parkUnmatchedReport(
      'acme-greenhouse',
      { reportId: 'int-active-parked', interviewId: 'int-active', candidateId: 'c' },
      'no application',
      NOW,
    );
    interviews.listReports.mockImplementation(async ({ interview_id }: { interview_id: string }) =>
      ['open', 'done', 'stranger', 'parked'].map((who) =>
        reportFactory({ report_id: `${interview_id}-${who}`, interview_id, candidate_email_id: `${who}@example.com` }),
      ),
    );
    const ledger = new MemoryQueueLedger();
    const result = await reconcileConnection('acme-greenhouse', { ...dependencies(store, context), ledger });
    expect(result.interviewsChecked).toBe(1);
    expect(result.enqueued.map((r) => r.reportId)).toEqual(['int-active-open', 'int-active-stranger']);
    // Each one enqueued is recorded in the queue ledger: a second run within the grace period enqueues nothing.
    expect(
      (await reconcileConnection('acme-greenhouse', { ...dependencies(store, context), ledger })).enqueued,
    ).toEqual([]);
    expect(interviews.listReports).not.toHaveBeenCalledWith(
      expect.objectContaining({ interview_id: 'int-quiet' }),
      expect.anything(),
    );
  });

  it("stops a connection's run at the first interview where the service refuses its key", async () => {
    const { reconcileConnection } = await import('../../../shared/pipeline');
    const { UnauthorizedError, InterviewServiceError } = await import('../../../shared/interview-service/errors');
    const { ERROR_CODES } = await import('../../../shared/interview-service/constants');
    for (const refusal of ['the key', 'one interview'] as const) {
      const { context, interviews } = fakeContext();
      const store = new MemoryMappingStore().seed({
        jobs: ['3301', '3302', '3303'].map((atsJobId) =>
          jobRecord({ atsJobId, state: 'ready', interviewId: `int-${atsJobId}`, updatedAt: NOW }),
        ),
      });
      const error =
        refusal === 'the key'
          ? new UnauthorizedError('invalid api key')
          : new InterviewServiceError(ERROR_CODES.invalidRequest, false, 'interview_id: unknown');
      interviews.listReports.mockRejectedValue(error);
      const run = reconcileConnection('acme-greenhouse', {
        ...dependencies(store, context),
        ledger: new MemoryQueueLedger(),
      });
      if (refusal === 'the key') {
        await expect(run).rejects.toBe(error);
        expect(interviews.listReports).toHaveBeenCalledOnce();
      } else {
        expect((await run).failedInterviews).toHaveLength(3);
        expect(interviews.listReports).toHaveBeenCalledTimes(3);
      }
    }
  });

  it('enqueues the report of an invitation whose link the service withheld, long after it failed', async () => {
    const { reconcileConnection } = await import('../../../shared/pipeline');
    const { context, interviews } = fakeContext();
    const old = NOW - 30 * 86_400_000;
    // Each on an interview of its own, the candidate's e-mail the records' and the reports' default one.
    const failed = (id: string, who: string, steps: ApplicationRecord['steps']) =>
      applicationRecord({ atsApplicationId: id, interviewId: `int-${who}`, state: 'failed', steps, updatedAt: old });
    const store = new MemoryMappingStore().seed({
      jobs: [
        jobRecord({ atsJobId: '3301', state: 'ready', interviewId: 'int-withheld', updatedAt: old }),
        jobRecord({ atsJobId: '3302', state: 'ready', interviewId: 'int-refused', updatedAt: old }),
      ],
      applications: [
        failed('4401', 'withheld', { failureNoteLinkWithheld: { startedAt: old, doneAt: old } }),
        // Refused before anything reached the candidate: no report is awaited, and its interview is not read.
        failed('4402', 'refused', { failureNoteServiceRefused: { startedAt: old, doneAt: old } }),
      ],
    });
    interviews.listReports.mockImplementation(async ({ interview_id }: { interview_id: string }) => [
      reportFactory({ report_id: `rep-${interview_id}`, interview_id }),
    ]);
    const result = await reconcileConnection('acme-greenhouse', {
      ...dependencies(store, context),
      ledger: new MemoryQueueLedger(),
      now: () => NOW,
    });
    expect(result.enqueued.map((r) => r.reportId)).toEqual(['rep-int-withheld']);
    const read = interviews.listReports.mock.calls.map(([query]) => (query as { interview_id: string }).interview_id);
    expect([...new Set(read)]).toEqual(['int-withheld']);
  });

  it('enqueues no copy of a report come and waiting while its connection is backlogged; one after', async () => {
    const { reconcileConnection } = await import('../../../shared/pipeline');
    const { context, interviews } = fakeContext();
    // Its webhook came 40 minutes ago (past the ledger's grace) and its message still waits for the ATS's turns.
    const arrived = applicationRecord({
      interviewId: 'int-1',
      state: 'invited',
      candidateEmail: 'ana@example.com',
      steps: { inviteEmail: { doneAt: NOW - 3_600_000 }, reportArrived: { doneAt: NOW - 2_400_000, value: 'rep-1' } },
    });
    const store = new MemoryMappingStore().seed({
      jobs: [jobRecord({ state: 'ready', interviewId: 'int-1', updatedAt: NOW })],
      applications: [arrived],
    });
    interviews.listReports.mockResolvedValue([
      reportFactory({ report_id: 'rep-1', interview_id: 'int-1', candidate_email_id: 'ana@example.com' }),
    ]);
    const ledger = new MemoryQueueLedger();
    await ledger.recordBacklog('acme-greenhouse', NOW + 600_000);
    const deps = { ...dependencies(store, context), ledger, now: () => NOW };
    const waiting = await reconcileConnection('acme-greenhouse', deps);
    expect([waiting.enqueued, waiting.reportsFound]).toEqual([[], 1]);
    const over = await reconcileConnection('acme-greenhouse', { ...deps, now: () => NOW + 700_000 });
    expect(over.enqueued.map((r) => r.reportId)).toEqual(['rep-1']);
  });

  it('leaves a write-back of the same report claimed lately alone, and enqueues one claimed long ago', async () => {
    const { reconcileConnection } = await import('../../../shared/pipeline');
    const { context, interviews } = fakeContext();
    const claimed = (id: string, reportId: string, updatedAt: number) =>
      applicationRecord({
        atsApplicationId: id,
        interviewId: 'int-1',
        state: 'completed',
        candidateEmail: `${reportId.slice(4)}@example.com`,
        reportId,
        updatedAt,
      });
    const store = new MemoryMappingStore().seed({
      jobs: [jobRecord({ state: 'ready', interviewId: 'int-1', updatedAt: NOW })],
      applications: [claimed('4401', 'rep-waiting', NOW - 60_000), claimed('4402', 'rep-lost', NOW - 16 * 60_000)],
    });
    interviews.listReports.mockResolvedValue([
      reportFactory({ report_id: 'rep-waiting', interview_id: 'int-1', candidate_email_id: 'waiting@example.com' }),
      reportFactory({ report_id: 'rep-lost', interview_id: 'int-1', candidate_email_id: 'lost@example.com' }),
    ]);
    const result = await reconcileConnection('acme-greenhouse', {
      ...dependencies(store, context),
      ledger: new MemoryQueueLedger(),
      now: () => NOW,
    });
    expect(result.enqueued.map((r) => r.reportId)).toEqual(['rep-lost']);
  });

  it('reads on from the page a spent share stopped before, after the others: a big one starves none', async () => {
    const { reconcileConnection } = await import('../../../shared/pipeline');
    const { context, interviews } = fakeContext();
    const big = { connectionId: 'acme-greenhouse', atsJobId: '3301', triggerId: 'ai-screen' };
    const store = new MemoryMappingStore().seed({
      jobs: [
        jobRecord({ ...big, state: 'ready', interviewId: 'int-big', updatedAt: NOW }),
        jobRecord({ atsJobId: '3302', state: 'ready', interviewId: 'int-2', updatedAt: NOW }),
      ],
    });
    let share = new AbortController();
    const asked: string[] = [];
    const report = (interview_id: string, id: string) =>
      reportFactory({ report_id: id, interview_id, candidate_email_id: `${id}@example.com` });
    interviews.listReports.mockImplementation(
      async ({ interview_id, page }: { interview_id: string; page: number }) => {
        asked.push(`${interview_id}:${page}`);
        if (interview_id === 'int-2') return page === 1 ? [report(interview_id, 'small')] : [];
        // The first run's share runs out as it reads the big interview's third page.
        if (page === 3 && !share.signal.aborted && asked[0] === 'int-big:1') {
          share.abort();
          throw new Error('aborted');
        }
        return page <= 4 ? [report(interview_id, `big-${page}`)] : [];
      },
    );
    const deps = { ...dependencies(store, context), ledger: new MemoryQueueLedger(), now: () => NOW };
    const first = await reconcileConnection('acme-greenhouse', deps, share.signal);
    expect(first).toMatchObject({ cutShort: true });
    // What the pages before it held is enqueued; the job keeps where the reading goes on.
    expect(first.enqueued.map((r) => r.reportId)).toEqual(['big-1', 'big-2']);
    expect((await store.getJob(big))?.reportsReadFrom).toBe(3);
    share = new AbortController();
    asked.length = 0;
    const second = await reconcileConnection('acme-greenhouse', deps, share.signal);
    expect(asked).toEqual(['int-2:1', 'int-2:2', 'int-big:3', 'int-big:4', 'int-big:5']);
    expect(second.enqueued.map((r) => r.reportId)).toEqual(['small', 'big-3', 'big-4']);
    expect((await store.getJob(big))?.reportsReadFrom).toBeUndefined();
  });

  it('returns what it found when its share of the run ends mid-way, to be enqueued; the rest waits', async () => {
    const { reconcileConnection } = await import('../../../shared/pipeline');
    const { context, interviews } = fakeContext();
    const store = new MemoryMappingStore().seed({
      jobs: [
        jobRecord({ atsJobId: '3301', state: 'ready', interviewId: 'int-1', updatedAt: NOW }),
        jobRecord({ atsJobId: '3302', state: 'ready', interviewId: 'int-2', updatedAt: NOW }),
      ],
    });
    const share = new AbortController();
    interviews.listReports.mockImplementation(async ({ interview_id }: { interview_id: string }) => {
      if (interview_id === 'int-2') {
        share.abort();
        throw new Error('aborted');
      }
      return [reportFactory({ report_id: 'rep-1', interview_id, candidate_email_id: 'a@example.com' })];
    });
    const ledger = new MemoryQueueLedger();
    const result = await reconcileConnection(
      'acme-greenhouse',
      { ...dependencies(store, context), ledger, now: () => NOW },
      share.signal,
    );
    expect(result).toMatchObject({ cutShort: true, failedInterviews: [] });
    expect(result.enqueued.map((r) => r.reportId)).toEqual(['rep-1']);
  });
});
