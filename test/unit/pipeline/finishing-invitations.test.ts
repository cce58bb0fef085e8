import { describe, expect, it, vi } from 'vitest';
import { ATS_ERROR_CODES, AtsError } from '../../../shared/ats/errors';
import { InvalidRequestError } from '../../../shared/interview-service/errors';
import { handleStageEntered } from '../../../shared/pipeline/stage-entered.use-case';
import type { ApplicationRecord } from '../../../shared/pipeline/records';
import { connectionDocument } from '../../helpers/connections';
import { MemoryMappingStore } from '../../helpers/memory-store';
import { dependencies, fakeContext } from '../../helpers/pipeline-fakes';
import { applicationRecord, jobRecord, NOW, stageEnteredMessage } from '../../helpers/pipeline-records';

const BY_SERVICE = 'e-mailed by the service';
const first = { connectionId: 'acme-greenhouse', atsApplicationId: '4401', triggerId: 'ai-screen' };
const second = { ...first, triggerId: 'ai-screen-2' };
const FOUND = { candidate_id: 'cand-9', interview_id: 'int-1' };

/**
 * Application 4401 rejected while this delivery's invitations (`records`, their worker gone) were being sent, on a
 * connection with two triggers and the invitation mode `invites` now.
 */
function rejected(records: Partial<ApplicationRecord>[], invites: Record<string, string>) {
  const document = connectionDocument({ writeBack: { status: 'tags' } });
  const connection = document.connections[0] as { triggers: Record<string, unknown>[] };
  const base = connection.triggers[0] as Record<string, unknown>;
  connection.triggers = [base, { ...base, id: 'ai-screen-2' }];
  const { context, ats, interviews } = fakeContext(document);
  const setStatusTag = vi.fn().mockResolvedValue(undefined);
  Object.assign(ats, { setStatusTag });
  Object.assign(context.connection.interviewService, { invites });
  const job = { state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined } as const;
  const store = new MemoryMappingStore().seed({
    jobs: ['ai-screen', 'ai-screen-2'].map((triggerId) => jobRecord({ triggerId, ...job })),
    applications: records.map((r) =>
      applicationRecord({ state: 'claimed', entryDeliveryId: 'evt-1', leaseOwner: 'gone', leaseUntil: NOW - 1, ...r }),
    ),
  });
  const service = {
    inviteCandidate: vi.fn().mockResolvedValue({ candidate_id: 'cand-9', invite_url: 'https://i/int-1?cid=cand-9' }),
    findInvitation: vi.fn().mockResolvedValue(undefined),
  };
  Object.assign(interviews, service);
  ats.confirmStageEntered.mockResolvedValue({ confirmed: false, reason: 'the application is in another stage' });
  ats.readStanding.mockResolvedValue({ active: false, exit: 'rejected' });
  /** The worker stopped: its lease over, as the next delivery finds it. */
  const leaseOver = async (key: typeof first) =>
    store.seed({ applications: [{ ...(await store.getApplication(key))!, leaseUntil: NOW - 1 }] });
  return { store, deps: dependencies(store, context), ats, setStatusTag, service, leaseOver };
}

