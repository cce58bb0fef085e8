import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import type { AtsKind } from '../../../shared/config';
import { QueuePublisher } from '../../../shared/queue';
import { requestOnInvitation } from '../../../infra/cli/ops/invitations';
import { followUps, inOpenWindow, isReminder, sentEarlier, useLifecycleStack } from '../../helpers/follow-ups';
import { emailsTo } from '../../helpers/local-stack';
import { waitFor } from '../../helpers/local-http';

const KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly AtsKind[];
const DAY = 24 * 3_600_000;

/**
 * Candidates who come back after their invitation, on each ATS's sandbox with the real local services: a re-entry
 * after the expiry, and an operator's resend and extension. Reminders and the expiry run the invite worker's
 * follow-up with a fake clock.
 */
describe('A candidate after the invitation: re-entries, resends and extensions', () => {
  const { stack: heldStack, invited, statusesOf } = useLifecycleStack('candidate-return');
  let stack: LocalStack;
  beforeAll(() => {
    stack = heldStack();
  });

  it.each(KINDS)(
    '%s: a re-entry after the expiry makes exactly one new invitation, its webhook delivered three times',
    async (kind) => {
      const { application, email } = await invited(kind, 'Uma');
      // Sent 8 days ago: the reminders and the expiry are due now, and the re-entry comes after the expiry.
      const g = followUps(stack, kind, { now: Date.now() });
      await sentEarlier(stack, await g.record(application.id), 8 * DAY);
      // The reminders it was due go first, then the invitation expires.
      for (const reminder of [0, 1])
        await inOpenWindow(async () => g.run(await g.record(application.id), 'remind', reminder));
      expect((await inOpenWindow(async () => g.run(await g.record(application.id), 'expire'))).outcome).toBe('expired');
      expect(statusesOf(kind, application.id)).toEqual(['expired']);
      await stack.ats[kind].moveCandidate({ applicationId: application.id, stageName: 'Hiring Manager Review' });
      await stack.ats[kind].moveCandidate({ applicationId: application.id, stageName: 'AI Interview', repeat: 3 });
      await waitFor(
        async () => (await emailsTo(stack, email)).filter((m) => !isReminder(m)).length >= 2,
        30_000,
        'the new invitation',
      );
      await stack.waitForQuiet();
      // The sweep finds nothing more to do either.
      await stack.reconcileNow();
      await stack.waitForQuiet();
      expect((await emailsTo(stack, email)).filter((m) => !isReminder(m))).toHaveLength(2);
      expect(await g.record(application.id)).toMatchObject({ state: 'invited', reinvitations: 1 });
      expect(statusesOf(kind, application.id)).toEqual(['invited']);
      const inviteNotes = stack.ats[kind].notesOf(application.id).filter((n) => n.includes('ai-interview-invite:'));
      expect(inviteNotes).toHaveLength(2);
    },
    90_000,
  );

  it.each(KINDS)(
    '%s: ops resend and ops extend act once each, however often their messages are delivered',
    async (kind) => {
      const { application, email } = await invited(kind, 'Vic');
      const connectionId = stack.connections.find((c) => c.ats === kind)?.id as string;
      const publisher = new QueuePublisher({ client: stack.sqs });
      const store = followUps(stack, kind, { now: Date.now() }).store;
      const deps = { store, publisher: duplicating(publisher), stageQueueUrl: stack.queues.stage.url };
      const resend = await requestOnInvitation({ action: 'resend', connectionId, applicationId: application.id }, deps);
      expect(resend.lines[0]).toContain('resend queued');
      expect(resend.queued).toBe(1);
      await waitFor(async () => (await emailsTo(stack, email)).length >= 2, 30_000, 'the link sent again');
      await stack.waitForQuiet();
      expect(await emailsTo(stack, email)).toHaveLength(2);
      const record = (await store.findApplicationsByAtsId(connectionId, application.id))[0];
      expect(record?.steps.resend?.doneAt).toBeGreaterThan(0);
      expect(record?.operatorRequests).toHaveLength(1);

      await requestOnInvitation({ action: 'extend', connectionId, applicationId: application.id, days: 3 }, deps);
      const before = Date.now();
      await waitFor(
        async () => (await store.findApplicationsByAtsId(connectionId, application.id))[0]?.extendedUntil !== undefined,
        30_000,
        'the extension',
      );
      await stack.waitForQuiet();
      const extended = (await store.findApplicationsByAtsId(connectionId, application.id))[0];
      expect(extended?.state).toBe('invited');
      // Three days after the later of now and the invitation's own expiry (7 days after it was sent).
      expect(extended?.extendedUntil).toBeGreaterThanOrEqual(before + 10 * DAY - 60_000);
      expect(extended?.operatorRequests).toHaveLength(2);
      expect(await emailsTo(stack, email)).toHaveLength(2);
    },
    90_000,
  );
});

/** A publisher that sends every message twice, as SQS may deliver it twice: the worker must act once. */
function duplicating(publisher: QueuePublisher): QueuePublisher {
  return new Proxy(publisher, {
    get(target, property, receiver) {
      if (property !== 'publish') return Reflect.get(target, property, receiver);
      return async (...args: Parameters<QueuePublisher['publish']>) => {
        await target.publish(...args);
        return target.publish(...args);
      };
    },
  });
}
