import { describe, expect, it, vi } from 'vitest';
import { handleFollowUp } from '../../../shared/pipeline/follow-up.use-case';
import { handleReportCreated } from '../../../shared/pipeline/report-created.use-case';
import { type DeliveredReport, markDeliveredReport } from '../../../shared/pipeline/interview-taken';
import { WORKER_TIMING } from '../../../shared/pipeline/constants';
import { keptBack } from '../../../shared/pacing';
import { InterviewServiceError } from '../../../shared/interview-service/errors';
import { ERROR_CODES } from '../../../shared/interview-service/constants';
import { connectionDocument } from '../../helpers/connections';
import { MemoryMappingStore } from '../../helpers/memory-store';
import { dependencies, fakeContext } from '../../helpers/pipeline-fakes';
import * as records from '../../helpers/pipeline-records';

const { NOW } = records;

const HOUR = 3_600_000;
const key = { connectionId: 'acme-greenhouse', atsApplicationId: '4401', triggerId: 'ai-screen' };

/**
 * Application 4401 invited at NOW as the service's candidate cand-1 (`reminded`: its one reminder sent), its reminder
 * due a day later, its expiry after 7 days.
 */
function invitedAtService(serviceCandidateId: string | null = 'cand-1', reminded = false) {
  const document = connectionDocument({ writeBack: { status: 'tags' } });
  const connection = document.connections[0] as { triggers: Record<string, unknown>[] };
  connection.triggers = connection.triggers.map((t) => ({
    ...t,
    reminders: { afterHours: 24, max: 1 },
    expireAfterDays: 7,
  }));
  const { context, ats, interviews } = fakeContext(document);
  Object.assign(ats, { setStatusTag: vi.fn().mockResolvedValue(undefined) });
  const store = new MemoryMappingStore().seed({
    jobs: [
      records.jobRecord({ state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined }),
    ],
    applications: [
      records.applicationRecord({
        state: 'invited',
        serviceCandidateId: serviceCandidateId ?? undefined,
        steps: { inviteEmail: { doneAt: NOW }, ...(reminded ? { reminder1: { doneAt: NOW } } : {}) },
      }),
    ],
  });
  const deps = dependencies(store, context);
  return { store, deps, ats, interviews, context };
}

const followUp = (action: 'remind' | 'expire') =>
  records.followUpMessage(action, action === 'remind' ? { reminder: 0 } : {});

/** When each follow-up is due. */
const dueAt = { remind: NOW + 25 * HOUR, expire: NOW + 8 * 24 * HOUR };

/** The report's worker marks the invitation while the follow-up reads where the candidate stands in the ATS. */
function markedDuringAtsRead(store: MemoryMappingStore, ats: ReturnType<typeof invitedAtService>['ats']) {
  ats.readStanding.mockImplementation(async () => {
    const invited = await store.getApplication(key);
    if (invited) await store.recordStep(invited, { step: { name: 'reportArrived', record: { doneAt: NOW } } });
    return { active: true };
  });
}

/** A write-back's turn far off, as the turns answer it (turn.test.ts): what it says before it waits, then back. */
function farTurn() {
  const later = keptBack('writeBack', 30_000, { at: NOW + 32_000, calls: 4, step: 'writeBack' });
  const take = async (_s: string, _h: unknown, _g: unknown, beforeWait?: () => Promise<void>): Promise<void> => {
    await beforeWait?.();
    throw later;
  };
  return { later, take };
}

