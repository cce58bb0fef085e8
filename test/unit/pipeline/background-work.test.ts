import { describe, expect, it, vi } from 'vitest';
import { WORKER_TIMING } from '../../../shared/pipeline/constants';
import { pagedSubject, reportSubject, stageSubject } from '../../../shared/pipeline/ports';
import { followUpsDue } from '../../../shared/pipeline/follow-up-due';
import { reconcileConnection } from '../../../shared/pipeline/reconcile.use-case';
import { sweepConnection } from '../../../shared/pipeline/sweep.use-case';
import type { StageEnteredMessage } from '../../../shared/queue';
import { connectionDocument } from '../../helpers/connections';
import { dependencies, fakeContext, fakeStore, MemoryQueueLedger } from '../../helpers/pipeline-fakes';
import { applicationRecord, jobRecord, NOW, reportFactory } from '../../helpers/pipeline-records';
import type { ApplicationRecord } from '../../../shared/pipeline/records';

const CONNECTION = 'acme-greenhouse';

/** One ready interview with one invited candidate whose report is listed by the service. */
function oneInvitedCandidateWithAReport() {
  const store = fakeStore();
  const { context, interviews } = fakeContext();
  store.listJobs.mockResolvedValue([jobRecord({ state: 'ready', interviewId: 'int-1', updatedAt: NOW })]);
  store.listApplicationsByInterview.mockResolvedValue([
    applicationRecord({ interviewId: 'int-1', state: 'invited', candidateEmail: 'ana@example.com', updatedAt: NOW }),
  ]);
  interviews.listReports.mockResolvedValue([
    reportFactory({ report_id: 'rep-1', interview_id: 'int-1', candidate_email_id: 'ana@example.com' }),
  ]);
  const ledger = new MemoryQueueLedger();
  let now = NOW;
  const deps = { ...dependencies(store, context), ledger, now: () => now };
  return {
    deps,
    ledger,
    advance: (ms: number) => {
      now += ms;
    },
    store,
    interviews,
  };
}

describe('Use case: reconcileConnection enqueues only what was missed', () => {
  it('enqueues a report whose webhook never came once, however many runs find it while it is pending', async () => {
    const { deps, advance } = oneInvitedCandidateWithAReport();
    const first = await reconcileConnection(CONNECTION, deps);
    expect(first.enqueued.map((r) => r.reportId)).toEqual(['rep-1']);
    advance(60_000);
    const second = await reconcileConnection(CONNECTION, deps);
    expect(second.enqueued).toEqual([]);
    expect(second.pending).toBe(1);
  });

  it('leaves a report its webhook enqueued to that message, and enqueues it again after the grace period', async () => {
    const { deps, ledger, advance } = oneInvitedCandidateWithAReport();
    // The interview webhook's claim, as functions/interview-webhook records it before enqueueing.
    expect(await ledger.claimEnqueue(CONNECTION, reportSubject('rep-1'), NOW, WORKER_TIMING.enqueueGraceMs)).toBe(true);
    advance(5 * 60_000);
    expect((await reconcileConnection(CONNECTION, deps)).enqueued).toEqual([]);
    // Still not written back long after: its message was lost after all, and this run sends another.
    advance(WORKER_TIMING.enqueueGraceMs);
    expect((await reconcileConnection(CONNECTION, deps)).enqueued.map((r) => r.reportId)).toEqual(['rep-1']);
  });

  it('enqueues a report again at once when the records of a send that failed were taken back', async () => {
    const { deps, ledger } = oneInvitedCandidateWithAReport();
    expect((await reconcileConnection(CONNECTION, deps)).enqueued).toHaveLength(1);
    await ledger.forgetEnqueued(CONNECTION, [reportSubject('rep-1')]);
    expect((await reconcileConnection(CONNECTION, deps)).enqueued).toHaveLength(1);
  });
});

