import { createHash } from 'node:crypto';
import type { Connection, Trigger } from '../config';
import { singleLine, TEXT_LIMITS } from '../validation';
import type { CreateInterviewInput, UpdateInterviewInput } from '../interview-service';

/**
 * The interview's name carries a reference unique to connection × job × trigger. The service has no
 * idempotency, so after a create whose answer was lost this name is how the interview is found again.
 */
export function interviewNameFor(
  connection: Connection,
  trigger: Trigger,
  job: { atsJobId: string; jobName?: string | undefined },
): string {
  const title = trigger.interview.namePattern
    // The job's name comes from the ATS: one bounded line on the service, as in an e-mail.
    .replaceAll('{jobName}', singleLine(job.jobName ?? `Job ${job.atsJobId}`, TEXT_LIMITS.name))
    .replaceAll('{jobId}', job.atsJobId);
  return `${title} (ref ${connection.id}/${job.atsJobId}/${trigger.id})`;
}

export function createInputFor(trigger: Trigger, interviewName: string): CreateInterviewInput {
  return {
    interview_name: interviewName,
    custom_question_list: trigger.interview.questions,
    interview_language: trigger.interview.language,
    can_change_interview_language: trigger.interview.allowLanguageChange,
    is_proctoring_required: trigger.interview.proctoring,
  };
}

/** Fields only the update endpoint takes (skills, coding round); undefined when the template has none. */
export function updateOnlyInputFor(trigger: Trigger): UpdateInterviewInput | undefined {
  const { skills, codingRound } = trigger.interview;
  if (skills.length === 0 && !codingRound) return undefined;
  return {
    ...(skills.length ? { skills } : {}),
    ...(codingRound
      ? {
          is_coding_round_required: codingRound.required,
          only_coding_round: codingRound.only,
          selected_coding_language: codingRound.language,
          ...(codingRound.details ? { coding_exercise_details: codingRound.details } : {}),
        }
      : {}),
  };
}

/** The whole template as the service will hold it; a changed template updates the interview in place. */
export function fullUpdateInputFor(trigger: Trigger, interviewName: string): UpdateInterviewInput {
  return { ...createInputFor(trigger, interviewName), ...updateOnlyInputFor(trigger) };
}

export function templateHash(trigger: Trigger, interviewName: string): string {
  return createHash('sha256')
    .update(JSON.stringify(fullUpdateInputFor(trigger, interviewName)))
    .digest('hex')
    .slice(0, 32);
}