describe('Use case: invitations finished for a candidate who left the stage', () => {
  it('finishes by its e-mail one the connector e-mailed after a service invitation begun in another mode', async () => {
    // Begun per-candidate (the service to e-mail), then the connection went back to shared links and the connector's
    // e-mail went out; the note had not, when the recruiter rejected the candidate.
    const steps = {
      serviceInvite: { startedAt: NOW, value: BY_SERVICE },
      inviteEmail: { startedAt: NOW, doneAt: NOW },
    };
    const { store, deps, ats, service, leaseOver } = rejected([{ steps }], { mode: 'shared-link' });
    const message = stageEnteredMessage({ deliveryId: 'evt-1' });
    const [result] = await handleStageEntered(message, deps);
    expect(result?.outcome).toBe('invited');
    await leaseOver(first);
    await handleStageEntered(message, deps);
    expect(service.inviteCandidate).not.toHaveBeenCalled();
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
    expect(ats.postNote).toHaveBeenCalledOnce();
    expect(await store.getApplication(first)).toMatchObject({ state: 'left', leftFrom: 'invited' });
  });

  it('shows "cancelled" again on the retry when the finished invitation\'s tag write got no answer', async () => {
    const steps = { inviteEmail: { startedAt: NOW, doneAt: NOW } };
    const { store, deps, setStatusTag } = rejected([{ steps }], { mode: 'shared-link' });
    const lost = new AtsError(ATS_ERROR_CODES.unavailable, 'timed out after 10000 ms', { mayHaveSucceeded: true });
    setStatusTag.mockImplementation(async (_t: unknown, tag: string) => {
      if (tag === 'AI interview: cancelled' && !setStatusTag.mock.calls.slice(0, -1).some((c) => c[1] === tag))
        throw lost;
    });
    const message = stageEnteredMessage({ deliveryId: 'evt-1' });
    await expect(handleStageEntered(message, deps)).rejects.toBe(lost);
    expect(await store.getApplication(first)).toMatchObject({ state: 'left', leftFrom: 'invited' });
    // The same message again finds nothing claimed: the exit's status, owed since its first try, is shown.
    const [result] = await handleStageEntered(message, deps, { receiveCount: 2 });
    expect(result?.outcome).toBe('stage-not-confirmed');
    const cancelled = setStatusTag.mock.calls.filter((c) => c[1] === 'AI interview: cancelled');
    expect(cancelled).toHaveLength(2);
    expect(setStatusTag.mock.calls.at(-1)?.[1]).toBe('AI interview: cancelled');
  });

  it("records the exit of one finished though another trigger's step fails, before the message returns", async () => {
    const { store, deps, ats, service, leaseOver } = rejected(
      [
        { steps: { inviteEmail: { startedAt: NOW, doneAt: NOW } } },
        { triggerId: 'ai-screen-2', steps: { serviceInvite: { startedAt: NOW, value: BY_SERVICE } } },
      ],
      { mode: 'per-candidate', emailedBy: 'service' },
    );
    // The second's invitation is found, then gone when its step looks again: nothing is made anew, the message retried.
    service.findInvitation.mockResolvedValueOnce(FOUND);
    const message = stageEnteredMessage({ deliveryId: 'evt-1' });
    await expect(handleStageEntered(message, deps)).rejects.toMatchObject({ code: 'invitation-not-found' });
    expect(await store.getApplication(first)).toMatchObject({ state: 'left', leftFrom: 'invited' });
    await leaseOver(second);
    const [retry] = await handleStageEntered(message, deps);
    expect(retry?.outcome).toBe('stage-not-confirmed');
    expect(service.inviteCandidate).not.toHaveBeenCalled();
    expect(ats.postNote).toHaveBeenCalledOnce();
    expect((await store.getApplication(second))?.state).toBe('claimed');
  });

  it('looks each invitation up by the address its own claim recorded, as the webhook wrote it', async () => {
    const { store, deps, service } = rejected(
      [
        { candidateEmail: 'ana.new@example.com', steps: { inviteEmail: { startedAt: NOW, doneAt: NOW } } },
        { triggerId: 'ai-screen-2', steps: { serviceInvite: { startedAt: NOW, value: BY_SERVICE } } },
      ],
      { mode: 'per-candidate', emailedBy: 'service' },
    );
    // The service has the second invitation under the address it was made with (the webhook's, as written).
    service.findInvitation.mockImplementation(async (_id: string, email: string) =>
      email === 'Ana@Example.com' ? FOUND : undefined,
    );
    const results = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1' }), deps);
    expect(results.map((r) => r.outcome)).toEqual(['invited', 'invited']);
    expect(service.findInvitation.mock.calls.map((call) => call[1])).toEqual(['Ana@Example.com', 'Ana@Example.com']);
    expect(service.inviteCandidate.mock.calls[0]?.[0]).toMatchObject({ email: 'Ana@Example.com' });
    expect(await store.getApplication(second)).toMatchObject({ state: 'left', candidateEmail: 'ana@example.com' });
    expect(await store.getApplication(first)).toMatchObject({ state: 'left', candidateEmail: 'ana.new@example.com' });
  });

  it('never tells "not sent" of an invitation the service has when it refuses to hand its link again', async () => {
    const { store, deps, ats, setStatusTag, service } = rejected(
      [{ steps: { serviceInvite: { startedAt: NOW, value: BY_SERVICE } } }],
      { mode: 'per-candidate', emailedBy: 'service' },
    );
    // The service has it, so it may have e-mailed the candidate; asked again for its link, it refuses for good.
    service.findInvitation.mockResolvedValue(FOUND);
    service.inviteCandidate.mockRejectedValue(new InvalidRequestError('interview closed'));
    const [result] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1' }), deps);
    expect(result?.outcome).toBe('failed');
    expect(ats.postNote).not.toHaveBeenCalled();
    expect(setStatusTag).not.toHaveBeenCalled();
    expect((await store.getApplication(first))?.state).toBe('failed');
  });

  it("writes the expiry note another re-entry carried, the invitation found being a removed trigger's", async () => {
    const { deps, ats, service } = rejected(
      [
        // A trigger removed from the configuration since: its service invitation begun, found at the service.
        { triggerId: 'ai-screen-old', steps: { serviceInvite: { startedAt: NOW, value: BY_SERVICE } } },
        // This delivery's re-entry on ai-screen-2: nothing begun, the earlier invitation's expiry note carried.
        { triggerId: 'ai-screen-2', reinvitations: 1, priorExpiry: { expiredAt: NOW - 1000, round: 0 }, steps: {} },
      ],
      { mode: 'per-candidate', emailedBy: 'service' },
    );
    service.findInvitation.mockResolvedValue(FOUND);
    const [result] = await handleStageEntered(stageEnteredMessage({ deliveryId: 'evt-1' }), deps);
    expect(result?.outcome).toBe('no-matching-trigger');
    expect(ats.postNote).toHaveBeenCalledOnce();
    expect(ats.postNote.mock.calls[0]?.[1].marker).toContain('expir');
  });
});
