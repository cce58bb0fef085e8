import { describe, expect, it, vi } from 'vitest';
import { ATS_ERROR_CODES, AtsError } from '../../../shared/ats/errors';
import { handleFollowUp } from '../../../shared/pipeline/follow-up.use-case';
import { handleReportCreated } from '../../../shared/pipeline/report-created.use-case';
import { showStatus } from '../../../shared/pipeline/status';
import { targetOf } from '../../../shared/pipeline/application-changed.use-case';
import type { FollowUpMessage } from '../../../shared/queue';
import type { ApplicationRecord } from '../../../shared/pipeline/records';
import { connectionDocument } from '../../helpers/connections';
import { MemoryMappingStore } from '../../helpers/memory-store';
import { dependencies, fakeContext } from '../../helpers/pipeline-fakes';
import { applicationRecord, jobRecord, NOW, reportCreatedMessage } from '../../helpers/pipeline-records';

const key = { connectionId: 'acme-greenhouse', atsApplicationId: '4401', triggerId: 'ai-screen' };

const expireMessage: FollowUpMessage = {
  v: 1,
  kind: 'follow-up',
  enqueueId: 'enq-expire',
  connectionId: 'acme-greenhouse',
  receivedAt: NOW,
  atsApplicationId: '4401',
  triggerId: 'ai-screen',
  action: 'expire',
};

/** The store with the job's interview ready and one application of it. */
const storeWith = (application: Partial<ApplicationRecord>) =>
  new MemoryMappingStore().seed({
    jobs: [jobRecord({ state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined })],
    applications: [applicationRecord(application)],
  });

/** A connection showing its status as tags, whose invitations expire after 7 days. */
function expiringContext() {
  const document = connectionDocument({ writeBack: { status: 'tags' } });
  const connection = document.connections[0] as { triggers: Record<string, unknown>[] };
  connection.triggers = connection.triggers.map((t) => ({ ...t, expireAfterDays: 7 }));
  return fakeContext(document);
}

/** An application expired a second ago, its invitation e-mailed 8 days ago and its expiry note posted. */
const expiredWith = (steps: ApplicationRecord['steps']) =>
  storeWith({
    state: 'expired',
    expiredAt: NOW - 1000,
    entryDeliveryId: 'evt-1',
    steps: { inviteEmail: { doneAt: NOW - 8 * 86_400_000 }, expiryNote: { doneAt: NOW - 500 }, ...steps },
  });

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

/**
 * Seen in a chaos run beside a busy process (a Greenhouse candidate): the expiry's retry (its note posted before a
 * crash) and a late report's write-back run together. The write-back's claim moves the application to `completed`;
 * the expiry's 'expired' claim is then refused by its whileState, and its refused branch showed the claim as it stood,
 * still 'invited'. That tag landed after the write-back tagged 'flagged for review' and read its own claim back: the
 * candidate ended shown as invited.
 */
