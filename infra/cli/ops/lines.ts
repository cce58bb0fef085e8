import type { Message } from '@aws-sdk/client-sqs';
import type { ApplicationRecord } from '../../../shared/pipeline/records';

/** The lines `npm run ops` prints: ids, states and times only, never an e-mail or a name. */

export const iso = (ms: unknown) => (typeof ms === 'number' ? new Date(ms).toISOString() : '-');

/** `report-created connection=acme report=r1`: what a queued message is about, from its ids alone. */
export function summariseMessageBody(body: string | undefined): string {
  try {
    const parsed = JSON.parse(body ?? '') as Record<string, unknown>;
    const report = parsed.reportId ? ` report=${String(parsed.reportId)}` : '';
    return `${String(parsed.kind)} connection=${String(parsed.connectionId)}${report}`;
  } catch {
    return 'not JSON';
  }
}

export function dlqMessageLine(message: Message): string {
  const receives = message.Attributes?.ApproximateReceiveCount ?? '?';
  const sent = iso(Number(message.Attributes?.SentTimestamp));
  return `  ${message.MessageId}  receives=${receives}  sent=${sent}  ${summariseMessageBody(message.Body)}`;
}

export function applicationStatusLines(r: ApplicationRecord): string[] {
  const failure = r.failureReason ? ` (${r.failureReason})` : '';
  const remarks = [
    r.flaggedForReview ? ', flagged for review' : '',
    r.inviteEmailUncertain ? ', invite e-mail uncertain (a worker stopped while sending)' : '',
  ].join('');
  const steps = [
    ['claimed', r.createdAt],
    ['invite e-mailed', r.inviteEmailAt],
    ['invite note posted', r.inviteNoteAt],
    ['report link attached', r.reportLinkAt],
    ['report note posted', r.reportNoteAt],
    ['moved', r.movedAt],
    ['last change', r.updatedAt],
  ] as const;
  return [
    `application ${r.atsApplicationId} (candidate ${r.atsCandidateId}, job ${r.atsJobId}), ` +
      `trigger ${r.triggerId}: ${r.state}${failure}`,
    `  interview ${r.interviewId ?? '-'}, report ${r.reportId ?? '-'}${remarks}`,
    ...steps.map(([step, at]) => `  ${step.padEnd(20)} ${iso(at)}`),
  ];
}

export function failedApplicationLine(r: ApplicationRecord): string {
  const what = r.reportId ? `report ${r.reportId} (write-back)` : '(invite)';
  const reason =
    r.state === 'failed'
      ? (r.failureReason ?? '')
      : `the invite e-mail was refused by SES (${r.inviteEmailRefused}); the ATS note carries the link`;
  const where = `${r.connectionId}  application ${r.atsApplicationId}  trigger ${r.triggerId}`;
  return `  ${where}  ${what}  ${iso(r.updatedAt)}  ${reason}`;
}

export const FAILED_HINT =
  'Fix the cause (the reason names it); then, for an invite, move the candidate into the stage again; ' +
  'for a write-back, npm run ops -- retry --connection C --application A.';