describe('Background work reads the open invitations, never every application of every job', () => {
  const OLD = NOW - WORKER_TIMING.reconcileWindowMs - 1;

  it("reconciles an old job's interview only while an invitation of it awaits its report", async () => {
    const { deps, store } = oneInvitedCandidateWithAReport();
    const invited = applicationRecord({ interviewId: 'int-1', state: 'invited', candidateEmail: 'ana@example.com' });
    store.listJobs.mockResolvedValue([
      jobRecord({ state: 'ready', interviewId: 'int-closed', atsJobId: 'j-closed', updatedAt: OLD }),
      jobRecord({ state: 'ready', interviewId: 'int-1', updatedAt: OLD }),
    ]);
    store.listApplicationsInStates.mockResolvedValue([invited]);
    const result = await reconcileConnection(CONNECTION, deps);
    expect(result.interviewsChecked).toBe(1);
    expect(result.enqueued.map((r) => r.reportId)).toEqual(['rep-1']);
    expect(store.listApplicationsInStates).toHaveBeenCalledWith(CONNECTION, expect.arrayContaining(['invited']));
    expect(store.listApplicationsByInterview.mock.calls).toEqual([['int-1']]);
    // Its invitation written back, the old job is not read at all.
    store.listApplicationsInStates.mockResolvedValue([]);
    store.listApplicationsByInterview.mockResolvedValue([{ ...invited, state: 'written_back', reportId: 'rep-1' }]);
    store.listApplicationsByInterview.mockClear();
    expect((await reconcileConnection(CONNECTION, deps)).interviewsChecked).toBe(0);
    expect(store.listApplicationsByInterview).not.toHaveBeenCalled();
  });

  it("reconciles a failed invitation's interview for the window after it failed (its link sent by hand)", async () => {
    const { deps, store, advance } = oneInvitedCandidateWithAReport();
    // The invitation's e-mail was refused: the recruiter was told to send the link by hand; a report is taken.
    const failed = applicationRecord({ interviewId: 'int-1', state: 'failed', candidateEmail: 'ana@example.com' });
    store.listJobs.mockResolvedValue([jobRecord({ state: 'ready', interviewId: 'int-1', updatedAt: OLD })]);
    store.listApplicationsInStates.mockResolvedValue([failed]);
    store.listApplicationsByInterview.mockResolvedValue([failed]);
    expect((await reconcileConnection(CONNECTION, deps)).enqueued.map((r) => r.reportId)).toEqual(['rep-1']);
    // Past the window since it failed, and still with no report: no longer read.
    advance(WORKER_TIMING.reconcileWindowMs + 1);
    store.listApplicationsByInterview.mockClear();
    expect((await reconcileConnection(CONNECTION, deps)).interviewsChecked).toBe(0);
    expect(store.listApplicationsByInterview).not.toHaveBeenCalled();
  });

  it('looks at a quiet invitation on its cadence: hourly after a day, daily after a week, else every run', async () => {
    const { deps, store, interviews, advance } = oneInvitedCandidateWithAReport();
    const HOUR = 3_600_000;
    // Invited three days ago, untaken since, and no report listed: looked at once an hour.
    interviews.listReports.mockResolvedValue([]);
    const quiet = applicationRecord({ interviewId: 'int-1', state: 'invited', updatedAt: NOW - 72 * HOUR });
    store.listJobs.mockResolvedValue([jobRecord({ state: 'ready', interviewId: 'int-1', updatedAt: OLD })]);
    store.listApplicationsInStates.mockResolvedValue([quiet]);
    store.listApplicationsByInterview.mockResolvedValue([quiet]);
    let looks = 0;
    const run = async () => {
      const result = await reconcileConnection(CONNECTION, deps);
      looks += result.interviewsChecked;
      // As the reconciler does once the run's reports are sent.
      await deps.ledger.recordEnqueued(CONNECTION, result.looked.map(pagedSubject), deps.now());
      return result;
    };
    await run();
    expect(looks).toBe(1);
    advance(10 * 60_000);
    await run();
    expect(looks).toBe(1);
    advance(HOUR);
    await run();
    expect(looks).toBe(2);
    // A week quiet: once a day from the last look. A look that failed is not a look: the next run tries again.
    store.listApplicationsInStates.mockResolvedValue([{ ...quiet, updatedAt: NOW - 8 * 24 * HOUR }]);
    advance(2 * HOUR);
    await run();
    expect(looks).toBe(2);
    advance(23 * HOUR);
    interviews.listReports.mockRejectedValueOnce(new Error('no answer'));
    expect((await run()).failedInterviews).toHaveLength(1);
    await run();
    expect(looks).toBe(4);
    advance(12 * HOUR);
    await run();
    expect(looks).toBe(4);
    advance(13 * HOUR);
    await run();
    expect(looks).toBe(5);
    // The invitation changes (a reminder, the candidate back in the stage): every run again.
    advance(10 * 60_000);
    store.listApplicationsInStates.mockResolvedValue([{ ...quiet, updatedAt: deps.now() - 60_000 }]);
    await run();
    expect(looks).toBe(6);
  });

  it('reads a quiet shared-link invitation every run while a reminder or expiry comes due in the hour', async () => {
    const HOUR = 3_600_000;
    const document = connectionDocument();
    const connection = document.connections[0] as { triggers: Record<string, unknown>[] };
    connection.triggers = connection.triggers.map((t) => ({ ...t, expireAfterDays: 4 }));
    const store = fakeStore();
    const { context, interviews } = fakeContext(document);
    interviews.listReports.mockResolvedValue([]);
    let now = NOW;
    const deps = { ...dependencies(store, context), ledger: new MemoryQueueLedger(), now: () => now };
    const run = async () => {
      const result = await reconcileConnection(CONNECTION, deps);
      await deps.ledger.recordEnqueued(CONNECTION, result.looked.map(pagedSubject), result.at);
      return result.interviewsChecked;
    };
    /** Quiet for three days; its expiry `expiresIn` from now (invited four days before that). */
    const invitation = (expiresIn: number, more: Partial<ApplicationRecord> = {}) => {
      const record = applicationRecord({
        interviewId: 'int-1',
        updatedAt: NOW - 72 * HOUR,
        steps: { inviteEmail: { doneAt: now + expiresIn - 96 * HOUR } },
        ...more,
      });
      store.listApplicationsInStates.mockResolvedValue([record]);
      store.listApplicationsByInterview.mockResolvedValue([record]);
    };
    store.listJobs.mockResolvedValue([jobRecord({ state: 'ready', interviewId: 'int-1', updatedAt: OLD })]);
    // Expiring in 30 minutes: a report found now stops the expiry, so every run reads it.
    invitation(30 * 60_000);
    expect([await run(), await run()]).toEqual([1, 1]);
    // Its expiry 12 hours off, or 2 hours overdue and not sent (the worker's to say why), or a per-candidate link
    // (the follow-up asks the service itself): the hourly cadence holds.
    for (const [expiresIn, more] of [
      [12 * HOUR, {}],
      [-2 * HOUR, {}],
      [30 * 60_000, { serviceCandidateId: 'svc-1' }],
    ] as const) {
      now += 2 * HOUR;
      invitation(expiresIn, more);
      expect([await run(), await run()]).toEqual([1, 0]);
    }
  });

  it('looks at a quiet interview again at the next run while a report it found is to send or pending', async () => {
    const { deps, store } = oneInvitedCandidateWithAReport();
    const quiet = applicationRecord({ interviewId: 'int-1', state: 'invited', updatedAt: NOW - 3 * 86_400_000 });
    store.listJobs.mockResolvedValue([jobRecord({ state: 'ready', interviewId: 'int-1', updatedAt: OLD })]);
    store.listApplicationsInStates.mockResolvedValue([quiet]);
    store.listApplicationsByInterview.mockResolvedValue([quiet]);
    const first = await reconcileConnection(CONNECTION, deps);
    expect(first.enqueued).toHaveLength(1);
    expect(first.looked).toEqual([]);
    const second = await reconcileConnection(CONNECTION, deps);
    expect([second.interviewsChecked, second.pending, second.looked]).toEqual([1, 1, []]);
  });

  it('returns the looks a cut-short share made, for the reconciler to record once its reports are sent', async () => {
    const { deps, store, interviews } = oneInvitedCandidateWithAReport();
    const quietSince = NOW - 3 * 86_400_000;
    const invitation = (interviewId: string) => applicationRecord({ interviewId, updatedAt: quietSince });
    store.listJobs.mockResolvedValue([
      jobRecord({ state: 'ready', interviewId: 'int-a', atsJobId: 'ja', updatedAt: OLD }),
      jobRecord({ state: 'ready', interviewId: 'int-b', atsJobId: 'jb', updatedAt: OLD }),
    ]);
    store.listApplicationsInStates.mockResolvedValue([invitation('int-a'), invitation('int-b')]);
    store.listApplicationsByInterview.mockImplementation(async (id: string) => [invitation(id)]);
    const share = new AbortController();
    interviews.listReports.mockImplementationOnce(async () => {
      share.abort();
      return [];
    });
    interviews.listReports.mockImplementationOnce(async () => {
      throw share.signal.reason;
    });
    const result = await reconcileConnection(CONNECTION, deps, share.signal);
    expect(result.cutShort).toBe(true);
    expect(result.looked).toEqual(['int-a']);
  });

  it('finds the follow-ups due among the invited applications alone, reading no job', async () => {
    const store = fakeStore();
    const document = connectionDocument();
    const connection = document.connections[0] as { triggers: Record<string, unknown>[] };
    connection.triggers = connection.triggers.map((t) => ({ ...t, reminders: { afterHours: 24, max: 1 } }));
    const { context } = fakeContext(document);
    const trigger = context.connection.triggers[0] as { id: string };
    store.listApplicationsInStates.mockResolvedValue([
      applicationRecord({ triggerId: trigger.id, steps: { inviteEmail: { doneAt: NOW } } }),
    ]);
    const due = await followUpsDue(context.connection, dependencies(store, context), NOW + 25 * 3_600_000);
    expect(due.map((d) => d.followUp)).toEqual([expect.objectContaining({ action: 'remind', reminder: 0 })]);
    expect(store.listApplicationsInStates).toHaveBeenCalledWith(context.connection.id, ['invited']);
    expect(store.listJobs).not.toHaveBeenCalled();
    expect(store.listApplicationsByInterview).not.toHaveBeenCalled();
  });
});

