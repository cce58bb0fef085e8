import { describe, expect, it } from 'vitest';
import { AtsError } from '../../../shared/ats/errors';
import { followUpsToEnqueue, ledgerSubjectsOf, type DueFollowUp } from '../../../shared/pipeline/follow-up-due';
import { handleApplicationChanged } from '../../../shared/pipeline/application-changed.use-case';
import { handleFollowUp } from '../../../shared/pipeline/follow-up.use-case';
import { KEY_REFUSED_SUBJECT } from '../../../shared/pipeline/ports';
import type { ApplicationRecord } from '../../../shared/pipeline/records';
import { handleReportCreated } from '../../../shared/pipeline/report-created.use-case';
import { handleStageEntered } from '../../../shared/pipeline/stage-entered.use-case';
import { invitedCandidate, readyJob } from '../../helpers/invited-candidate';
import { MemoryMappingStore } from '../../helpers/memory-store';
import { MemoryQueueLedger } from '../../helpers/pipeline-fakes';
import { followUpMessage, NOW, reportCreatedMessage, stageEnteredMessage } from '../../helpers/pipeline-records';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const key = { connectionId: 'acme-greenhouse', atsApplicationId: '4401', triggerId: 'ai-screen' };
const keyRefused = () => new AtsError('ats-unauthorized', 'GET application: 401', { status: 401 });

/** Application 4401 invited at NOW (one reminder a day on), the queue ledger beside it. */
function invited(record: Partial<ApplicationRecord> = {}, trigger: Record<string, unknown> = {}) {
  const candidate = invitedCandidate(record, { reminders: { afterHours: 24, max: 1 }, ...trigger });
  const ledger = new MemoryQueueLedger();
  return { ...candidate, deps: { ...candidate.deps, ledger }, ledger };
}

