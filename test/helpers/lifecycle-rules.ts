import { expect, it } from 'vitest';
import type { MappingStore } from '../../shared/pipeline';
import { claimInput, delivery, lease, NOW } from './mapping-rules';

/**
 * The mapping store's rules for a candidate's place in the process after the invitation (an exit, its undo, a
 * re-entry, an operator's request): one suite for the DynamoDB repositories and the in-memory store.
 */
export function lifecycleRules(store: () => MappingStore): void {
  /** An application invited through `evt`, its status shown as `invited`. */
  async function invited(evt: string) {
    const input = claimInput();
    await store().claimApplication(delivery(evt), { ...input, mayReinvite: true }, lease('w1'));
    await store().recordStep(input, { owner: 'w1', finish: 'invited' });
    await store().beginStep(input, 'status', { kind: 'rank', value: 'invited', rank: 1, now: NOW });
    return input;
  }
  const exit = { kind: 'rejected', reason: 'Not a fit', at: NOW } as const;
  const DAY = 86_400_000;

  it("takes a report's mark back only while it names that report, leaving the invitation's other steps", async () => {
    const input = await invited('evt-forget');
    const arrived = { name: 'reportArrived' as const, record: { doneAt: NOW, value: 'rep-1' } };
    await store().recordStep(input, { step: arrived, round: 0 });
    expect(await store().forgetStep(input, 'reportArrived', 'rep-9')).toBe(false);
    expect((await store().getApplication(input))?.steps.reportArrived).toEqual(arrived.record);
    expect(await store().forgetStep(input, 'reportArrived', 'rep-1')).toBe(true);
    const forgotten = await store().getApplication(input);
    expect(forgotten?.steps.reportArrived).toBeUndefined();
    expect(forgotten).toMatchObject({ state: 'invited', steps: { status: { value: 'invited' } } });
    // Once gone, nothing more to take back; nor on an application that does not exist.
    expect(await store().forgetStep(input, 'reportArrived', 'rep-1')).toBe(false);
    expect(await store().forgetStep(claimInput(), 'reportArrived', 'rep-1')).toBe(false);
  });

  it("keeps a report's mark made while the invitation was still being finished; no reminder begins after", async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-finishing'), { ...input, mayReinvite: true }, lease('w1'));
    const email = { name: 'inviteEmail' as const, record: { startedAt: NOW } };
    await store().recordStep(input, { owner: 'w1', step: email });
    // The report's webhook, while the invite worker holds the claim: the mark is a step of its own.
    const arrived = { name: 'reportArrived' as const, record: { doneAt: NOW, value: 'rep-1' } };
    await store().recordStep(input, { step: arrived, round: 0 });
    const note = { name: 'inviteNote' as const, record: { doneAt: NOW } };
    const sent = { name: 'inviteEmail' as const, record: { startedAt: NOW, doneAt: NOW } };
    await store().recordStep(input, { owner: 'w1', step: note, before: [sent], finish: 'invited' });
    const finished = await store().getApplication(input);
    expect(finished).toMatchObject({ state: 'invited', steps: { reportArrived: arrived.record, inviteNote: {} } });
    const begin = { kind: 'once', state: 'invited', now: NOW, unless: ['reportArrived'] } as const;
    expect(await store().beginStep(input, 'reminder1', begin)).toBe(false);
  });

  it('moves an invitation to left on an exit, keeping where it was, and back there on its undo', async () => {
    const input = await invited('evt-left');
    await store().expireApplication(input, NOW);
    const left = await store().recordExit(input, exit);
    expect(left).toMatchObject({ state: 'left', leftFrom: 'expired', exit });
    // Reported again (a duplicate webhook), nothing changes.
    expect(await store().recordExit(input, { ...exit, at: NOW + 5 })).toMatchObject({ state: 'left', exit });
    expect(await store().beginStep(input, 'reminder1', { kind: 'once', state: 'invited', now: NOW })).toBe(false);
    const back = await store().undoExit(input, NOW + 10);
    // When it came back is kept: its follow-ups are due anew from then.
    expect(back).toMatchObject({ state: 'expired', returnedAt: NOW + 10 });
    expect(back?.exit).toBeUndefined();
    // The status claim starts again: the invitation's own status can be shown under `cancelled`'s rank.
    expect(back?.steps.status).toBeUndefined();
  });

  it('keeps the state of an application whose report came and records the exit for its write-back', async () => {
    const input = await invited('evt-late');
    await store().claimWriteBack(input, 'rep-1', lease('w2'));
    expect(await store().recordExit(input, { ...exit, kind: 'hired' })).toMatchObject({
      state: 'completed',
      exit: { kind: 'hired' },
    });
    expect((await store().undoExit(input, NOW + 1))?.exit).toBeUndefined();
  });

  it('keeps no exit on an invitation still being sent: its next contact looks again', async () => {
    const input = claimInput();
    await store().claimApplication(delivery('evt-claimed'), input, lease('w1'));
    const during = await store().recordExit(input, exit);
    expect(during?.state).toBe('claimed');
    expect(during?.exit).toBeUndefined();
  });

  it('lets a late report claim an invitation whose candidate left', async () => {
    const input = await invited('evt-left-report');
    await store().recordExit(input, exit);
    expect(await store().claimWriteBack(input, 'rep-2', lease('w2'))).toMatchObject({
      kind: 'claimed',
      record: { state: 'completed', exit: { kind: 'rejected' } },
    });
  });

  it('keeps a late status of the expired invitation off the next one: claimed only in its own round', async () => {
    const input = await invited('evt-round-1');
    await store().expireApplication(input, NOW);
    const status = (value: string, rank: number, round: number) =>
      ({ kind: 'rank', value, rank, now: NOW, round }) as const;
    expect(await store().beginStep(input, 'status', status('expired', 2, 0))).toBe(true);
    await store().claimApplication(delivery('evt-round-2'), { ...input, mayReinvite: true }, lease('w2'));
    // An expiry's worker that read the first invitation shows "expired" late: refused on the second.
    expect(await store().beginStep(input, 'status', status('expired', 2, 0))).toBe(false);
    expect(await store().beginStep(input, 'status', status('invited', 1, 1))).toBe(true);
    expect((await store().getApplication(input))?.steps.status?.value).toBe('invited');
    // A late "cancelled" of an exit since undone: claimed only while the application has left.
    const cancelled = { ...status('cancelled', 2.5, 1), whileState: 'left' } as const;
    expect(await store().beginStep(input, 'status', cancelled)).toBe(false);
    expect((await store().getApplication(input))?.steps.status?.value).toBe('invited');
  });

  it('one re-entry taken by several workers at once: one claims it, the others wait for it, none acks it', async () => {
    const input = await invited('evt-entry-1');
    await store().expireApplication(input, NOW);
    const again = { ...input, mayReinvite: true };
    const copies = await Promise.all(
      ['w2', 'w3', 'w4'].map((owner) =>
        store().claimApplication(delivery('evt-entry-2', 'enq-same'), again, lease(owner)),
      ),
    );
    expect(copies.map((c) => c.kind).sort()).toEqual(['claimed', 'held-elsewhere', 'held-elsewhere']);
  });

  it('invites again once per re-entry after an expiry: never on the delivery that began the invitation', async () => {
    const input = await invited('evt-entry-1');
    await store().expireApplication(input, NOW);
    const again = { ...input, mayReinvite: true };
    expect(await store().claimApplication(delivery('evt-entry-1', 'enq-x'), again, lease('w2'))).toMatchObject({
      kind: 'duplicate-delivery',
    });
    const reentry = await store().claimApplication(delivery('evt-entry-2'), again, lease('w3'));
    expect(reentry).toMatchObject({ kind: 'claimed', resumed: false, record: { state: 'claimed', reinvitations: 1 } });
    if (reentry.kind === 'claimed') expect(reentry.record.steps).toEqual({});
    // The earlier invitation's steps stay beside the new ones, for the operator's timeline.
    expect((await store().getApplication(input))?.earlierSteps).toMatchObject({
      status: { value: 'invited', rank: 1 },
    });
    // The same re-entry delivered again, and once more after the new invitation was sent: one invitation.
    for (const [evt, owner] of [
      ['evt-entry-2', 'w4'],
      ['evt-entry-2', 'w5'],
    ] as const)
      expect(
        (await store().claimApplication(delivery(evt, `enq-${owner}`), again, lease(owner, NOW + 1))).kind,
      ).not.toBe('claimed');
    await store().recordStep(input, { owner: 'w3', finish: 'invited' });
    expect((await store().claimApplication(delivery('evt-entry-2', 'enq-w6'), again, lease('w6'))).kind).not.toBe(
      'claimed',
    );
    // A trigger that never re-invites leaves an expired invitation be.
    await store().expireApplication(input, NOW + 2);
    const never = await store().claimApplication(delivery('evt-entry-3'), input, lease('w7'));
    expect(never.kind).not.toBe('claimed');
  });

  it('never takes an entry learnt of before the expiry for a re-entry (a resent delivery, a late one)', async () => {
    const input = await invited('evt-early-1');
    await store().expireApplication(input, NOW + 100);
    const again = (enteredAt: number) => ({ ...input, mayReinvite: true, enteredAt });
    const late = await store().claimApplication(delivery('evt-early-2'), again(NOW + 40), lease('w2'));
    expect(late.kind).not.toBe('claimed');
    expect((await store().getApplication(input))?.state).toBe('expired');
    const reentry = await store().claimApplication(delivery('evt-early-3'), again(NOW + 101), lease('w3'));
    expect(reentry).toMatchObject({ kind: 'claimed', record: { reinvitations: 1 } });
  });

  it('carries out an operator request once: a resend while invited, an extension opening an expired one', async () => {
    const input = await invited('evt-ops');
    const resend = { id: 'req-1', kind: 'resend', now: NOW } as const;
    expect(await store().applyOperatorRequest(input, resend)).toMatchObject({
      applied: true,
      record: { steps: { resend: { startedAt: NOW } } },
    });
    expect((await store().applyOperatorRequest(input, resend)).applied).toBe(false);
    await store().expireApplication(input, NOW);
    expect((await store().applyOperatorRequest(input, { ...resend, id: 'req-2' })).applied).toBe(false);
    const extend = { id: 'req-3', kind: 'extend', extendedUntil: NOW + 3 * DAY, now: NOW } as const;
    const extended = await store().applyOperatorRequest(input, extend);
    expect(extended).toMatchObject({ applied: true, record: { state: 'invited', extendedUntil: NOW + 3 * DAY } });
    expect(extended.record?.expiredAt).toBeUndefined();
    expect(extended.record?.steps.status).toBeUndefined();
    expect((await store().applyOperatorRequest(input, extend)).applied).toBe(false);
    const later = { ...extend, id: 'req-4', extendedUntil: NOW + 6 * DAY };
    expect((await store().applyOperatorRequest(input, later)).record?.extendedUntil).toBe(NOW + 6 * DAY);
    expect((await store().getApplication(input))?.operatorRequests).toEqual(['req-1', 'req-3', 'req-4']);
  });
}
