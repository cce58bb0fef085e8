import * as v from 'valibot';
import { dateSchema, idSchema, optionalNumber, optionalString, timestampSchema } from './primitives.schema';

/** A period of education or experience: `end_date` is null exactly when `is_present` is true (spec §2.1). */
const PERIOD_MESSAGE = 'end_date must be null exactly when is_present is true';
const isConsistentPeriod = (item: { is_present: boolean; end_date: string | null }): boolean =>
  item.is_present ? item.end_date === null : item.end_date !== null;

export const educationSchema = v.pipe(
  v.object({
    major: optionalString,
    degree: optionalString,
    university_name: optionalString,
    start_date: v.nullish(dateSchema),
    end_date: v.nullable(dateSchema),
    is_present: v.boolean(),
  }),
  v.forward(
    v.check((item) => isConsistentPeriod(item), PERIOD_MESSAGE),
    ['end_date'],
  ),
);

export const experienceSchema = v.pipe(
  v.object({
    role: optionalString,
    company_name: optionalString,
    start_date: v.nullish(dateSchema),
    end_date: v.nullable(dateSchema),
    is_present: v.boolean(),
    tech_stack: v.optional(v.array(v.string()), []),
    /** An HTML list as a string; never rendered by the connector. */
    responsibilities: optionalString,
  }),
  v.forward(
    v.check((item) => isConsistentPeriod(item), PERIOD_MESSAGE),
    ['end_date'],
  ),
);

export const parsedResumeDataSchema = v.object({
  education: v.optional(v.array(educationSchema), []),
  experience: v.optional(v.array(experienceSchema), []),
});

const applicantEntries = {
  job_applicant_id: idSchema,
  job_id: idSchema,
  job_title: optionalString,
  first_name: optionalString,
  last_name: optionalString,
  email_id: optionalString,
  phone_number: optionalString,
  phone_country_iso_code: optionalString,
  resume_url: optionalString,
  linkedin_url: optionalString,
  source_name: optionalString,
  resume_score: optionalNumber,
  parsed_resume_data: v.nullish(parsedResumeDataSchema),
  date_created: timestampSchema,
  date_modified: timestampSchema,
  status: v.string(),
};

export const jobApplicantListItemSchema = v.object(applicantEntries);

export const jobApplicantDetailSchema = v.object({
  ...applicantEntries,
  screening_question_answers: v.optional(v.array(v.object({ question: v.string(), answer: v.string() })), []),
});

export const aiEvaluationSchema = v.object({ feedback: optionalString, rating: optionalString });

export const proctoringViolationSchema = v.object({
  type: v.string(),
  value: optionalString,
  description: optionalString,
});

export const transcriptEntrySchema = v.object({ timestamp: v.number(), role: v.string(), content: v.string() });

export const skillEvaluationSchema = v.object({
  skill: v.string(),
  ai_evaluation: aiEvaluationSchema,
  timestamp: optionalNumber,
});

export const customQuestionEvaluationSchema = v.object({
  question_text: v.string(),
  answer_text: optionalString,
  ai_evaluation: aiEvaluationSchema,
});

/** Report fields; the connector relies on the ids and the e-mail, the rest may be missing on a sparse report. */
export const reportEntries = {
  report_id: idSchema,
  interview_id: idSchema,
  interview_name: optionalString,
  candidate_id: idSchema,
  job_applicant_id: optionalString,
  /** Filled only by the service's own ATS links (facts "Behaviour"). */
  ats_job_application_id: optionalString,
  ats_job_id: optionalString,
  candidate_name: optionalString,
  candidate_email_id: optionalString,
  report_date: v.nullish(dateSchema),
  report_url: optionalString,
  interview_recording_url: optionalString,
  interview_recording_player_url: optionalString,
  proctoring_score: optionalNumber,
  ai_match_score: optionalNumber,
  proctoring_violations: v.optional(v.nullable(v.array(proctoringViolationSchema)), []),
  interview_transcript: v.optional(v.nullable(v.array(transcriptEntrySchema)), []),
  technical_skills_evaluation: v.optional(v.nullable(v.array(skillEvaluationSchema)), []),
  soft_skills_evaluation: v.optional(v.nullable(v.array(skillEvaluationSchema)), []),
  coding_skills_evaluation: v.nullish(aiEvaluationSchema),
  custom_exercise_evaluation: v.nullish(aiEvaluationSchema),
  custom_question_evaluation: v.optional(v.nullable(v.array(customQuestionEvaluationSchema)), []),
  date_created: v.nullish(timestampSchema),
  date_modified: v.nullish(timestampSchema),
  status: optionalString,
};

export const interviewReportSchema = v.object({
  ...reportEntries,
  candidate_email_id: v.pipe(v.string(), v.nonEmpty('a report must name the candidate e-mail')),
});

export const candidateInviteSchema = v.object({
  candidate_id: idSchema,
  interview_id: idSchema,
  interview_name: optionalString,
  candidate_name: optionalString,
  candidate_email_id: optionalString,
  date_created: timestampSchema,
  date_modified: timestampSchema,
  status: v.string(),
});

export const webhookSchema = v.object({
  webhook_id: idSchema,
  url: v.string(),
  description: optionalString,
  event: v.string(),
  date_created: timestampSchema,
  date_modified: timestampSchema,
  status: v.string(),
});

/** `GET /interview`: the spec does not show the shape; these are the fields the connector reads. */
export const interviewSummarySchema = v.object({
  interview_id: idSchema,
  interview_name: v.string(),
  invite_url: optionalString,
  date_created: v.nullish(timestampSchema),
  date_modified: v.nullish(timestampSchema),
  status: optionalString,
});

export const createdInterviewSchema = v.object({
  interview_id: idSchema,
  invite_url: v.pipe(v.string(), v.url('invite_url must be a URL')),
});
