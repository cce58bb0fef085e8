import { expect, it } from 'vitest';
import type { ApplicationClaimInput, ApplicationState, MappingStore, StepWrite } from '../../shared/pipeline';

/** The clock of the rules: leases are held or run out relative to it. */
/**
 * The rules' clock, years ahead of the machine's: DynamoDB Local deletes an item whose TTL has passed within seconds
 * (measured: an item expired a week ago was gone at the next 15-s scan), so no record these rules write (an exit mark
 * lasts 3 days, a replay key an hour) may expire in real time while a test reads it back.
 */
export const NOW = Date.UTC(2036, 10, 21, 12, 0, 0);
export const lease = (owner: string, now = NOW) => ({ owner, now, durationMs: 60_000 });
let counter = 0;
/** A new application × trigger each call, of its own candidate. */
export const claimInput = (): ApplicationClaimInput => ({
  connectionId: 'acme',
  atsApplicationId: `app-${++counter}`,
  triggerId: 'ai-screen',
  atsCandidateId: `cand-${counter}`,
  atsJobId: '3301',
  stageId: '9001',
  candidateEmail: `c${counter}@example.com`,
});
export const delivery = (deliveryId: string, enqueueId = deliveryId) => ({
  source: 'greenhouse:acme',
  deliveryId,
  enqueueId,
});

/**
 * The mapping store's business rules, one suite for every implementation of the port: the DynamoDB repositories
 * (test/integration/mapping/mapping.store.test.ts) and the in-memory store the use-case tests use
 * (test/unit/mapping/memory-store.test.ts) must both hold them.
 */
