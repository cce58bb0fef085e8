import { REPORT_UNREADABLE_STEP } from '../../../shared/pipeline/report-unreadable';
import { randomUUID } from 'node:crypto';
import type { MappingStore } from '../../../shared/pipeline/ports';
import type { FollowUpMessage, QueuePublisher } from '../../../shared/queue';

/** What an operator asks of a candidate's invitation: its link e-mailed again, or days added to its expiry. */
export interface InvitationRequest {
  action: 'resend' | 'extend';
  connectionId: string;
  applicationId: string;
  days?: number | undefined;
}

/**
 * `ops resend` and `ops extend`: one follow-up message per trigger whose invitation it can act on, with one request
 * id for the command. The invite worker carries a request out once, recorded on the application, however often its
 * message is delivered; it reads the application in the ATS first, and a candidate who left is not contacted.
 */
export async function requestOnInvitation(
  request: InvitationRequest,
  deps: { store: Pick<MappingStore, 'findApplicationsByAtsId'>; publisher: QueuePublisher; stageQueueUrl: string },
): Promise<{ lines: string[]; queued: number }> {
  const { action, connectionId, applicationId } = request;
  const records = await deps.store.findApplicationsByAtsId(connectionId, applicationId);
  if (!records.length) return { lines: [`no application ${applicationId} for connection ${connectionId}`], queued: 0 };
  const open = action === 'resend' ? ['invited'] : ['invited', 'expired'];
  const requestId = `ops-${randomUUID()}`;
  const lines: string[] = [];
  let queued = 0;
  for (const record of records) {
    if (!open.includes(record.state)) {
      // An expired invitation's link is sent again once it is extended: said where the resend is refused.
      const first = record.state === 'expired' ? ' (extend it first: npm run ops -- extend …, then resend)' : '';
      lines.push(`trigger ${record.triggerId}: the invitation is ${record.state}; nothing to ${action}${first}`);
      continue;
    }
    if (action === 'resend' && record.steps[REPORT_UNREADABLE_STEP] !== undefined) {
      lines.push(`trigger ${record.triggerId}: the candidate took the interview (its report not given yet); no resend`);
      continue;
    }
    const message: FollowUpMessage = {
      v: 1,
      kind: 'follow-up',
      enqueueId: randomUUID(),
      connectionId,
      receivedAt: Date.now(),
      atsApplicationId: applicationId,
      triggerId: record.triggerId,
      action,
      requestId,
      ...(action === 'extend' ? { days: request.days } : {}),
    };
    await deps.publisher.publish(deps.stageQueueUrl, message);
    queued++;
    lines.push(
      `trigger ${record.triggerId}: ${action} queued (request ${requestId}); ` +
        `npm run ops -- status --connection ${connectionId} --application ${applicationId} shows it done`,
    );
  }
  return { lines, queued };
}
