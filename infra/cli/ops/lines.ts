import type { Message } from '@aws-sdk/client-sqs';
import type { ApplicationRecord, ApplicationSteps, StepName } from '../../../shared/pipeline/records';
import { failureCauseOf } from '../../../shared/pipeline/failure-note';

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

/** Each step as an operator reads it, in the order an application passes them. */
const STEP_LABELS: [StepName | RegExp, string][] = [
  ['serviceInvite', 'service invitation'],
  ['inviteEmail', 'invite e-mailed'],
  ['priorExpiryNote', 'earlier expiry note posted'],
  ['inviteNote', 'invite note posted'],
  [/^reminder\d+$/, 'reminder'],
  ['expiryNote', 'expiry note posted'],
  ['resend', 'link sent again'],
  [/^failureNote/, 'failure note:'],
  ['reportArrived', 'report received, its write-back waiting its turn'],
  ['reportLink', 'report link attached'],
  ['reportNote', 'report note posted'],
  ['stageMove', 'moved'],
  ['status', 'status shown'],
];

/** What tells one step of a kind from another: a reminder's number, a failure note's cause (`report unreadable`). */
const detailOf = (name: string): string => failureCauseOf(name)?.replaceAll('-', ' ') ?? name.replace(/^\D+/, '');

/**
 * Each step in the order it happened. 'begun' marks one started and not answered; a status is claimed, never
 * answered, so it shows only what the ATS shows.
 */
function stepLines(steps: ApplicationSteps): string[] {
  const lines: { at: number; line: string }[] = [];
  for (const [match, label] of STEP_LABELS)
    for (const [name, step] of Object.entries(steps)) {
      if (!step || (typeof match === 'string' ? name !== match : !match.test(name))) continue;
      const what = match instanceof RegExp ? `${label} ${detailOf(name)}` : label;
      const outcome = step.outcome === 'uncertain' ? ' (uncertain: a worker stopped while sending)' : '';
      const value = step.outcome === 'refused' ? ` (refused: ${step.value})` : step.value ? ` (${step.value})` : '';
      // A step only leased so far (a note a worker is posting) shows when its lease ends.
      const held = step.doneAt === undefined && step.startedAt === undefined ? step.leaseUntil : undefined;
      const at = step.doneAt ?? step.startedAt ?? held ?? 0;
      const begun = step.doneAt === undefined && !step.outcome && name !== 'status' ? ' begun' : '';
      const when = held === undefined ? iso(at) : `held until ${iso(held)}`;
      lines.push({ at, line: `  ${what.padEnd(32)} ${when}${begun}${value}${outcome}` });
    }
  return lines.sort((a, b) => a.at - b.at).map(({ line }) => line);
}

/** What the invitation before this one did (a re-invitation keeps it), under a line naming it. */
function earlierLines(r: ApplicationRecord): string[] {
  const earlier = stepLines(r.earlierSteps ?? {});
  if (!earlier.length) return [];
  return [`  invitation ${r.reinvitations ?? 1}, before this one:`, ...earlier.map((line) => `  ${line}`)];
}

export function applicationStatusLines(r: ApplicationRecord): string[] {
  const failure = r.failureReason ? ` (${r.failureReason})` : '';
  const remarks = r.flaggedForReview ? ', flagged for review' : '';
  const exit = r.exit
    ? ` (the candidate left: ${r.exit.kind} ${iso(r.exit.at)}${r.leftFrom ? `, was ${r.leftFrom}` : ''})`
    : '';
  const again = r.reinvitations ? `, invitation ${r.reinvitations + 1}` : '';
  const extended = r.extendedUntil ? `, expiry extended to ${iso(r.extendedUntil)}` : '';
  return [
    `application ${r.atsApplicationId} (candidate ${r.atsCandidateId}, job ${r.atsJobId}), ` +
      `trigger ${r.triggerId}: ${r.state}${failure}${exit}`,
    `  interview ${r.interviewId ?? '-'}, report ${r.reportId ?? '-'}${remarks}${again}${extended}`,
    ...earlierLines(r),
    `  ${'claimed'.padEnd(32)} ${iso(r.createdAt)}`,
    ...stepLines(r.steps),
    `  ${'last change'.padEnd(32)} ${iso(r.updatedAt)}`,
  ];
}

export function failedApplicationLine(r: ApplicationRecord): string {
  const what = r.reportId ? `report ${r.reportId} (write-back)` : '(invite)';
  const refused = [
    r.steps.inviteNote?.outcome === 'refused' &&
      `the ATS refused the invite note (${r.steps.inviteNote.value}); the e-mailed invitation went on`,
    r.steps.reportNote?.outcome === 'refused' &&
      `the ATS refused the report note (${r.steps.reportNote.value}); the file, move and status went on`,
    r.steps.stageMove?.outcome === 'refused' &&
      `the ATS refused the stage move (${r.steps.stageMove.value}); flagged for review, a note says so`,
  ].filter((line): line is string => typeof line === 'string');
  const reason =
    r.state === 'failed'
      ? (r.failureReason ?? '')
      : refused.length
        ? refused.join('; ')
        : `the invite e-mail was refused by SES (${r.steps.inviteEmail?.value}); the ATS note carries the link`;
  const where = `${r.connectionId}  application ${r.atsApplicationId}  trigger ${r.triggerId}`;
  return `  ${where}  ${what}  ${iso(r.updatedAt)}  ${reason}`;
}

export const FAILED_HINT =
  'Fix the cause (the reason names it); then, for an invite, move the candidate into the stage again; ' +
  'for a write-back that failed, or whose note or move the ATS refused, npm run ops -- retry --connection C ' +
  '--application A (the refused steps are done again, once). An invitation with a refused note has nothing to retry.';

/** How `retry` names a refused step it does again. */
export const REFUSED_STEP_NAMES = { reportNote: 'report note', stageMove: 'stage move', reportLink: 'report link' };
