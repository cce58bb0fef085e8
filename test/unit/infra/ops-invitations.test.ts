import { describe, expect, it, vi } from 'vitest';
import { requestOnInvitation } from '../../../infra/cli/ops/invitations';
import type { QueuePublisher } from '../../../shared/queue';
import { applicationRecord, NOW } from '../../helpers/pipeline-records';

/** `ops resend|extend` on application 4401 whose one record is `record`: what it says and what it queues. */
async function request(action: 'resend' | 'extend', record = applicationRecord()) {
  const publish = vi.fn().mockResolvedValue(undefined);
  const deps = {
    store: { findApplicationsByAtsId: vi.fn().mockResolvedValue([record]) },
    publisher: { publish } as unknown as QueuePublisher,
    stageQueueUrl: 'http://127.0.0.1/stage',
  };
  const done = await requestOnInvitation(
    { action, connectionId: 'acme-greenhouse', applicationId: '4401', days: 3 },
    deps,
  );
  return { ...done, publish };
}

describe('Function: requestOnInvitation (npm run ops -- resend | extend)', () => {
  it('queues a resend of an invitation still open, and none of one whose candidate took the interview', async () => {
    const open = await request('resend');
    expect(open.queued).toBe(1);
    expect(open.publish.mock.calls[0]?.[1]).toMatchObject({
      kind: 'follow-up',
      action: 'resend',
      triggerId: 'ai-screen',
    });
    const taken = applicationRecord({ steps: { failureNoteReportUnreadable: { startedAt: NOW, doneAt: NOW } } });
    const none = await request('resend', taken);
    expect(none.queued).toBe(0);
    expect(none.publish).not.toHaveBeenCalled();
    expect(none.lines).toEqual([
      'trigger ai-screen: the candidate took the interview (its report not given yet); no resend',
    ]);
    // Written back since: said as it is now.
    const done = await request('resend', { ...taken, state: 'written_back', reportId: 'rep-1' });
    expect(done.lines).toEqual(['trigger ai-screen: the invitation is written_back; nothing to resend']);
    // An extension changes no e-mail: still queued.
    expect((await request('extend', taken)).queued).toBe(1);
  });

  it('says to extend an expired invitation before resending it', async () => {
    const expired = await request('resend', applicationRecord({ state: 'expired' }));
    expect(expired.queued).toBe(0);
    expect(expired.lines[0]).toContain('the invitation is expired; nothing to resend (extend it first');
  });
});