describe('Use case: a follow-up for a candidate who took the interview, its report not written back yet', () => {
  it('neither reminds nor expires one the service lists a report of; the ATS is not even read', async () => {
    for (const action of ['remind', 'expire'] as const) {
      const { store, deps, ats, interviews } = invitedAtService('cand-1', action === 'expire');
      deps.now = () => dueAt[action];
      interviews.listReports.mockResolvedValue([records.reportFactory({ candidate_id: 'cand-1' })]);
      expect(await handleFollowUp(followUp(action), deps)).toEqual({ outcome: 'taken' });
      expect(interviews.listReports).toHaveBeenCalledWith(
        { interview_id: 'int-1', candidate_id: 'cand-1' },
        expect.anything(),
      );
      expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
      expect(ats.readStanding).not.toHaveBeenCalled();
      expect(ats.postNote).not.toHaveBeenCalled();
      expect(await store.getApplication(key)).toMatchObject({ state: 'invited', steps: { inviteEmail: {} } });
      if (action === 'remind') expect((await store.getApplication(key))?.steps.reminder1).toBeUndefined();
    }
  });

  it("reminds one the service lists no report of (another candidate's does not count)", async () => {
    const { deps, interviews } = invitedAtService();
    deps.now = () => dueAt.remind;
    interviews.listReports.mockResolvedValue([records.reportFactory({ candidate_id: 'cand-2' })]);
    expect(await handleFollowUp(followUp('remind'), deps)).toEqual({ outcome: 'reminded' });
    expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(1);
  });

  it('goes on when the service refuses to say or does not answer: the reminder is sent as before', async () => {
    for (const error of [
      new InterviewServiceError(ERROR_CODES.unauthorized, false, 'bad key'),
      new InterviewServiceError(ERROR_CODES.unavailable, true, 'no answer'),
    ]) {
      const { deps, interviews } = invitedAtService();
      deps.now = () => dueAt.remind;
      interviews.listReports.mockRejectedValue(error);
      expect(await handleFollowUp(followUp('remind'), deps)).toEqual({ outcome: 'reminded' });
      expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(1);
    }
  });

  it('asks the service before booking a turn: one it shows taken takes no turn on the ATS', async () => {
    const { deps, context, interviews } = invitedAtService();
    deps.now = () => dueAt.remind;
    interviews.listReports.mockResolvedValue([records.reportFactory({ candidate_id: 'cand-1' })]);
    const take = vi.fn().mockResolvedValue(undefined);
    (context as { turns?: unknown }).turns = { take };
    expect(await handleFollowUp(followUp('remind'), deps)).toEqual({ outcome: 'taken' });
    expect(take).not.toHaveBeenCalled();
  });

  it("asks the service nothing for a follow-up not due, or an invitation not the candidate's own", async () => {
    const early = invitedAtService();
    early.deps.now = () => NOW + HOUR;
    expect(await handleFollowUp(followUp('remind'), early.deps)).toEqual({ outcome: 'not-due' });
    expect(early.interviews.listReports).not.toHaveBeenCalled();

    const shared = invitedAtService(null);
    shared.deps.now = () => dueAt.remind;
    expect(await handleFollowUp(followUp('remind'), shared.deps)).toEqual({ outcome: 'reminded' });
    expect(shared.interviews.listReports).not.toHaveBeenCalled();
  });

  it('marks the invitation when its report goes back for its turn: no reminder or expiry is sent', async () => {
    const { store, deps, context, interviews, ats } = invitedAtService(null);
    interviews.listReports.mockResolvedValue([records.reportFactory({ candidate_email_id: 'ana@example.com' })]);
    const later = keptBack('writeBack', 30_000, { at: NOW + 32_000, calls: 4, step: 'writeBack' });
    // As the turns do (turn.test.ts): what the message says before it waits, then back to the queue.
    const take = vi.fn(
      async (_step: string, _held: unknown, _signal: unknown, beforeWait?: () => Promise<void>): Promise<void> => {
        await beforeWait?.();
        throw later;
      },
    );
    (context as { turns?: unknown }).turns = { take };
    expect(await handleReportCreated(records.reportCreatedMessage(), deps).catch((error: unknown) => error)).toBe(
      later,
    );
    const marked = await store.getApplication(key);
    expect(marked).toMatchObject({ state: 'invited', steps: { reportArrived: { doneAt: NOW } } });
    // A second return marks nothing more.
    expect(await handleReportCreated(records.reportCreatedMessage(), deps).catch((error: unknown) => error)).toBe(
      later,
    );
    expect((await store.getApplication(key))?.updatedAt).toBe(marked?.updatedAt);
    deps.now = () => dueAt.remind;
    take.mockClear().mockImplementation(async () => undefined);
    expect(await handleFollowUp(followUp('remind'), deps)).toEqual({ outcome: 'not-due' });
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    // Not due by its record, the reminder books no turn on the ATS and reads nothing there.
    expect(take).not.toHaveBeenCalled();
    expect(ats.readStanding).not.toHaveBeenCalled();
  });

  it('marks the invitation, once, when its turn cannot be booked: it goes back, and no reminder is sent', async () => {
    const { store, deps, context, interviews } = invitedAtService(null);
    interviews.listReports.mockResolvedValue([records.reportFactory({ candidate_email_id: 'ana@example.com' })]);
    const busy = new Error('the schedule changed under 4 reservations');
    const recordStep = vi.spyOn(store, 'recordStep');
    (context as { turns?: unknown }).turns = { take: vi.fn().mockRejectedValue(busy) };
    expect(await handleReportCreated(records.reportCreatedMessage(), deps).catch((error: unknown) => error)).toBe(busy);
    expect(await store.getApplication(key)).toMatchObject({ state: 'invited', steps: { reportArrived: {} } });
    expect(recordStep).toHaveBeenCalledTimes(1);
    expect(await handleFollowUp(followUp('remind'), { ...deps, now: () => dueAt.remind })).toEqual({
      outcome: 'not-due',
    });
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    // A far turn: marked before it goes back, and not again on its way back.
    const far = invitedAtService(null);
    far.interviews.listReports.mockResolvedValue([records.reportFactory({ candidate_email_id: 'ana@example.com' })]);
    const farSteps = vi.spyOn(far.store, 'recordStep');
    (far.context as { turns?: unknown }).turns = { take: farTurn().take };
    await handleReportCreated(records.reportCreatedMessage(), far.deps).catch(() => undefined);
    expect(farSteps).toHaveBeenCalledTimes(1);
  });

  it('marks the invitation while its report waits in the worker for a near turn; not for a turn now', async () => {
    const { deps, context, interviews } = invitedAtService(null);
    interviews.listReports.mockResolvedValue([records.reportFactory({ candidate_email_id: 'ana@example.com' })]);
    // The reminder comes due while the report waits for its turn: it is not sent.
    const during: unknown[] = [];
    const reminderDuringWait = async () => {
      during.push(await handleFollowUp(followUp('remind'), { ...deps, now: () => dueAt.remind }));
    };
    // The report's turn is near: what it says first, then the wait, during which the reminder runs (its own turn now).
    const take = vi.fn(async (step: string, _held: unknown, _signal: unknown, beforeWait?: () => Promise<void>) => {
      if (!step.startsWith('writeBack')) return;
      await beforeWait?.();
      await reminderDuringWait();
    });
    (context as { turns?: unknown }).turns = { take };
    expect(await handleReportCreated(records.reportCreatedMessage(), deps)).toMatchObject({ outcome: 'written-back' });
    expect(during).toEqual([{ outcome: 'not-due' }]);
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();

    const now = invitedAtService(null);
    now.interviews.listReports.mockResolvedValue([records.reportFactory({ candidate_email_id: 'ana@example.com' })]);
    const recordStep = vi.spyOn(now.store, 'recordStep');
    (now.context as { turns?: unknown }).turns = { take: vi.fn(async () => undefined) };
    expect(await handleReportCreated(records.reportCreatedMessage(), now.deps)).toMatchObject({
      outcome: 'written-back',
    });
    expect(JSON.stringify(recordStep.mock.calls)).not.toContain('reportArrived');
    expect(recordStep).toHaveBeenCalled();
  });

  it("sends no reminder whose report comes during the look at the ATS, just before the reminder's begin", async () => {
    const { store, deps, ats } = invitedAtService(null);
    deps.now = () => dueAt.remind;
    markedDuringAtsRead(store, ats);
    expect(await handleFollowUp(followUp('remind'), deps)).toEqual({ outcome: 'not-due' });
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect((await store.getApplication(key))?.steps.reminder1).toBeUndefined();
  });

  it('expires no invitation whose report comes during the look at the ATS, just before the expiry', async () => {
    const { store, deps, ats } = invitedAtService(null, true);
    deps.now = () => dueAt.expire;
    markedDuringAtsRead(store, ats);
    expect(await handleFollowUp(followUp('expire'), deps)).toEqual({ outcome: 'not-due' });
    expect(await store.getApplication(key)).toMatchObject({ state: 'invited' });
    expect(ats.postNote).not.toHaveBeenCalled();
  });

  it('looks again once its turn has come: a report that came while the reminder waited stops it', async () => {
    const { store, deps, context } = invitedAtService(null);
    deps.now = () => dueAt.remind;
    const arrives = async () => {
      const record = await store.getApplication(key);
      if (record)
        await store.recordStep(record, { step: { name: 'reportArrived', record: { doneAt: NOW } }, round: 0 });
    };
    (context as { turns?: unknown }).turns = { take: vi.fn(arrives) };
    expect(await handleFollowUp(followUp('remind'), deps)).toEqual({ outcome: 'taken' });
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
  });
});