describe("Use case: the ATS refuses a connection's key for days", () => {
  it('holds a reminder while the key is refused, says so once a day, and sends it once the key works', async () => {
    const { store, deps, ats, ledger } = invited();
    ats.readStanding.mockRejectedValue(keyRefused());
    for (const at of [25 * HOUR, 26 * HOUR]) {
      deps.now = () => NOW + at;
      expect(await handleFollowUp(followUpMessage('remind'), deps)).toMatchObject({ outcome: 'held' });
    }
    // One ERROR for the connection that day, a WARN for the next refusal; nothing recorded on the invitation.
    expect(deps.logger.error).toHaveBeenCalledOnce();
    expect(deps.logger.warn).toHaveBeenCalledWith(expect.stringContaining('(still;'), expect.anything());
    expect(await store.getApplication(key)).toMatchObject({ state: 'invited', steps: { inviteEmail: {} } });
    expect((await store.getApplication(key))?.steps.reminder1).toBeUndefined();
    expect(ledger.enqueuedAt.get(`${key.connectionId}#${KEY_REFUSED_SUBJECT}`)).toBe(NOW + 26 * HOUR);
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9001' });
    expect(await handleFollowUp(followUpMessage('remind'), deps)).toMatchObject({ outcome: 'reminded' });
    expect(deps.mailer.sendInvite).toHaveBeenCalledOnce();
  });

  it('lets an expiry whose note met the refused key come back, its lease given back, and finish it once', async () => {
    const { store, deps, ats, setStatusTag } = invited({}, { reminders: undefined });
    deps.now = () => NOW + 8 * 24 * HOUR;
    ats.postNote.mockRejectedValueOnce(keyRefused());
    await expect(handleFollowUp(followUpMessage('expire'), deps)).rejects.toMatchObject({ code: 'ats-unauthorized' });
    const stopped = await store.getApplication(key);
    expect(stopped?.state).toBe('expired');
    // Not refused for good: owed still, and no lease held past now.
    expect(stopped?.steps.expiryNote?.doneAt).toBeUndefined();
    expect(stopped?.steps.expiryNote?.leaseUntil ?? 0).toBeLessThanOrEqual(NOW + 8 * 24 * HOUR);
    // Back a second later (SQS's retry): the note is begun again at once, not after a lease.
    deps.now = () => NOW + 8 * 24 * HOUR + 1_000;
    expect(await handleFollowUp(followUpMessage('expire'), deps)).toMatchObject({ outcome: 'expired' });
    expect(ats.postNote).toHaveBeenCalledTimes(2);
    expect((await store.getApplication(key))?.steps.expiryNote?.doneAt).toBeDefined();
    expect(setStatusTag.mock.calls.at(-1)?.[1]).toBe('AI interview: expired');
  });

  it('hands a write-back back unfailed when the key is refused, and writes it back once the key works', async () => {
    const { store, deps, ats } = invited();
    ats.postNote.mockRejectedValueOnce(keyRefused());
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'held' });
    const held = await store.getApplication(key);
    expect(held).toMatchObject({ state: 'completed', reportId: 'rep-1' });
    expect(held?.leaseOwner).toBeUndefined();
    expect(deps.logger.error).toHaveBeenCalledWith(
      expect.stringContaining("refuses the connection's key"),
      expect.objectContaining({ code: 'ats-unauthorized' }),
    );
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'written-back' });
    expect((await store.getApplication(key))?.state).toBe('written_back');
    expect(ats.postNote).toHaveBeenCalledTimes(2);
  });

  it('moves no candidate whose application the ATS no longer has, and still writes the report back', async () => {
    const { deps, ats } = invited();
    ats.readStanding.mockRejectedValue(new AtsError('ats-not-found', 'GET application: 404', { status: 404 }));
    expect(await handleReportCreated(reportCreatedMessage(), deps)).toMatchObject({ outcome: 'written-back' });
    expect(ats.moveToStage).not.toHaveBeenCalled();
    expect(ats.postNote).toHaveBeenCalledOnce();
  });

  it('sends a stage change met with a refused key back through SQS, its claim handed back, unfailed', async () => {
    for (const met of ['the confirming read', 'the invite note'] as const) {
      const { deps, ats } = invited();
      const fresh = { ...deps, store: new MemoryMappingStore().seed({ jobs: [readyJob()] }) };
      if (met === 'the confirming read') ats.confirmStageEntered.mockRejectedValue(keyRefused());
      else ats.postNote.mockRejectedValue(keyRefused());
      const entered = handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-9' }), fresh);
      await expect(entered).rejects.toMatchObject({ code: 'ats-unauthorized' });
      const record = await fresh.store.getApplication(key);
      expect(record?.state).not.toBe('failed');
      expect(record?.leaseOwner).toBeUndefined();
      expect(deps.logger.error).toHaveBeenCalledWith(
        expect.stringContaining("refuses the connection's key"),
        expect.objectContaining({ code: 'ats-unauthorized' }),
      );
    }
  });

  it("sends an operator's resend met with a refused key back through SQS, as no run sends it again", async () => {
    const { deps, ats } = invited();
    ats.readStanding.mockRejectedValue(keyRefused());
    const resend = followUpMessage('resend', { requestId: 'req-1' });
    await expect(handleFollowUp(resend, deps)).rejects.toMatchObject({ code: 'ats-unauthorized' });
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
  });

  it('lets a retried expiry whose first read meets the refused key come back, its note still owed', async () => {
    const { store, deps, ats } = invited(
      { state: 'expired', expiredAt: NOW + 7 * 24 * HOUR },
      { reminders: undefined },
    );
    deps.now = () => NOW + 8 * 24 * HOUR;
    ats.readStanding.mockRejectedValue(keyRefused());
    await expect(handleFollowUp(followUpMessage('expire'), deps)).rejects.toMatchObject({ code: 'ats-unauthorized' });
    expect((await store.getApplication(key))?.steps.expiryNote?.doneAt).toBeUndefined();
  });

  it('sends back a re-entry whose look at the ATS meets the refused key: the candidate is not left out', async () => {
    const { store, deps, ats } = invited({ state: 'left', leftFrom: 'invited', exit: { kind: 'rejected', at: NOW } });
    ats.readStanding.mockRejectedValue(keyRefused());
    const entered = handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-back' }), deps);
    await expect(entered).rejects.toMatchObject({ code: 'ats-unauthorized' });
    expect((await store.getApplication(key))?.state).toBe('left');
    ats.readStanding.mockResolvedValue({ active: true, stageId: '9001' });
    const [result] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-back' }), deps);
    expect(result?.outcome).toBe('already-invited');
    expect((await store.getApplication(key))?.state).toBe('invited');
  });

  it('extends all the same when the status meets the refused key: the tag is said and left', async () => {
    const { store, deps, setStatusTag } = invited(
      { state: 'expired', expiredAt: NOW + 7 * DAY },
      { reminders: undefined },
    );
    deps.now = () => NOW + 8 * DAY;
    setStatusTag.mockRejectedValue(keyRefused());
    const extend = followUpMessage('extend', { requestId: 'req-2', days: 3 });
    expect(await handleFollowUp(extend, deps)).toMatchObject({ outcome: 'extended' });
    expect((await store.getApplication(key))?.state).toBe('invited');
    expect(deps.logger.error).toHaveBeenCalledWith(
      expect.stringContaining('status could not be shown'),
      expect.anything(),
    );
  });

  it('hands a taken-over claim back when its look at a candidate who left meets the refused key', async () => {
    const { store, deps, ats } = invited({ state: 'claimed', steps: {}, leaseUntil: NOW + 60_000 });
    await store.noteExitSeen(key.connectionId, key.atsApplicationId, NOW + 10_000);
    deps.now = () => NOW + 120_000;
    ats.readStanding.mockRejectedValue(keyRefused());
    const retried = handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1' }), deps);
    await expect(retried).rejects.toMatchObject({ code: 'ats-unauthorized' });
    expect((await store.getApplication(key))?.leaseOwner).toBeUndefined();
  });

  it('sends back a report an operator matched by hand when the key is refused: no run finds it again', async () => {
    const { deps, ats } = invited();
    ats.postNote.mockRejectedValueOnce(keyRefused());
    const matched = reportCreatedMessage({ atsApplicationId: key.atsApplicationId });
    await expect(handleReportCreated(matched, deps)).rejects.toMatchObject({ code: 'ats-unauthorized' });
  });

  it("sends back a candidate's return met with the refused key; an exit hint is said and left", async () => {
    const { deps, ats } = invited();
    ats.readStanding.mockRejectedValue(keyRefused());
    const hint = (change: 'left' | 'returned') => ({
      ...{ v: 1 as const, kind: 'application-changed' as const, enqueueId: `e-${change}`, receivedAt: NOW },
      ...{ connectionId: key.connectionId, deliveryId: `d-${change}`, atsApplicationId: key.atsApplicationId, change },
    });
    expect(await handleApplicationChanged(hint('left'), deps)).toMatchObject({ outcome: 'unchanged' });
    const returned = { ...invited({ state: 'left', exit: { kind: 'rejected', at: NOW } }) };
    returned.ats.readStanding.mockRejectedValue(keyRefused());
    await expect(handleApplicationChanged(hint('returned'), returned.deps)).rejects.toMatchObject({
      code: 'ats-unauthorized',
    });
  });

  it('writes an expiry recorded when the ATS refuses its look for good (not the key): note and status', async () => {
    const { store, deps, ats, setStatusTag } = invited({ state: 'expired', expiredAt: NOW + 7 * DAY }, {});
    deps.now = () => NOW + 8 * DAY;
    ats.readStanding.mockRejectedValue(new AtsError('ats-forbidden', 'GET application: 403', { status: 403 }));
    expect(await handleFollowUp(followUpMessage('expire'), deps)).toMatchObject({ outcome: 'expired' });
    expect((await store.getApplication(key))?.steps.expiryNote?.doneAt).toBeDefined();
    expect(setStatusTag.mock.calls.at(-1)?.[1]).toBe('AI interview: expired');
  });

  it('says a follow-up refused for good once a day, though it stays due and is sent again', async () => {
    const { store, deps, ats } = invited();
    ats.readStanding.mockRejectedValue(new AtsError('ats-forbidden', 'GET application: 403', { status: 403 }));
    for (const at of [25, 25.5, 26]) {
      deps.now = () => NOW + at * HOUR;
      expect(await handleFollowUp(followUpMessage('remind'), deps)).toMatchObject({ outcome: 'failed' });
    }
    expect(deps.logger.error).toHaveBeenCalledOnce();
    expect(deps.logger.warn).toHaveBeenCalledTimes(2);
    expect((await store.getApplication(key))?.steps.reminder1).toBeUndefined();
  });

  it('sends one follow-up a run while a worker met the refused key lately, every due one otherwise', () => {
    const due = ['a', 'b', 'c'].map((id) => ({ subject: `followUp#${id}` }) as DueFollowUp);
    expect(ledgerSubjectsOf(due)).toEqual(['followUp#a', 'followUp#b', 'followUp#c', KEY_REFUSED_SUBJECT]);
    expect(followUpsToEnqueue(due, new Set(['followUp#a'])).map((d) => d.subject)).toEqual([
      'followUp#b',
      'followUp#c',
    ]);
    const refused = new Set(['followUp#a', KEY_REFUSED_SUBJECT]);
    expect(followUpsToEnqueue(due, refused).map((d) => d.subject)).toEqual(['followUp#b']);
  });
});
