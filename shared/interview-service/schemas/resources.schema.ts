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
  parsed_resume_data: v.fallback(v.nullish(parsedResumeDataSchema), undefined),
  date_created: timestampSchema,
  date_modified: timestampSchema,
  status: v.string(),
};

export const jobApplicantListItemSchema = v.object(applicantEntries);

export const jobApplicantDetailSchema = v.object({
  ...applicantEntries,
  // Documented nullable.
  screening_question_answers: v.pipe(
    v.optional(v.nullable(v.array(v.object({ question: v.string(), answer: v.string() }))), []),
    v.transform((answers) => answers ?? []),
  ),
});

/**
 * No response field is marked required anywhere in the service's OpenAPI (facts, Corrections): what the
 * connector reads is validated when present, the rest is tolerated. A list inside a report keeps its valid
 * items and drops the others, so one odd evaluation never refuses the report.
 */
function tolerantList<S extends v.GenericSchema>(item: S) {
  return v.pipe(
    v.optional(v.nullable(v.array(v.unknown())), []),
    v.transform((items): v.InferOutput<S>[] =>
      (items ?? []).flatMap((entry) => {
        const parsed = v.safeParse(item, entry);
        return parsed.success ? [parsed.output] : [];
      }),
    ),
  );
}

/** A value the connector never acts on: kept when it has the documented type, dropped (undefined) otherwise. */
const tolerant = <S extends v.GenericSchema>(schema: S) => v.fallback(v.nullish(schema), undefined);

export const aiEvaluationSchema = v.looseObject({ feedback: tolerant(v.string()), rating: tolerant(v.string()) });

export const proctoringViolationSchema = v.looseObject({
  type: v.string(),
  value: tolerant(v.string()),
  description: tolerant(v.string()),
});

/** Documented with a nullable `timestamp`; the connector never reads the transcript. */
export const transcriptEntrySchema = v.looseObject({
  timestamp: tolerant(v.number()),
  role: tolerant(v.string()),
  content: tolerant(v.string()),
});

export const skillEvaluationSchema = v.looseObject({
  skill: v.string(),
  ai_evaluation: aiEvaluationSchema,
  timestamp: tolerant(v.number()),
});

export const customQuestionEvaluationSchema = v.looseObject({
  question_text: v.string(),
  answer_text: tolerant(v.string()),
  ai_evaluation: aiEvaluationSchema,
});

/** When a resource was made and last changed, and its status: tolerated on every resource, never read. */
const dated = {
  date_created: tolerant(timestampSchema),
  date_modified: tolerant(timestampSchema),
  status: tolerant(v.string()),
};

/**
 * Report fields. Strict: the three ids (they become keys), the scores (a rule decides on them) and the e-mail
 * when present. Everything else is tolerated: null, missing or of an unexpected type, it never refuses a report.
 */
export const reportEntries = {
  report_id: idSchema,
  interview_id: idSchema,
  candidate_id: idSchema,
  session_id: tolerant(v.string()),
  interview_name: tolerant(v.string()),
  job_applicant_id: tolerant(v.string()),
  /** Filled only by the service's own ATS links (facts "Behaviour"). */
  ats_job_application_id: tolerant(v.string()),
  ats_job_id: tolerant(v.string()),
  candidate_name: tolerant(v.string()),
  candidate_email_id: optionalString,
  report_date: tolerant(dateSchema),
  report_url: tolerant(v.string()),
  interview_recording_url: tolerant(v.string()),
  interview_recording_player_url: tolerant(v.string()),
  proctoring_score: optionalNumber,
  ai_match_score: optionalNumber,
  proctoring_violations: tolerantList(proctoringViolationSchema),
  interview_transcript: tolerantList(transcriptEntrySchema),
  technical_skills_evaluation: tolerantList(skillEvaluationSchema),
  soft_skills_evaluation: tolerantList(skillEvaluationSchema),
  coding_skills_evaluation: tolerant(aiEvaluationSchema),
  custom_exercise_evaluation: tolerant(aiEvaluationSchema),
  custom_question_evaluation: tolerantList(customQuestionEvaluationSchema),
  ...dated,
};

export const interviewReportSchema = v.looseObject(reportEntries);

/** `GET /interview/invites` items; the connector reads the candidate id and e-mail (a lookup after a lost invite). */
export const candidateInviteSchema = v.looseObject({
  candidate_id: idSchema,
  interview_id: idSchema,
  interview_name: tolerant(v.string()),
  candidate_name: tolerant(v.string()),
  candidate_email_id: optionalString,
  ...dated,
});

export const webhookSchema = v.looseObject({
  webhook_id: idSchema,
  url: v.string(),
  description: tolerant(v.string()),
  event: v.string(),
  ...dated,
});

/**
 * `GET /interviews` items: the connector reads the id, the name (a lost create is found by it) and the invite URL.
 * The documented item also carries the settings flat (`skills`, `custom_questions` with `time` in seconds,
 * `interview_language` as a display name such as "English"), which are tolerated, not read.
 */
export const interviewSummarySchema = v.looseObject({
  interview_id: idSchema,
  interview_name: v.string(),
  invite_url: optionalString,
  ...dated,
});

/** `POST /interview/invite`: one invitation per candidate, each with its own link (`...?cid=`). */
export const invitationSchema = v.looseObject({
  candidate_id: idSchema,
  candidate_email: optionalString,
  invite_url: v.pipe(v.string(), v.url('invite_url must be a URL')),
});
export const invitationsSchema = v.looseObject({ invitations: v.array(invitationSchema) });

export const createdInterviewSchema = v.object({
  interview_id: idSchema,
  invite_url: v.pipe(v.string(), v.url('invite_url must be a URL')),
});