describe('Status tags: a late expiry and a report written back at once', () => {
  // The claim standing when the expiry's retry came: the invitation's own, or the expiry's from before its crash.
  it.each([
    ['invited', 1],
    ['expired', 2],
  ] as const)('ends with the tag the claim says, never the %s claim a refused expiry read', async (standing, rank) => {
    const document = connectionDocument({
      writeBack: { status: 'tags', advance: { minAiMatchScore: 100, toStage: { name: 'Hiring Manager Review' } } },
    });
    const connection = document.connections[0] as { triggers: Record<string, unknown>[] };
    const lifecycle = { reminders: { afterHours: 24, max: 1 }, expireAfterDays: 7 };
    connection.triggers = connection.triggers.map((t) => ({ ...t, ...lifecycle }));
    const { context, ats } = fakeContext(document);

    // The candidate's applied status tags, as Greenhouse's rows: read, others removed, the status added unless there.
    const tags = new Set([`AI interview: ${standing}`]);
    const expiryTagging = gate();
    const releaseExpiryTag = gate();
    const setStatusTag = vi.fn(async (_t: unknown, tag: string | undefined, others: string[]) => {
      if (tag === `AI interview: ${standing}`) {
        expiryTagging.open();
        await releaseExpiryTag.opened;
      }
      const rows = [...tags];
      await Promise.resolve();
      for (const row of rows) if (others.includes(row)) tags.delete(row);
      if (tag !== undefined && !rows.includes(tag)) tags.add(tag);
    });
    Object.assign(ats, { setStatusTag, tagsCandidates: true });

    // The write-back's report note waits until the expiry has read the claim (still 'invited').
    const noteStarted = gate();
    const releaseNote = gate();
    ats.postNote.mockImplementation(async () => {
      noteStarted.open();
      await releaseNote.opened;
      return { noteId: 'note-report' };
    });

    const store = expiredWith({
      reminder1: { startedAt: NOW - 7 * 86_400_000, doneAt: NOW - 7 * 86_400_000 },
      // The first expiry posted its note and crashed ('expiry-note-posted'); its retry found the note.
      status: { value: standing, rank, startedAt: NOW - 1000 },
    });
    const deps = dependencies(store, context);

    // W: the late report's write-back claims the application (completed) and posts its note ...
    const writeBack = handleReportCreated(reportCreatedMessage(), deps);
    await noteStarted.opened;
    expect((await store.getApplication(key))?.state).toBe('completed');
    // E: ... while the expiry's retry claims 'expired', is refused (the application is no longer expired) and reads
    // the claim standing: a lower one ('invited') it no longer shows; an equal one it shows, its tag call held here.
    const expiry = handleFollowUp(expireMessage, deps, undefined);
    await Promise.race([expiryTagging.opened, expiry]);
    // W goes on: claims its status, tags it (the standing claim's row removed), reads its own claim back, finishes.
    releaseNote.open();
    const written = await writeBack;
    expect(written.outcome).toBe('written-back');
    expect([...tags]).toEqual(['AI interview: flagged for review']);
    // E's tag call, held so far (a 429 and its 1-s Retry-After in the run), reads the rows now.
    releaseExpiryTag.open();
    await expiry;

    const record = await store.getApplication(key);
    const claim = record?.steps.status?.value;
    expect(record?.state).toBe('written_back');
    expect(record?.expiredAt).toBeDefined();
    // The tags end as the claim says (before: only the standing one, as the chaos run found with "invited"); an
    // expiry that showed the standing claim read the claim again after it, and showed the write-back's.
    expect(claim).toBe('flagged for review');
    expect([...tags]).toEqual(['AI interview: flagged for review']);
  });
});

/**
 * Seen once in a chaos run beside a busy process (an Ashby candidate written back, tagged "expired"): a tag call whose
 * answer did not come may still land, after a later worker's status. It goes up as may-have-landed (the adapters send
 * it again only after the ATS's own 5xx), and the message's retry, after the late call landed, shows the claim again.
 */
describe('Status tags: a tag call with no answer that lands after a later status', () => {
  it("ends with the report's status when the expiry's lost tag write lands after it", async () => {
    const { context, ats } = expiringContext();
    // As Workable's tags: the whole list put. The expiry's first put gets no answer; it lands only later.
    let tags = ['python', 'AI interview: invited'];
    let late: (() => void) | undefined;
    const setStatusTag = vi.fn(async (_t: unknown, tag: string | undefined, others: string[]) => {
      const next = [...tags.filter((t) => !others.includes(t) && t !== tag), ...(tag ? [tag] : [])];
      const put = () => {
        tags = next;
      };
      if (tag !== 'AI interview: expired' || late) return put();
      late = put;
      throw new AtsError(ATS_ERROR_CODES.unavailable, 'PUT tags timed out after 10000 ms', { mayHaveSucceeded: true });
    });
    Object.assign(ats, { setStatusTag });
    const store = expiredWith({ status: { value: 'invited', rank: 1, startedAt: NOW - 8 * 86_400_000 } });
    const deps = dependencies(store, context);

    // The expiry claims "expired"; its tag write gets no answer: the message goes back, nothing retried in the call.
    await expect(handleFollowUp(expireMessage, deps, undefined)).rejects.toMatchObject({ mayHaveSucceeded: true });
    // The late report is written back and shows its status; then the expiry's put lands over it.
    expect((await handleReportCreated(reportCreatedMessage(), deps)).outcome).toBe('written-back');
    expect(tags).toEqual(['python', 'AI interview: completed']);
    late?.();
    expect(tags).toEqual(['python', 'AI interview: expired']);
    // The expiry's retry: its claim is refused, and it shows the one claimed.
    await handleFollowUp(expireMessage, deps, undefined);

    expect((await store.getApplication(key))?.steps.status?.value).toBe('completed');
    expect(tags).toEqual(['python', 'AI interview: completed']);
  });
});