export function mappingRules(store: () => MappingStore): void {
  /** The invite e-mail recorded by the claim's holder; `last` ends the invitation. */
  const emailed = (owner: string, interviewId: string, last: boolean): StepWrite => ({
    owner,
    step: { name: 'inviteEmail', record: { doneAt: NOW } },
    data: { interviewId },
    ...(last ? { finish: 'invited' } : {}),
  });

  it('claims a new application once and reports the same delivery from another enqueue as a duplicate', async () => {
    const input = claimInput();
    const first = await store().claimApplication(delivery('evt-1', 'enq-1'), input, lease('w1'));
    expect(first).toMatchObject({ kind: 'claimed', resumed: false, record: { state: 'claimed', leaseOwner: 'w1' } });
    expect(await store().claimApplication(delivery('evt-1', 'enq-2'), input, lease('w2'))).toEqual({
      kind: 'duplicate-delivery',
    });
  });

  it('claims an application the ATS said left only after a read (exitReadAt); a record governs itself', async () => {
    const input = claimInput();
    await store().noteExitSeen(input.connectionId, input.atsApplicationId, NOW - 1_000);
    expect(await store().claimApplication(delivery('evt-x1'), input, lease('w1'))).toEqual({ kind: 'exit-seen' });
    // A rejection marked during the read (after it began) still holds the claim.
    const during = { ...input, exitReadAt: NOW - 2_000 };
    expect(await store().claimApplication(delivery('evt-x1'), during, lease('w1'))).toEqual({ kind: 'exit-seen' });
    // Nothing was recorded: the same delivery claims once a read begun after the mark found the candidate in.
    const checked = { ...input, exitReadAt: NOW - 500 };
    expect(await store().claimApplication(delivery('evt-x1'), checked, lease('w1'))).toMatchObject({ kind: 'claimed' });
    // With a record, its own state says whether the candidate left: the mark holds nothing.
    expect(await store().claimApplication(delivery('evt-x2'), input, lease('w2'))).toMatchObject({
      kind: 'held-elsewhere',
    });
    expect(await store().exitSeenAt(input.connectionId, input.atsApplicationId, NOW)).toBe(NOW - 1_000);
    // A mark lasts three days.
    expect(await store().exitSeenAt(input.connectionId, input.atsApplicationId, NOW + 4 * 86_400_000)).toBeUndefined();
    const later = claimInput();
    await store().noteExitSeen(later.connectionId, later.atsApplicationId, NOW - 4 * 86_400_000);
    expect(await store().claimApplication(delivery('evt-x3'), later, lease('w1'))).toMatchObject({ kind: 'claimed' });
  });

  it('holds a retry of the same message until the first lease runs out, then lets it take over', async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-2', 'enq-9'), input, lease('w1'));
    expect(await store().claimApplication(delivery('evt-2', 'enq-9'), input, lease('w2', NOW + 1000))).toMatchObject({
      kind: 'held-elsewhere',
    });
    const takeover = await store().claimApplication(delivery('evt-2', 'enq-9'), input, lease('w3', NOW + 61_000));
    expect(takeover).toMatchObject({ kind: 'claimed', resumed: true, record: { leaseOwner: 'w3' } });
    await expect(store().recordStep(input, { owner: 'w1', finish: 'invited' })).rejects.toMatchObject({
      code: 'lease-lost',
    });
  });

  it('reports an invited application as already invited to a later stage entry', async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-3'), input, lease('w1'));
    await store().recordStep(input, emailed('w1', 'int-3', true));
    const again = await store().claimApplication(delivery('evt-3b'), input, lease('w2'));
    expect(again).toMatchObject({ kind: 'already-invited', record: { state: 'invited', interviewId: 'int-3' } });
    expect(again.kind === 'already-invited' && again.record.leaseOwner).toBeFalsy();
  });

  it('re-claims a failed invite on a new stage entry, keeping its steps; never a failed write-back', async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-f1'), input, lease('w1'));
    await store().recordStep(input, emailed('w1', 'int-f', false));
    await store().markApplicationFailed(input, 'w1', 'ats-unauthorized: POST /v3/notes: 401');
    // The delivery that failed, again: still a duplicate.
    expect(await store().claimApplication(delivery('evt-f1', 'enq-other'), input, lease('w2'))).toEqual({
      kind: 'duplicate-delivery',
    });
    // The candidate entered the stage anew once the key was fixed: a new delivery re-claims it, e-mail step kept.
    const again = await store().claimApplication(delivery('evt-f2'), input, lease('w3', NOW + 5000));
    expect(again).toMatchObject({
      kind: 'claimed',
      resumed: true,
      record: { state: 'claimed', leaseOwner: 'w3', steps: { inviteEmail: { doneAt: NOW } }, interviewId: 'int-f' },
    });
    expect(again.kind === 'claimed' && again.record.failureReason).toBeUndefined();
    // Two new deliveries at once: one re-claims, the other finds it held.
    await store().markApplicationFailed(input, 'w3', 'ats-forbidden: 403');
    const racing = await Promise.all([
      store().claimApplication(delivery('evt-f3'), input, lease('w4', NOW + 9000)),
      store().claimApplication(delivery('evt-f4'), input, lease('w5', NOW + 9000)),
    ]);
    expect(racing.map((r) => r.kind).sort()).toEqual(['claimed', 'held-elsewhere']);

    const written = claimInput();
    await store().claimApplication(delivery('evt-w1'), written, lease('w1'));
    await store().recordStep(written, emailed('w1', 'int-w', true));
    await store().claimWriteBack(written, 'rep-w', lease('wb'));
    await store().markApplicationFailed(written, 'wb', 'ats-forbidden: 403');
    expect(await store().claimApplication(delivery('evt-w2'), written, lease('w6'))).toMatchObject({
      kind: 'already-invited',
      record: { state: 'failed', reportId: 'rep-w' },
    });
  });

  it("takes a report for a failed invitation, its failure over; never a failed write-back's other report", async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-r1'), input, lease('w1'));
    await store().markApplicationFailed(input, 'w1', 'invalid-request: the link was refused');
    const claimed = await store().claimWriteBack(input, 'rep-r', lease('wb', NOW + 1000));
    expect(claimed).toMatchObject({ kind: 'claimed', record: { state: 'completed', reportId: 'rep-r' } });
    expect(claimed.record.failureReason).toBeUndefined();
    await store().markApplicationFailed(input, 'wb', 'ats-forbidden: 403');
    expect(await store().claimWriteBack(input, 'rep-other', lease('wb2', NOW + 200_000))).toMatchObject({
      kind: 'other-report',
      record: { state: 'failed', reportId: 'rep-r' },
    });
  });

  it('elects exactly one creator among ten concurrent job leases', async () => {
    const key = { connectionId: 'acme', atsJobId: 'job-race', triggerId: 'ai-screen' };
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store().leaseJob(key, { interviewName: 'n', templateHash: 'h' }, lease(`w${i}`)),
      ),
    );
    expect(results.filter((r) => r.kind === 'leased')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'busy')).toHaveLength(9);
    const winner = results.find((r) => r.kind === 'leased')!.record.leaseOwner as string;
    await expect(
      store().completeJob(key, 'not-the-winner', { interviewId: 'x', inviteUrl: 'u', templateHash: 'h' }),
    ).rejects.toMatchObject({ code: 'lease-lost' });
    const ready = await store().completeJob(key, winner, {
      interviewId: 'int-race',
      inviteUrl: 'https://i/int-race',
      templateHash: 'h',
    });
    expect(ready).toMatchObject({ state: 'ready', interviewId: 'int-race', createAttempts: 1 });
    expect(await store().leaseJob(key, { interviewName: 'n', templateHash: 'h' }, lease('late'))).toMatchObject({
      kind: 'ready',
    });
  });

  it("keeps where a job's reports are read on from, its updatedAt untouched; none on a job removed", async () => {
    const key = { connectionId: 'acme', atsJobId: `job-paged-${Date.now()}`, triggerId: 'ai-screen' };
    const { record } = (await store().leaseJob(key, { interviewName: 'n', templateHash: 'h' }, lease('w'))) as {
      record: { updatedAt: number };
    };
    await store().recordReportsReadFrom(key, 7);
    expect(await store().getJob(key)).toMatchObject({ reportsReadFrom: 7, updatedAt: record.updatedAt });
    await store().recordReportsReadFrom(key, undefined);
    expect((await store().getJob(key))?.reportsReadFrom).toBeUndefined();
    const gone = { ...key, atsJobId: `gone-paged-${Date.now()}` };
    await store().recordReportsReadFrom(gone, 3);
    expect(await store().getJob(gone)).toBeUndefined();
  });

  it('counts a second creation lease, so the next creator looks the interview up first', async () => {
    const key = { connectionId: 'acme', atsJobId: 'job-crash', triggerId: 'ai-screen' };
    await store().leaseJob(key, { interviewName: 'n', templateHash: 'h' }, lease('crashed'));
    const second = await store().leaseJob(key, { interviewName: 'n', templateHash: 'h' }, lease('next', NOW + 61_000));
    expect(second).toMatchObject({ kind: 'leased', record: { createAttempts: 2, leaseOwner: 'next' } });
  });

  it('finds by interview and e-mail, claims the write-back once, resumes it after a crash', async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-4'), input, lease('w1'));
    await store().recordStep(input, {
      ...emailed('w1', 'int-4', true),
      data: { interviewId: 'int-4', candidateEmail: input.candidateEmail },
    });
    expect(await store().findApplicationByInterview('int-4', input.candidateEmail as string)).toMatchObject({
      atsApplicationId: input.atsApplicationId,
    });
    expect(await store().listApplicationsByInterview('int-4')).toHaveLength(1);
    const first = await store().claimWriteBack(input, 'rep-4', lease('wb1'));
    expect(first).toMatchObject({ kind: 'claimed', record: { state: 'completed', writeBackAttempts: 1 } });
    expect(await store().claimWriteBack(input, 'rep-4', lease('wb2', NOW + 1000))).toMatchObject({ kind: 'busy' });
    expect(await store().claimWriteBack(input, 'rep-other', lease('wb2', NOW + 1000))).toMatchObject({
      kind: 'other-report',
    });
    const resumed = await store().claimWriteBack(input, 'rep-4', lease('wb3', NOW + 61_000));
    expect(resumed).toMatchObject({ kind: 'claimed', record: { writeBackAttempts: 2, leaseOwner: 'wb3' } });
    const note = { name: 'reportNote', record: { doneAt: NOW, value: 'n1' } } as const;
    const link = { name: 'reportLink', record: { doneAt: NOW } } as const;
    await store().recordStep(input, { owner: 'wb3', before: link, step: note, finish: 'written_back' });
    expect(await store().claimWriteBack(input, 'rep-4', lease('wb4', NOW + 200_000))).toMatchObject({
      kind: 'done',
      record: { state: 'written_back', steps: { reportLink: { doneAt: NOW }, reportNote: { value: 'n1' } } },
    });
  });

  it("lists a connection's applications in the states asked, read whole, never another connection's", async () => {
    const [claimed, invited, elsewhere] = ['states-a', 'states-a', 'states-b'].map((connectionId) => ({
      ...claimInput(),
      connectionId,
    })) as [ApplicationClaimInput, ApplicationClaimInput, ApplicationClaimInput];
    for (const [i, input] of [claimed, invited, elsewhere].entries())
      await store().claimApplication(delivery(`evt-states-${i}`), input, lease(`st${i}`));
    await store().recordStep(invited, emailed('st1', 'int-states', true));
    await store().recordStep(elsewhere, emailed('st2', 'int-states', true));
    const listed = (states: ApplicationState[]) => store().listApplicationsInStates('states-a', states);
    const ids = async (states: ApplicationState[]) => (await listed(states)).map((a) => a.atsApplicationId).sort();
    expect(await listed(['invited'])).toEqual([
      expect.objectContaining({ atsApplicationId: invited.atsApplicationId, interviewId: 'int-states' }),
    ]);
    expect((await listed(['invited']))[0]?.steps.inviteEmail).toEqual({ doneAt: NOW });
    expect(await ids(['claimed', 'invited'])).toEqual([claimed.atsApplicationId, invited.atsApplicationId].sort());
    expect(await ids(['written_back', 'left'])).toEqual([]);
  });

  it('marks a permanent failure only for the lease holder', async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-5'), input, lease('w1'));
    await expect(store().markApplicationFailed(input, 'w2', 'x')).rejects.toMatchObject({ code: 'lease-lost' });
    await store().markApplicationFailed(input, 'w1', 'ats-forbidden: no permission');
    const [record] = await store().findApplicationsByAtsId('acme', input.atsApplicationId);
    expect(record).toMatchObject({ state: 'failed', failureReason: 'ats-forbidden: no permission' });
  });

  it('never re-creates a purged application or a removed job with a late reminder, follow-up or template', async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-purged'), input, lease('w1'));
    const key = { connectionId: 'acme', atsApplicationId: input.atsApplicationId, triggerId: 'ai-screen' };
    // Still there: recorded as before.
    await store().recordStep(key, { step: { name: 'inviteNote', record: { doneAt: NOW } } });
    expect(await store().getApplication(key)).toMatchObject({ steps: { inviteNote: { doneAt: NOW } } });
    await store().purgeCandidate('acme', input.atsCandidateId);
    // A reminder, an expiry note and a status that were under way when the candidate was deleted end after the purge.
    await store().recordStep(key, { step: { name: 'reminder1', record: { startedAt: NOW, doneAt: NOW } } });
    await store().recordStep(key, { step: { name: 'expiryNote', record: { doneAt: NOW } } });
    expect(await store().beginStep(key, 'status', { kind: 'rank', value: 'expired', rank: 2, now: NOW })).toBe(false);
    expect(await store().getApplication(key)).toBeUndefined();
    const job = { connectionId: 'acme', atsJobId: `gone-${Date.now()}`, triggerId: 'ai-screen' };
    await store().recordJobTemplate(job, 'hash');
    expect(await store().getJob(job)).toBeUndefined();
  });

  it('begins a reminder once, only while invited; a start taken back is gone; the map holds each step', async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-rem'), input, lease('w1'));
    const once = { kind: 'once', state: 'invited', now: NOW } as const;
    expect(await store().beginStep(input, 'reminder1', once)).toBe(false);
    await store().recordStep(input, { owner: 'w1', step: { name: 'inviteEmail', record: { startedAt: NOW } } });
    await store().recordStep(input, { owner: 'w1', step: { name: 'inviteEmail', record: undefined } });
    await store().recordStep(input, { owner: 'w1', step: { name: 'inviteNote', record: { doneAt: NOW } } });
    await store().recordStep(input, { owner: 'w1', finish: 'invited' });
    const begun = await Promise.all([
      store().beginStep(input, 'reminder1', once),
      store().beginStep(input, 'reminder1', once),
    ]);
    expect(begun.sort()).toEqual([false, true]);
    await store().recordStep(input, { step: { name: 'reminder1', record: { startedAt: NOW, doneAt: NOW + 1 } } });
    expect(await store().beginStep(input, 'reminder2', once)).toBe(true);
    const record = await store().getApplication(input);
    expect(record).toMatchObject({
      state: 'invited',
      steps: { inviteNote: { doneAt: NOW }, reminder1: { startedAt: NOW, doneAt: NOW + 1 }, reminder2: {} },
    });
    expect(record?.steps.inviteEmail).toBeUndefined();
    expect(record?.leaseOwner).toBeUndefined();
  });

  it('lets one worker at a time hold the expiry note until it is done, and a status only move forward', async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-exp'), input, lease('w1'));
    await store().recordStep(input, { owner: 'w1', finish: 'invited' });
    const lease1 = { kind: 'lease', state: 'expired', now: NOW, until: NOW + 60_000 } as const;
    expect(await store().beginStep(input, 'expiryNote', lease1)).toBe(false);
    await store().expireApplication(input, NOW);
    // Held only in its own invitation: a retry of another round's note begins nothing on this one's steps.
    expect(await store().beginStep(input, 'expiryNote', { ...lease1, round: 1 })).toBe(false);
    expect(await store().beginStep(input, 'expiryNote', { ...lease1, round: 0 })).toBe(true);
    // And recorded only in its own invitation: another round's note marks nothing on this one's.
    await store().recordStep(input, { step: { name: 'expiryNote', record: { doneAt: NOW } }, round: 1 });
    expect((await store().getApplication(input))?.steps.expiryNote?.doneAt).toBeUndefined();
    await store().recordStep(input, { step: { name: 'expiryNote', record: { leaseUntil: NOW - 1 } } });
    expect(await store().beginStep(input, 'expiryNote', lease1)).toBe(true);
    expect(await store().beginStep(input, 'expiryNote', { ...lease1, now: NOW + 1000 })).toBe(false);
    expect(await store().beginStep(input, 'expiryNote', { ...lease1, now: NOW + 61_000, until: NOW + 121_000 })).toBe(
      true,
    );
    // Given back by its holder, which names it; a lease it does not hold (another's, since) it cannot.
    const giveBack = { ...lease1, now: NOW + 62_000, until: NOW + 62_000 };
    expect(await store().beginStep(input, 'expiryNote', { ...giveBack, holds: NOW + 60_000 })).toBe(false);
    expect(await store().beginStep(input, 'expiryNote', { ...giveBack, holds: NOW + 121_000 })).toBe(true);
    expect(await store().beginStep(input, 'expiryNote', { ...lease1, now: NOW + 61_500 })).toBe(false);
    expect(await store().beginStep(input, 'expiryNote', { ...lease1, now: NOW + 62_001, until: NOW + 121_000 })).toBe(
      true,
    );
    await store().recordStep(input, { step: { name: 'expiryNote', record: { doneAt: NOW + 62_000 } } });
    expect(await store().beginStep(input, 'expiryNote', { ...lease1, now: NOW + 200_000 })).toBe(false);

    const rank = (value: string, r: number) => ({ kind: 'rank', value, rank: r, now: NOW }) as const;
    expect(await store().beginStep(input, 'status', rank('expired', 2))).toBe(true);
    expect(await store().beginStep(input, 'status', rank('completed', 3))).toBe(true);
    expect(await store().beginStep(input, 'status', rank('expired', 2))).toBe(false);
    expect(await store().beginStep(input, 'status', rank('completed', 3))).toBe(true);
    expect(await store().candidateStatuses('acme', input.atsCandidateId)).toEqual(['completed']);
  });
  it("carries an owed expiry note into the re-entry's invitation, and waits while a worker writes it", async () => {
    const reentered = async (note: 'owed' | 'held' | 'done') => {
      const input = { ...claimInput(), mayReinvite: true, enteredAt: NOW + 5_000 };
      await store().claimApplication(delivery(`evt-${input.atsApplicationId}`), input, lease('w1'));
      await store().recordStep(input, {
        owner: 'w1',
        step: { name: 'inviteEmail', record: { doneAt: NOW } },
        finish: 'invited',
      });
      await store().expireApplication(input, NOW + 1_000);
      if (note !== 'owed') {
        const noteLease = { kind: 'lease', state: 'expired', now: NOW + 1_000, until: NOW + 61_000, round: 0 } as const;
        expect(await store().beginStep(input, 'expiryNote', noteLease)).toBe(true);
        await store().recordStep(input, {
          step: { name: 'expiryNote', record: { leaseUntil: NOW + 61_000, startedAt: NOW + 2_000 } },
          round: 0,
        });
      }
      if (note === 'done')
        await store().recordStep(input, { step: { name: 'expiryNote', record: { doneAt: NOW + 3_000 } }, round: 0 });
      const claim = () =>
        store().claimApplication(delivery(`re-${input.atsApplicationId}`), input, lease('w2', NOW + 6_000));
      return { input, claim };
    };
    // Owed (its worker stopped before the note): the new invitation carries it, with no step of its own begun.
    const owed = await reentered('owed');
    expect(await owed.claim()).toMatchObject({
      kind: 'claimed',
      record: { state: 'claimed', reinvitations: 1, priorExpiry: { expiredAt: NOW + 1_000, round: 0 }, steps: {} },
    });
    // Held by a worker writing it: the re-entry comes back after that worker's lease, and claims nothing meanwhile.
    const held = await reentered('held');
    await expect(held.claim()).rejects.toMatchObject({ code: 'claim-held-elsewhere', retryAfterMs: 55_001 });
    const waiting = await store().getApplication(held.input);
    expect(waiting?.state).toBe('expired');
    expect(waiting?.reinvitations ?? 0).toBe(0);
    // Its lease run out: carried, with the start its worker recorded (a note read back by no ATS is then uncertain).
    const stopped = await store().claimApplication(
      delivery(`re-${held.input.atsApplicationId}`),
      held.input,
      lease('w3', NOW + 62_000),
    );
    expect(stopped).toMatchObject({
      kind: 'claimed',
      record: { priorExpiry: { round: 0 }, steps: { priorExpiryNote: { startedAt: NOW + 2_000 } } },
    });
    // Written: nothing carried.
    const done = await reentered('done');
    const claimed = await done.claim();
    expect(claimed).toMatchObject({ kind: 'claimed', record: { reinvitations: 1, steps: {} } });
    expect(claimed.kind === 'claimed' && claimed.record.priorExpiry).toBeUndefined();
  });
}
