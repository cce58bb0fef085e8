import { createSetupAdapter } from '../../../shared/ats/setup-adapter';
import type { Connection, Trigger } from '../../../shared/config';
import { InterviewServiceClient, type InterviewReport } from '../../../shared/interview-service';
import { interviewNameFor } from '../../../shared/pipeline/interview-template';
import { decideAdvance } from '../../../shared/pipeline/report-note';
import { stageMatches } from '../../../shared/config';
import { matchTriggers } from '../../../shared/pipeline/trigger-matching';
import { patiently, readSecret, type DoctorDependencies } from '../../../shared/doctor/checks';
import type { ApplicationRecord } from '../../../shared/pipeline/records';
import { errorMessage } from '../../../shared/errors';

/** The scores the dry run puts through the write-back rule. */
export const DRY_RUN_SCORES = [40, 75, 90] as const;

/**
 * What a stage change of `applicationId` into its current stage would do, read from the ATS and the interview
 * service with reads only: which trigger matches (or why none does), the interview that would be used or created,
 * the invite's channels, and the write-back rule's decision for a few scores. Nothing is written anywhere.
 */
export async function dryRun(
  connection: Connection,
  applicationId: string,
  deps: DoctorDependencies,
): Promise<string[]> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const secret = await readSecret(connection, deps.secrets);
  if ('line' in secret) throw new Error(`${secret.line.what}: ${secret.line.fix ?? ''}`);
  const ats = createSetupAdapter(connection, secret.secrets, deps.fetch ? { fetch: deps.fetch } : {});
  const application = await patiently(() => ats.readApplication(applicationId), sleep);
  const stage = `"${application.stage.name ?? '?'}"${application.stage.id ? ` (id ${application.stage.id})` : ''}`;
  const out = [
    `application ${application.atsApplicationId}: job ${application.atsJobId}` +
      `${application.jobName ? ` (${application.jobName})` : ''}, stage ${stage}, ` +
      `candidate ${application.atsCandidateId} ${application.hasEmail ? 'has' : 'has no'} e-mail address`,
  ];
  // The pipeline reads where the candidate stands before it contacts them: one who left is not invited.
  const standing = await patiently(() => ats.readStanding(refOf(application)), sleep);
  if (!standing.active) {
    const why = standing.reason ? `: ${standing.reason}` : '';
    out.push(`the candidate has left the process (${standing.exit}${why}): a stage change would invite no one`);
    out.push('nothing was written: this was a dry run');
    return out;
  }
  const event = { atsJobId: application.atsJobId, stage: application.stage };
  const matched = matchTriggers(connection, event);
  for (const trigger of connection.triggers) {
    if (matched.includes(trigger)) out.push(`trigger ${trigger.id}: matches`);
    else out.push(`trigger ${trigger.id}: does not match: ${whyNot(trigger, event)}`);
  }
  const trigger = matched[0];
  if (!trigger) {
    out.push('a stage change into this stage would do nothing');
    return out;
  }
  if (matched.length > 1) out.push(`(${matched.length} triggers match: each would invite on its own)`);
  out.push(...(await heldAlready(connection, application.atsApplicationId, matched, deps)));

  const name = interviewNameFor(connection, trigger, { atsJobId: application.atsJobId, jobName: application.jobName });
  const client = new InterviewServiceClient({
    baseUrl: connection.interviewService.baseUrl,
    apiKey: secret.secrets.interviewApiKey,
    timeoutMs: connection.interviewService.timeoutMs,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  const existing = await client.findInterviewsByName(name);
  const questions = trigger.interview.questions.length;
  out.push(
    existing[0]
      ? `interview: would use ${existing[0].interview_id} ("${name}")`
      : `interview: would create "${name}" (${questions} question${questions === 1 ? '' : 's'}, ` +
          `language ${trigger.interview.language})`,
  );
  out.push(`invite: ${inviteChannels(connection, trigger, application.hasEmail, deps.mailFrom)}`);

  const rule = connection.writeBack.advance;
  for (const score of DRY_RUN_SCORES) {
    const report = {
      ai_match_score: score,
      proctoring_violations: [],
      proctoring_score: 100,
    } as unknown as InterviewReport;
    const decision = decideAdvance(rule, report);
    const move =
      decision.advance && rule ? ` → move to ${rule.toStage.name ?? rule.toStage.id ?? 'the configured stage'}` : '';
    out.push(`write-back, AI match score ${score}: a note; ${decision.explanation}${move}`);
  }
  out.push('nothing was written: this was a dry run');
  return out;
}

/**
 * What the connector already holds for the application under each matching trigger, and what a stage change would do
 * with it: the lines after it say what a first invitation would do. A read that fails is said, not thrown.
 */
async function heldAlready(
  connection: Connection,
  applicationId: string,
  matched: readonly Trigger[],
  deps: DoctorDependencies,
): Promise<string[]> {
  if (!deps.applicationRecords) return ["the connector's records of this application: not read (no mapping table)"];
  let records: ApplicationRecord[];
  try {
    records = await deps.applicationRecords(connection.id, applicationId);
  } catch (error) {
    return [`the connector's records of this application: not read (${errorMessage(error)})`];
  }
  const status = `npm run ops -- status --connection ${connection.id} --application ${applicationId}`;
  return matched.flatMap((trigger) => {
    const record = records.find((r) => r.triggerId === trigger.id);
    if (!record) return [`trigger ${trigger.id}: the connector holds no record of this application yet`];
    const changed = new Date(record.updatedAt).toISOString();
    const again = record.reinvitations ? `, invitation ${record.reinvitations + 1}` : '';
    return [
      `trigger ${trigger.id}: the connector already holds this application (${record.state}${again}, last ` +
        `changed ${changed}): ${withRecord(record, trigger)}; what it did: ${status}`,
    ];
  });
}

/** What a stage change into the trigger's stage does with the application's record (application-states.ts). */
function withRecord(record: ApplicationRecord, trigger: Trigger): string {
  const expired = record.state === 'expired' || (record.state === 'left' && record.leftFrom === 'expired');
  if (expired)
    return trigger.reinvite === 'never'
      ? 'no new invitation (reinvite: never)'
      : 'a new entry into the stage invites them anew, once (reinvite: on-reentry)';
  if (record.state === 'left') return 'back in the process and the stage, the invitation returns where it was';
  if (record.state === 'failed' && !record.reportId)
    return 'a stage change tries the invitation again, skipping the steps already done';
  return 'a stage change acts on that record and invites no one twice';
}

const refOf = (application: { atsApplicationId: string; atsCandidateId: string; atsJobId: string }) => ({
  atsApplicationId: application.atsApplicationId,
  atsCandidateId: application.atsCandidateId,
  atsJobId: application.atsJobId,
});

function whyNot(
  trigger: Trigger,
  event: { atsJobId: string; stage: { id?: string | undefined; name?: string | undefined } },
) {
  if (trigger.jobs !== 'all' && !trigger.jobs.includes(event.atsJobId))
    return `job ${event.atsJobId} is not one of its jobs (${trigger.jobs.join(', ')})`;
  const wanted = trigger.stage.name !== undefined ? `"${trigger.stage.name}"` : `id ${trigger.stage.id ?? 'per job'}`;
  const verdict = stageMatches(trigger.stage, event.stage, event.atsJobId);
  return verdict === 'unknown'
    ? `the ATS did not say enough about the stage to compare it with ${wanted}`
    : `its stage is ${wanted}`;
}

function inviteChannels(connection: Connection, trigger: Trigger, hasEmail: boolean, mailFrom: string | undefined) {
  const { mode, emailedBy } = connection.interviewService.invites;
  const link = mode === 'per-candidate' ? 'a link of their own (POST /interview/invite)' : "the interview's link";
  const channels: string[] = [];
  if (emailedBy === 'service') channels.push('the interview service e-mails it');
  else if (trigger.invite.email)
    channels.push(
      hasEmail
        ? `an e-mail from ${trigger.invite.from ?? mailFrom ?? 'the deployment sender'}`
        : 'no e-mail (the candidate has no address)',
    );
  if (trigger.invite.atsNote) channels.push('a note on the application');
  return `${link}; ${channels.join(', ') || 'no channel (invite.email and invite.atsNote are off)'}`;
}
