import { beforeEach, describe, expect, it, vi } from 'vitest';
import { MailerError } from '../../../shared/mail/ses.mailer';
import { faultInjection, SimulatedCrash, clearInterviewCache } from '../../../shared/pipeline';
import { handleOrderReceived } from '../../../shared/orders/order-received.use-case';
import { connectionDocument } from '../../helpers/connections';
import { MemoryMappingStore } from '../../helpers/memory-store';
import { greenhouseOrder, MemoryOrderStore } from '../../helpers/memory-orders';
import { dependencies, fakeContext } from '../../helpers/pipeline-fakes';
import { NOW } from '../../helpers/pipeline-records';

const QUESTIONS = [{ question: 'Walk us through a system you built.', time: 3, type: 'audio' }];
const TEST = { id: 'backend-screen', name: 'Backend screen', interview: { questions: QUESTIONS } };

beforeEach(() => {
  clearInterviewCache();
  faultInjection.afterSideEffect = undefined;
});

async function ordered() {
  const { context, interviews } = fakeContext(connectionDocument({ orders: { greenhouse: { tests: [TEST] } } }));
  const orders = new MemoryOrderStore();
  const order = greenhouseOrder(NOW);
  await orders.recordOrder(order);
  const deps = { ...dependencies(new MemoryMappingStore(), context), orders };
  return { deps, orders, order, interviews };
}

describe('An order placed from the ATS', () => {
  it("ensures the test's interview, e-mails the candidate its link once, and moves the order to invited", async () => {
    const { deps, orders, order, interviews } = await ordered();
    expect(await handleOrderReceived(order, deps)).toEqual({ outcome: 'invited' });
    // The same message again (a retry, a duplicate delivery): nothing more.
    expect(await handleOrderReceived(order, deps)).toEqual({ outcome: 'done' });
    expect(interviews.createInterview).toHaveBeenCalledTimes(1);
    expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(1);
    expect(deps.mailer.sendInvite.mock.calls[0]?.[0]).toMatchObject({
      to: 'ana@example.com',
      jobName: 'Backend screen',
      inviteUrl: 'https://i.example.com/int-new',
    });
    expect(await orders.getOrder(order)).toMatchObject({
      state: 'invited',
      interviewId: 'int-new',
      steps: { interview: { doneAt: NOW }, inviteEmail: { doneAt: NOW } },
    });
  });

  it('after a crash between the e-mail and its record, never e-mails again: recorded uncertain', async () => {
    const { deps, orders, order } = await ordered();
    faultInjection.afterSideEffect = (point) => {
      if (point === 'invite-emailed') throw new SimulatedCrash(point);
    };
    await expect(handleOrderReceived(order, deps)).rejects.toBeInstanceOf(SimulatedCrash);
    faultInjection.afterSideEffect = undefined;
    // The message comes back once the crashed worker's lease ran out.
    const later = { ...deps, now: () => NOW + 10 * 60_000 };
    expect(await handleOrderReceived(order, later)).toEqual({ outcome: 'invited' });
    expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(1);
    expect(await orders.getOrder(order)).toMatchObject({
      state: 'invited',
      steps: { inviteEmail: { outcome: 'uncertain' } },
    });
  });

  it('fails the order for good when SES refuses its only channel, and tells why', async () => {
    const { deps, orders, order } = await ordered();
    deps.mailer.sendInvite.mockRejectedValue(
      new MailerError('MessageRejected', true, new Error('Email address is not verified')),
    );
    expect(await handleOrderReceived(order, deps)).toEqual({ outcome: 'failed', reason: 'mail-refused' });
    const failed = await orders.getOrder(order);
    expect(failed).toMatchObject({ state: 'failed', failureReason: 'mail-refused' });
    expect(failed?.steps.inviteEmail).toBeUndefined();
  });

  it('records an e-mail whose answer was lost as uncertain at once, never sent again', async () => {
    const { deps, orders, order } = await ordered();
    deps.mailer.sendInvite.mockRejectedValueOnce(new MailerError('TimeoutError', false, new Error('timed out')));
    expect(await handleOrderReceived(order, deps)).toEqual({ outcome: 'invited' });
    expect(await orders.getOrder(order)).toMatchObject({
      state: 'invited',
      steps: { inviteEmail: { outcome: 'uncertain', startedAt: NOW } },
    });
    expect(await handleOrderReceived(order, deps)).not.toEqual({ outcome: 'invited' });
    expect(deps.mailer.sendInvite).toHaveBeenCalledTimes(1);
  });

  it('is held elsewhere while another worker holds the claim, after a bounded look', async () => {
    const { deps, orders, order } = await ordered();
    await orders.claimOrder(order, { owner: 'other', now: NOW, durationMs: 60_000 });
    const sleep = vi.fn(async () => undefined);
    // The clock stands still: the look ends by its count, not by the clock.
    expect(await handleOrderReceived(order, { ...deps, sleep })).toEqual({ outcome: 'held-elsewhere' });
    expect(sleep).toHaveBeenCalledTimes(25);
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
  });

  it('is done when the worker holding the claim invites while it looks (a second copy beside the first)', async () => {
    const { deps, orders, order } = await ordered();
    const first = await orders.claimOrder(order, { owner: 'other', now: NOW, durationMs: 60_000 });
    expect(first.kind).toBe('claimed');
    let looks = 0;
    const sleep = async () => {
      looks += 1;
      if (looks === 2) await orders.recordOrderStep(order, { owner: 'other', move: 'createInterview' });
      if (looks === 3) await orders.recordOrderStep(order, { owner: 'other', move: 'invite', release: true });
    };
    expect(await handleOrderReceived(order, { ...deps, sleep })).toEqual({ outcome: 'done' });
    expect(looks).toBe(3);
    expect(deps.mailer.sendInvite).not.toHaveBeenCalled();
  });
});