describe("Use case: the report's webhook marks its invitation, before the report waits in the queue", () => {
  /** The delivery as the webhook reads it (report rep-1 unless it names another), on `invitedAtService`'s context. */
  const deliver = (
    world: ReturnType<typeof invitedAtService>,
    delivery: Omit<DeliveredReport, 'reportId'> & { reportId?: string },
  ) =>
    markDeliveredReport({
      context: world.context,
      deps: world.deps,
      log: {},
      delivery: { reportId: 'rep-1', ...delivery },
    });
  const withReminders = (serviceCandidateId: string | null) => {
    const world = invitedAtService(serviceCandidateId);
    if (serviceCandidateId)
      Object.assign(world.context.connection.interviewService, {
        invites: { mode: 'per-candidate', emailedBy: 'connector' },
      });
    return world;
  };

  it('marks a shared-link invitation by interview and e-mail: no reminder goes; the worker marks no more', async () => {
    const world = withReminders(null);
    await deliver(world, { interviewId: 'int-1', candidateId: 'c-9', candidateEmail: ' Ana@Example.com' });
    expect(await world.store.getApplication(key)).toMatchObject({
      state: 'invited',
      steps: { reportArrived: { doneAt: NOW } },
    });
    expect(await handleFollowUp(followUp('remind'), { ...world.deps, now: () => dueAt.remind })).toEqual({
      outcome: 'not-due',
    });
    expect(world.deps.mailer.sendInvite).not.toHaveBeenCalled();
    // The report's worker finds it marked: its wait for a far turn writes nothing more.
    world.interviews.listReports.mockResolvedValue([records.reportFactory({ candidate_email_id: 'ana@example.com' })]);
    const recordStep = vi.spyOn(world.store, 'recordStep');
    const { later, take } = farTurn();
    (world.context as { turns?: unknown }).turns = { take };
    expect(await handleReportCreated(records.reportCreatedMessage(), world.deps).catch((e: unknown) => e)).toBe(later);
    expect(recordStep).not.toHaveBeenCalled();
  });

  /** Application 4401 held by the invite worker: e-mailed (its record carried), its note and status not yet written. */
  const beingFinished = (serviceCandidateId: string | null) => {
    const world = withReminders(serviceCandidateId);
    const held = { state: 'claimed' as const, leaseOwner: 'invite', leaseUntil: NOW + 60_000 };
    const steps = { inviteEmail: { startedAt: NOW } };
    world.store.seed({ applications: [records.applicationRecord({ ...held, steps, serviceCandidateId: undefined })] });
    return world;
  };
  /** The invite worker's last write: the e-mail and the note recorded, the status shown, the invitation open. */
  const finishInvite = (world: ReturnType<typeof beingFinished>) =>
    world.store.recordStep(key, {
      owner: 'invite',
      step: { name: 'status', record: { doneAt: NOW, value: 'invited' } },
      before: [
        { name: 'inviteEmail', record: { startedAt: NOW, doneAt: NOW } },
        { name: 'inviteNote', record: { doneAt: NOW } },
      ],
      finish: 'invited',
    });

  it('marks a shared-link invitation still being finished: once invited, no reminder goes', async () => {
    // The candidate took the interview from the e-mail before the invite worker posted its note and status.
    const world = beingFinished(null);
    await deliver(world, { interviewId: 'int-1', candidateId: 'c-9', candidateEmail: 'ana@example.com' });
    expect(await world.store.getApplication(key)).toMatchObject({
      state: 'claimed',
      steps: { reportArrived: { doneAt: NOW, value: 'rep-1' } },
    });
    await finishInvite(world);
    expect(await world.store.getApplication(key)).toMatchObject({ state: 'invited', steps: { reportArrived: {} } });
    const reminder = await handleFollowUp(followUp('remind'), { ...world.deps, now: () => dueAt.remind });
    expect(reminder.outcome).not.toBe('reminded');
    expect(world.deps.mailer.sendInvite).not.toHaveBeenCalled();
  });

  it('marks an invitation still being finished when its report waits for a far turn in the worker', async () => {
    const world = beingFinished(null);
    world.interviews.listReports.mockResolvedValue([records.reportFactory({ candidate_email_id: 'ana@example.com' })]);
    const { later, take } = farTurn();
    (world.context as { turns?: unknown }).turns = { take };
    expect(await handleReportCreated(records.reportCreatedMessage(), world.deps).catch((e: unknown) => e)).toBe(later);
    expect((await world.store.getApplication(key))?.steps.reportArrived).toEqual({ doneAt: NOW, value: 'rep-1' });
  });

  it("marks a per-candidate invitation by the service's candidate id; another candidate's marks none", async () => {
    const other = withReminders('cand-1');
    await deliver(other, { interviewId: 'int-1', candidateId: 'cand-2' });
    expect((await other.store.getApplication(key))?.steps.reportArrived).toBeUndefined();
    const own = withReminders('cand-1');
    await deliver(own, { interviewId: 'int-1', candidateId: 'cand-1' });
    expect((await own.store.getApplication(key))?.steps.reportArrived).toEqual({ doneAt: NOW, value: 'rep-1' });
  });

  it('reads nothing where no trigger follows up, or a shared link whose delivery carries no e-mail', async () => {
    const world = withReminders(null);
    const byEmail = vi.spyOn(world.store, 'findApplicationByInterview');
    await deliver(world, { interviewId: 'int-1', candidateId: 'c-9' });
    for (const trigger of world.context.connection.triggers)
      Object.assign(trigger, { reminders: undefined, expireAfterDays: undefined });
    await deliver(world, { interviewId: 'int-1', candidateId: 'c-9', candidateEmail: 'ana@example.com' });
    expect(byEmail).not.toHaveBeenCalled();
    expect((await world.store.getApplication(key))?.steps.reportArrived).toBeUndefined();
  });

  it('answers all the same when the store fails: the failure is logged, the worker marks it later', async () => {
    const world = withReminders(null);
    vi.spyOn(world.store, 'findApplicationByInterview').mockRejectedValue(new Error('throttled'));
    await deliver(world, { interviewId: 'int-1', candidateId: 'c-9', candidateEmail: 'ana@example.com' });
    expect(world.deps.logger.warn).toHaveBeenCalledWith(
      'report: its invitation could not be read at its webhook',
      expect.objectContaining({ code: expect.any(String) }),
    );
  });

  it('takes the mark back when its report is parked as unmatched: the invitation is reminded as before', async () => {
    const world = withReminders(null);
    // A delivery of a report the service never lists (sent in error, or by someone holding the webhook's token).
    await deliver(world, {
      reportId: 'rep-9',
      interviewId: 'int-1',
      candidateId: 'c-9',
      candidateEmail: 'ana@example.com',
    });
    expect((await world.store.getApplication(key))?.steps.reportArrived?.value).toBe('rep-9');
    world.interviews.listReports.mockResolvedValue([]);
    const lastLook = { receiveCount: WORKER_TIMING.reportNotFoundReceives };
    const message = records.reportCreatedMessage({ reportId: 'rep-9', candidateEmail: 'ana@example.com' });
    expect(await handleReportCreated(message, world.deps, lastLook)).toMatchObject({ outcome: 'unmatched' });
    expect((await world.store.getApplication(key))?.steps.reportArrived).toBeUndefined();
    expect(await handleFollowUp(followUp('remind'), { ...world.deps, now: () => dueAt.remind })).toEqual({
      outcome: 'reminded',
    });
  });

  it("keeps another report's mark when a report is parked", async () => {
    const world = withReminders(null);
    await deliver(world, { interviewId: 'int-1', candidateId: 'c-9', candidateEmail: 'ana@example.com' });
    world.interviews.listReports.mockResolvedValue([]);
    const message = records.reportCreatedMessage({ reportId: 'rep-9', candidateEmail: 'ana@example.com' });
    const lastLook = { receiveCount: WORKER_TIMING.reportNotFoundReceives };
    expect(await handleReportCreated(message, world.deps, lastLook)).toMatchObject({ outcome: 'unmatched' });
    expect((await world.store.getApplication(key))?.steps.reportArrived).toEqual({ doneAt: NOW, value: 'rep-1' });
  });
});
