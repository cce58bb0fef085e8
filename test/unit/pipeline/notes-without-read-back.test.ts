import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AtsError } from '../../../shared/ats/errors';
import { faultInjection, SimulatedCrash, type SideEffectPoint } from '../../../shared/pipeline/fault-injection';
import { handleFollowUp } from '../../../shared/pipeline/follow-up.use-case';
import { handleReportCreated } from '../../../shared/pipeline/report-created.use-case';
import { handleStageEntered } from '../../../shared/pipeline/stage-entered.use-case';
import { clearInterviewCache } from '../../../shared/pipeline/ensure-interview.use-case';
import type { FollowUpMessage } from '../../../shared/queue';
import { ReportFileUnavailableError } from '../../../shared/interview-service';
import { connectionDocument } from '../../helpers/connections';
import { MemoryMappingStore } from '../../helpers/memory-store';
import { dependencies, fakeContext } from '../../helpers/pipeline-fakes';
import {
  applicationRecord,
  jobRecord,
  NOW,
  reportCreatedMessage,
  stageEnteredMessage,
} from '../../helpers/pipeline-records';

const KEY = { connectionId: 'acme-greenhouse', atsApplicationId: '4401', triggerId: 'ai-screen' };
const DAY = 86_400_000;
const refused429 = () => new AtsError('ats-rate-limited', 'POST /ats/applications/4401/notes: 429', { status: 429 });

/** An ATS that reads no note back (as Kombo): `findNote` finds nothing, the steps map alone keeps a note to one. */
function withoutReadBack(record?: Parameters<typeof applicationRecord>[0]) {
  const document = connectionDocument();
  const trigger = (document.connections[0] as { triggers: Record<string, unknown>[] }).triggers[0] as object;
  Object.assign(trigger, { expireAfterDays: 7 });
  const { context, ats, interviews } = fakeContext(document);
  Object.assign(ats, { findsNotes: false });
  const store = new MemoryMappingStore().seed({
    jobs: [jobRecord({ state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined })],
    applications: record ? [applicationRecord(record)] : [],
  });
  return { store, ats, interviews, deps: dependencies(store, context) };
}

/** The next side effect at `point` crashes the worker before it is recorded, as a Lambda that died there. */
function crashOnceAfter(point: SideEffectPoint) {
  let crashed = false;
  faultInjection.afterSideEffect = (at) => {
    if (at !== point || crashed) return;
    crashed = true;
    throw new SimulatedCrash(at);
  };
}

const expire: FollowUpMessage = {
  ...{ v: 1, kind: 'follow-up', enqueueId: 'enq-expire', connectionId: KEY.connectionId, receivedAt: NOW },
  ...{ atsApplicationId: KEY.atsApplicationId, triggerId: KEY.triggerId, action: 'expire' },
};

/** An invitation whose expiry was recorded and its note stopped: refused unsent (a 429), or posted and not recorded. */
async function expiryStopped(fault: '429' | 'crash') {
  const candidate = withoutReadBack({ state: 'invited', steps: { inviteEmail: { doneAt: NOW } } });
  if (fault === '429') candidate.ats.postNote.mockRejectedValueOnce(refused429());
  else crashOnceAfter('expiry-note-posted');
  const due = { ...candidate.deps, now: () => NOW + 8 * DAY };
  await expect(handleFollowUp(expire, due)).rejects.toBeDefined();
  return candidate;
}

beforeEach(() => clearInterviewCache());
afterEach(() => {
  faultInjection.afterSideEffect = undefined;
});

