import * as v from 'valibot';
import {
  CODING_LANGUAGES,
  DOCUMENTED_LANGUAGES,
  INTERVIEW_DEFAULTS,
  INTERVIEW_LIMITS,
  QUESTION_TYPES,
} from '../constants';

const nonEmptyText = () => v.pipe(v.string('must be a string'), v.trim(), v.nonEmpty('must not be empty'));

export const customQuestionSchema = v.object({
  question: nonEmptyText(),
  time: v.pipe(
    v.number(),
    v.integer('must be a whole number of minutes'),
    v.minValue(INTERVIEW_LIMITS.minQuestionMinutes, `must be at least ${INTERVIEW_LIMITS.minQuestionMinutes} minute`),
    v.maxValue(INTERVIEW_LIMITS.maxQuestionMinutes, `must be at most ${INTERVIEW_LIMITS.maxQuestionMinutes} minutes`),
  ),
  type: v.picklist(QUESTION_TYPES, `must be one of ${QUESTION_TYPES.join(', ')}`),
});

export const customQuestionListSchema = v.pipe(
  v.array(customQuestionSchema),
  v.minLength(1, 'needs at least 1 question'),
  v.maxLength(INTERVIEW_LIMITS.maxQuestions, `allows at most ${INTERVIEW_LIMITS.maxQuestions} questions`),
);

export const skillSchema = v.object({ name: nonEmptyText(), description: v.optional(v.string(), '') });

export const skillListSchema = v.pipe(
  v.array(skillSchema),
  v.maxLength(INTERVIEW_LIMITS.maxSkills, `allows at most ${INTERVIEW_LIMITS.maxSkills} skills`),
);

/**
 * The 36 codes the service documents are accepted; a connection may opt into a code beyond them
 * (`interviewService.extraLanguages`) with a warning. Anything else is refused before a request is sent.
 */
export function interviewLanguageSchema(extraLanguages: readonly string[] = []) {
  const allowed: readonly string[] = [...DOCUMENTED_LANGUAGES, ...extraLanguages];
  const optedIn = extraLanguages.length ? ` or an opted-in code (${extraLanguages.join(', ')})` : '';
  return v.picklist(
    allowed,
    `must be one of the service's 36 documented codes (${DOCUMENTED_LANGUAGES.join(', ')})${optedIn}`,
  );
}

/** POST /custom/interview (spec §4.1); the service's defaults are made explicit so a request says what it means. */
export function createInterviewInputSchema(extraLanguages: readonly string[] = []) {
  return v.strictObject(
    {
      interview_name: nonEmptyText(),
      custom_question_list: customQuestionListSchema,
      interview_language: v.optional(interviewLanguageSchema(extraLanguages), INTERVIEW_DEFAULTS.interview_language),
      can_change_interview_language: v.optional(v.boolean(), INTERVIEW_DEFAULTS.can_change_interview_language),
      is_proctoring_required: v.optional(v.boolean(), INTERVIEW_DEFAULTS.is_proctoring_required),
    },
    (issue) =>
      issue.expected === 'never'
        ? 'not a field of create (skills and coding settings are set by update)'
        : 'expected an object',
  );
}

/** PUT /interview/{id} (spec §4.2): every field optional, absent means unchanged, so no defaults here. */
export function updateInterviewInputSchema(extraLanguages: readonly string[] = []) {
  return v.pipe(
    v.strictObject({
      interview_name: v.optional(nonEmptyText()),
      skills: v.optional(skillListSchema),
      custom_question_list: v.optional(customQuestionListSchema),
      interview_language: v.optional(interviewLanguageSchema(extraLanguages)),
      can_change_interview_language: v.optional(v.boolean()),
      only_coding_round: v.optional(v.boolean()),
      is_coding_round_required: v.optional(v.boolean()),
      selected_coding_language: v.optional(
        v.picklist(CODING_LANGUAGES, `must be one of ${CODING_LANGUAGES.join(', ')}`),
      ),
      coding_exercise_details: v.optional(v.string()),
      is_proctoring_required: v.optional(v.boolean()),
    }),
    v.check((input) => Object.values(input).some((value) => value !== undefined), 'an update needs at least one field'),
  );
}

export const listQuerySchema = v.object({
  page: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, 'must be 1 or more'))),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, 'must be 1 or more'))),
  keyword: v.optional(v.string()),
  interview_id: v.optional(v.string()),
  candidate_id: v.optional(v.string()),
});