describe('Status tags: an expiry whose tag landed after an extension', () => {
  it('shows "invited" again when the expiry comes back and finds the invitation extended', async () => {
    const { context, ats } = expiringContext();
    // The extension showed "invited"; the expiry's "expired", sent before its worker stopped, landed after it.
    const tags = new Set(['AI interview: expired']);
    const setStatusTag = vi.fn(async (_t: unknown, tag: string | undefined, others: string[]) => {
      for (const row of [...tags]) if (others.includes(row)) tags.delete(row);
      if (tag !== undefined) tags.add(tag);
    });
    Object.assign(ats, { setStatusTag });
    const store = storeWith({
      state: 'invited',
      extendedUntil: NOW + 5 * 86_400_000,
      operatorRequests: ['ops-1'],
      steps: {
        inviteEmail: { doneAt: NOW - 8 * 86_400_000 },
        expiryNote: { doneAt: NOW - 500 },
        status: { value: 'invited', rank: 1, startedAt: NOW - 100 },
      },
    });
    const deps = dependencies(store, context);

    expect((await handleFollowUp(expireMessage, deps, undefined)).outcome).toBe('not-due');
    expect([...tags]).toEqual(['AI interview: invited']);
    expect((await store.getApplication(key))?.steps.status?.value).toBe('invited');
  });
});

describe("Status tags: two applications of one candidate, where tags are the candidate's", () => {
  // The other application's report written back ("completed"), or its candidate gone from it ("cancelled", which never
  // takes another application's status off).
  it.each([
    ['completed', 'completed', 3],
    ['cancelled', 'expired', 2],
  ] as const)(
    'ends with the furthest status when the other application claims %s meanwhile',
    async (other, end, calls) => {
      const { context, ats } = fakeContext(connectionDocument({ writeBack: { status: 'tags' } }));
      const tags = new Set<string>();
      const held = gate();
      const release = gate();
      const setStatusTag = vi.fn(async (_t: unknown, tag: string | undefined, others: string[]) => {
        if (tag === 'AI interview: expired' && setStatusTag.mock.calls.length === 1) {
          held.open();
          await release.opened;
        }
        for (const row of [...tags]) if (others.includes(row)) tags.delete(row);
        if (tag !== undefined) tags.add(tag);
      });
      Object.assign(ats, { setStatusTag, tagsCandidates: true });
      const first = applicationRecord({ state: 'expired', expiredAt: NOW - 1000 });
      const second = applicationRecord({
        atsApplicationId: '4402',
        state: other === 'cancelled' ? 'left' : 'completed',
      });
      const store = new MemoryMappingStore().seed({ applications: [first, second] });
      const deps = dependencies(store, context);
      const place = (record: typeof first) => ({ context, key: record, target: targetOf(record), deps, round: 0 });

      // The first application's expiry tags "expired" (the candidate's furthest then), its call slow to land ...
      const expiry = showStatus(place(first), 'expired');
      await held.opened;
      // ... while the second's status is claimed, shown (as the candidate's furthest) and read back.
      await showStatus(place(second), other);
      expect([...tags]).toEqual([`AI interview: ${end}`]);
      release.open();
      await expiry;

      // The expiry's tag landed last; its read after it finds the candidate's furthest, shown again if another.
      expect([...tags]).toEqual([`AI interview: ${end}`]);
      expect(setStatusTag).toHaveBeenCalledTimes(calls);
      expect((await store.getApplication({ ...key, atsApplicationId: '4402' }))?.steps.status?.value).toBe(other);
    },
  );
});