describe('Notes on an ATS that reads none back: posted at most once by the steps map', () => {
  it('posts the invite note after a 429 refused it, never looking it up', async () => {
    const { store, ats, deps } = withoutReadBack();
    ats.postNote.mockRejectedValueOnce(refused429());
    await expect(handleStageEntered(stageEnteredMessage(), deps)).rejects.toMatchObject({ code: 'ats-rate-limited' });
    // Refused outright: nothing was written, so the start is cleared for the next try.
    expect((await store.getApplication(KEY))?.steps.inviteNote).toBeUndefined();
    expect(await handleStageEntered(stageEnteredMessage(), deps)).toEqual([
      { triggerId: 'ai-screen', outcome: 'invited' },
    ]);
    const record = await store.getApplication(KEY);
    expect(record?.steps.inviteNote?.doneAt).toBeDefined();
    expect(record?.steps.inviteNote?.outcome).toBeUndefined();
    expect(ats.postNote).toHaveBeenCalledTimes(2);
    expect(ats.findNote).not.toHaveBeenCalled();
  });

  it('records an invite note posted before a crash as uncertain, and never posts it again', async () => {
    const { store, ats, deps } = withoutReadBack();
    crashOnceAfter('invite-note-posted');
    await expect(handleStageEntered(stageEnteredMessage(), deps)).rejects.toBeInstanceOf(SimulatedCrash);
    // The claim's lease runs out; the message comes back.
    const later = { ...deps, now: () => NOW + 10 * 60_000 };
    await handleStageEntered(stageEnteredMessage(), later);
    expect((await store.getApplication(KEY))?.steps.inviteNote).toMatchObject({ outcome: 'uncertain' });
    expect(ats.postNote).toHaveBeenCalledTimes(1);
  });

  it('records a report note posted before a crash as uncertain, and never posts it again', async () => {
    const { store, ats, deps } = withoutReadBack({ state: 'invited', steps: { inviteEmail: { doneAt: NOW } } });
    crashOnceAfter('report-note-posted');
    await expect(handleReportCreated(reportCreatedMessage(), deps)).rejects.toBeInstanceOf(SimulatedCrash);
    const later = { ...deps, now: () => NOW + 10 * 60_000 };
    expect(await handleReportCreated(reportCreatedMessage(), later)).toMatchObject({ outcome: 'written-back' });
    expect((await store.getApplication(KEY))?.steps.reportNote).toMatchObject({ outcome: 'uncertain' });
    expect(ats.postNote).toHaveBeenCalledTimes(1);
    expect(ats.findNote).not.toHaveBeenCalled();
  });

  it('posts the "not attached" note once: after a 429 it posts it, after a crash never again', async () => {
    for (const fault of ['429', 'crash'] as const) {
      const { store, ats, interviews, deps } = withoutReadBack({
        state: 'invited',
        steps: { inviteEmail: { doneAt: NOW } },
      });
      // The ATS takes files, and the service's file never comes in a form it takes: the file is given up.
      const unavailable = new ReportFileUnavailableError('the report file is not a PDF (text/html)');
      Object.assign(ats, { attachFile: vi.fn(), findFile: vi.fn().mockResolvedValue(undefined) });
      Object.assign(interviews, { readReportFile: vi.fn().mockRejectedValue(unavailable) });
      const fileNotes = () =>
        ats.postNote.mock.calls.filter(([, note]) => note.marker.startsWith('ai-interview-report-file:'));
      ats.postNote.mockImplementation(async (_target, note: { marker: string }) => {
        if (fault === '429' && fileNotes().length === 1 && note.marker.startsWith('ai-interview-report-file:'))
          throw refused429();
        return { noteId: 'note-new' };
      });
      if (fault === 'crash') crashOnceAfter('report-attached');
      await expect(handleReportCreated(reportCreatedMessage(), deps)).rejects.toBeDefined();
      const later = { ...deps, now: () => NOW + 10 * 60_000 };
      expect(await handleReportCreated(reportCreatedMessage(), later)).toMatchObject({ outcome: 'written-back' });
      expect((await store.getApplication(KEY))?.steps.reportFile?.value).toMatch(/^not-attached:/);
      // After a 429 nothing was written, so the next try posts it; after a crash it may be there: never again.
      expect(fileNotes()).toHaveLength(fault === '429' ? 2 : 1);
      expect(ats.findNote).not.toHaveBeenCalled();
      faultInjection.afterSideEffect = undefined;
      vi.clearAllMocks();
    }
  });

  it('posts an expiry note once: after a 429 it posts it, after a crash it never posts it again', async () => {
    for (const fault of ['429', 'crash'] as const) {
      const { store, ats, deps } = await expiryStopped(fault);
      // The next try, once the expiry's lease (a minute) has run out.
      const next = { ...deps, now: () => NOW + 8 * DAY + 5 * 60_000 };
      expect((await handleFollowUp(expire, next)).outcome).toBe('expired');
      const note = (await store.getApplication(KEY))?.steps.expiryNote;
      expect(note?.doneAt).toBeDefined();
      // Found started after the crash: said uncertain on the record, as every note no ATS can be asked about.
      expect(note?.outcome).toBe(fault === '429' ? undefined : 'uncertain');
      expect(ats.postNote).toHaveBeenCalledTimes(fault === '429' ? 2 : 1);
      expect(ats.findNote).not.toHaveBeenCalled();
      faultInjection.afterSideEffect = undefined;
      vi.clearAllMocks();
    }
  });

  it.each(['429', 'crash'] as const)(
    'writes an expiry note a re-entry carried at most once (its worker stopped by a %s)',
    async (fault) => {
      const { store, ats, deps } = await expiryStopped(fault);
      // The candidate is moved back into the stage before the expiry's message comes back, after its lease.
      const later = { ...deps, now: () => NOW + 8 * DAY + 5 * 60_000 };
      const reentry = { ...stageEnteredMessage({ deliveryId: 'evt-back' }), receivedAt: NOW + 8 * DAY + 60_000 };
      expect((await handleStageEntered(reentry, later))[0]?.outcome).toBe('invited');
      expect((await handleFollowUp(expire, later)).outcome).toBe('not-due');
      // A 429 wrote nothing, so the re-entry posts it; a crash after the post leaves it begun: never posted again.
      const expiryNotes = ats.postNote.mock.calls.filter((call) => call[1].marker.startsWith('ai-interview-expired'));
      expect(expiryNotes).toHaveLength(fault === '429' ? 2 : 1);
      const prior = (await store.getApplication(KEY))?.steps.priorExpiryNote;
      expect(prior?.doneAt).toBeDefined();
      expect(prior?.outcome).toBe(fault === '429' ? undefined : 'uncertain');
    },
  );
});
