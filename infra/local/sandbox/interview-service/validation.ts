import * as v from 'valibot';
import { INTERVIEW_LANGUAGES, INTERVIEW_LIMITS, QUESTION_TYPES } from '../../../../shared/interview-service/constants';

/**
 * The service's own checks of create and update bodies (spec §2.5, §8; facts "Inputs"), written apart from
 * the client's so that a client bug shows up against the sandbox instead of being shared with it.
 */
const question = v.object({
  question: v.pipe(v.string('question must be a string'), v.minLength(1, 'question is required')),
  time: v.pipe(
    v.number('time must be a number'),
    v.integer('time must be whole minutes'),
    v.minValue(1, 'time must be 1 to 4 minutes'),
    v.maxValue(4, 'time must be 1 to 4 minutes'),
  ),
  type: v.picklist(QUESTION_TYPES, `type must be one of ${QUESTION_TYPES.join(', ')}`),
});

const questions = v.pipe(
  v.array(question, 'custom_question_list must be an array'),
  v.minLength(1, 'custom_question_list must not be empty'),
  v.maxLength(
    INTERVIEW_LIMITS.maxQuestions,
    `custom_question_list must have at most ${INTERVIEW_LIMITS.maxQuestions} items`,
  ),
);
const language = v.picklist(INTERVIEW_LANGUAGES, `interview_language must be one of ${INTERVIEW_LANGUAGES.join(', ')}`);

export const createBody = v.object({
  interview_name: v.pipe(v.string('interview_name is required'), v.minLength(1, 'interview_name is required')),
  custom_question_list: questions,
  interview_language: v.optional(language, 'en'),
  can_change_interview_language: v.optional(v.boolean('can_change_interview_language must be a boolean'), false),
  is_proctoring_required: v.optional(v.boolean('is_proctoring_required must be a boolean'), true),
});

export const updateBody = v.object({
  interview_name: v.optional(v.pipe(v.string(), v.minLength(1, 'interview_name must not be empty'))),
  skills: v.optional(
    v.pipe(
      v.array(v.object({ name: v.string('name is required'), description: v.optional(v.string(), '') })),
      v.maxLength(INTERVIEW_LIMITS.maxSkills, `skills must have at most ${INTERVIEW_LIMITS.maxSkills} items`),
    ),
  ),
  custom_question_list: v.optional(questions),
  interview_language: v.optional(language),
  can_change_interview_language: v.optional(v.boolean()),
  only_coding_round: v.optional(v.boolean()),
  is_coding_round_required: v.optional(v.boolean()),
  selected_coding_language: v.optional(v.string()),
  coding_exercise_details: v.optional(v.string()),
  is_proctoring_required: v.optional(v.boolean()),
});

/** `POST /interview/invite` (OpenAPI): an interview and its candidates, each with a name and an e-mail. */
export const inviteBody = v.object({
  interview_id: v.pipe(v.string(), v.nonEmpty()),
  candidates: v.pipe(
    v.array(v.object({ name: v.pipe(v.string(), v.nonEmpty()), email: v.pipe(v.string(), v.email()) })),
    v.minLength(1),
  ),
  job_application_id: v.optional(v.string()),
  candidate_id: v.optional(v.string()),
  disable_email_notification: v.optional(v.boolean(), false),
});

export function firstIssueMessage(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return 'invalid body';
  const path = v.getDotPath(issue);
  return path ? `${path}: ${issue.message}` : issue.message;
}