describe('Use case: sweepConnection runs on spare rate budget only', () => {
  /** A connection whose one trigger is due, and an ATS listing one application the connector does not know. */
  function sweepSetup() {
    const store = fakeStore();
    const { context, ats } = fakeContext(connectionDocument({ sweep: { everyMinutes: 0 } }));
    const listApplicationsInStage = vi.fn().mockResolvedValue({
      events: [
        {
          deliveryId: 'sweep-5501',
          atsApplicationId: '5501',
          atsCandidateId: '7701',
          atsJobId: '3301',
          stage: { id: '9001' },
          candidate: {},
        },
      ],
      next: undefined,
    });
    let waitMs = 0;
    Object.assign(ats, { listApplicationsInStage });
    // The connection's turns, as far as the sweep asks them: a near turn for a page's calls, or none.
    Object.assign(context, { turns: { take: vi.fn(), takeNear: async () => waitMs === 0 } });
    const ledger = new MemoryQueueLedger();
    const enqueued: StageEnteredMessage[] = [];
    const deps = {
      ...dependencies(store, context),
      ledger,
      enqueue: async (messages: StageEnteredMessage[]) => void enqueued.push(...messages),
    };
    return {
      deps,
      ledger,
      enqueued,
      listApplicationsInStage,
      spendWindow: (ms: number) => {
        waitMs = ms;
      },
    };
  }

  it('makes no ATS call while the ATS announced the connection’s window spent', async () => {
    const { deps, listApplicationsInStage, enqueued, spendWindow } = sweepSetup();
    spendWindow(4_000);
    const [trigger] = (await sweepConnection(CONNECTION, deps)).triggers;
    expect(trigger?.state).toBe('rate-limited');
    expect(listApplicationsInStage).not.toHaveBeenCalled();
    expect(enqueued).toEqual([]);
    spendWindow(0);
    expect((await sweepConnection(CONNECTION, deps)).triggers[0]?.state).toBe('done');
    expect(listApplicationsInStage).toHaveBeenCalledTimes(1);
  });

  it("makes no ATS call while the connection's queue holds messages deferred for the ATS; goes on after", async () => {
    const { deps, ledger, listApplicationsInStage, enqueued } = sweepSetup();
    await ledger.recordBacklog(CONNECTION, NOW + 30_000);
    const yielded = (await sweepConnection(CONNECTION, deps)).triggers[0];
    expect(yielded?.state).toBe('yielded');
    expect(listApplicationsInStage).not.toHaveBeenCalled();
    const later = (await sweepConnection(CONNECTION, { ...deps, now: () => NOW + 31_000 })).triggers[0];
    expect(later?.state).toBe('done');
    expect(enqueued.map((m) => m.event.atsApplicationId)).toEqual(['5501']);
  });

  it('says an ATS refusing the list for good as an error once a day, a warning on the runs between', async () => {
    const { deps, listApplicationsInStage } = sweepSetup();
    listApplicationsInStage.mockRejectedValue(Object.assign(new Error('401'), { code: 'ATS_AUTH', retryable: false }));
    for (const minutes of [0, 10, 20]) {
      const run = await sweepConnection(CONNECTION, { ...deps, now: () => NOW + minutes * 60_000 });
      expect(run.triggers[0]).toMatchObject({ state: 'failed', reason: 'ATS_AUTH' });
    }
    expect(deps.logger.error).toHaveBeenCalledTimes(1);
    expect(deps.logger.warn).toHaveBeenCalledTimes(2);
    expect(deps.logger.warn).toHaveBeenCalledWith(expect.stringMatching(/could not be read \(still/), {
      connectionId: CONNECTION,
      triggerId: 'ai-screen',
      code: 'ATS_AUTH',
    });
  });

  it('does not enqueue again a stage change whose webhook message is pending, nor one it enqueued itself', async () => {
    const { deps, ledger, enqueued } = sweepSetup();
    await ledger.recordEnqueued(CONNECTION, [stageSubject('5501')], NOW - 60_000);
    const first = (await sweepConnection(CONNECTION, deps)).triggers[0];
    expect(first).toMatchObject({ state: 'done', listed: 1, pending: 1, enqueued: 0 });
    const afterGrace = { ...deps, now: () => NOW + WORKER_TIMING.enqueueGraceMs };
    expect((await sweepConnection(CONNECTION, afterGrace)).triggers[0]).toMatchObject({ enqueued: 1 });
    expect((await sweepConnection(CONNECTION, afterGrace)).triggers[0]).toMatchObject({ enqueued: 0, pending: 1 });
    expect(enqueued).toHaveLength(1);
  });
});
