import * as v from 'valibot';
import { atsIdSchema } from '../ids';
import { lenientArray } from '../lists';

/** Greenhouse webhooks: `{action, payload}` (developers.greenhouse.io, webhooks/_introduction.md). */
export const greenhouseEnvelopeSchema = v.object({
  action: v.pipe(v.string(), v.nonEmpty()),
  payload: v.optional(v.unknown()),
});

const id = v.union([v.pipe(v.number(), v.integer(), v.minValue(0)), atsIdSchema]);

/** `candidate_stage_change` (webhooks/_candidate_events.md); no previous stage is sent. */
export const candidateStageChangeSchema = v.object({
  application: v.object({
    id,
    status: v.optional(v.string()),
    prospect: v.optional(v.boolean(), false),
    current_stage: v.nullish(v.object({ id: v.nullish(id), name: v.nullish(v.string()) })),
    candidate: v.object({
      id,
      first_name: v.nullish(v.string()),
      last_name: v.nullish(v.string()),
      email_addresses: v.optional(
        v.nullable(lenientArray(v.object({ value: v.string(), type: v.nullish(v.string()) }))),
        [],
      ),
    }),
    jobs: v.optional(v.nullable(lenientArray(v.object({ id, name: v.nullish(v.string()) }))), []),
  }),
});

/**
 * `POST https://auth.greenhouse.io/token`: `expires_at` (ISO 8601) is what Greenhouse sends; `expires_in` is read
 * too, for an OAuth server that follows RFC 6749 instead. Neither present: an hour, as Greenhouse documents.
 */
export const tokenResponseSchema = v.object({
  access_token: v.pipe(v.string(), v.nonEmpty()),
  token_type: v.optional(v.string()),
  expires_at: v.optional(v.string()),
  expires_in: v.optional(v.number()),
});

/** `GET /v3/notes` items (Airbyte's v3 example): the body is all the connector reads. */
export const noteSchema = v.object({ id, body: v.nullish(v.string()) });
/** `POST /v3/notes` answers the note; only its id is of use, and a 2xx without one is still a note written. */
export const noteCreatedSchema = v.object({ id });
/** `GET /v3/job_interview_stages?job_ids=` items (`/reference/get_v3-application-stages`). */
export const jobInterviewStageSchema = v.object({ id, job_id: v.nullish(id), name: v.string() });
/**
 * A rejection reason as Greenhouse's webhooks (webhooks/_candidate_events.md, "Candidate/Prospect rejected") and
 * Harvest v1 records show it: `{id, name, type: {id, name}}`, the type "They rejected us" for a withdrawal
 * (harvest/_rejection_reasons.md). Only the names are read.
 */
const rejectionReasonSchema = v.object({
  name: v.nullish(v.string()),
  type: v.nullish(v.object({ name: v.nullish(v.string()) })),
});

/**
 * `GET /v3/applications?ids=` items: flat in v3. `job_interview_stage_id` is the stage a move is made from
 * (`/reference/post_v3-applications-id-move`); `status` is `in_process` while the application is open, `rejected`
 * or `hired` once it left (the `status` filter's values, ats-facts Corrections 2026-11b). Whether a v3 record carries
 * `rejection_reason` is not documented: read where it is there, and a shape other than the webhooks' is no reason.
 */
export const applicationSchema = v.object({
  id,
  candidate_id: v.nullish(id),
  job_id: v.nullish(id),
  job_interview_stage_id: v.nullish(id),
  stage_name: v.nullish(v.string()),
  status: v.nullish(v.string()),
  rejection_reason: v.fallback(v.nullish(rejectionReasonSchema), undefined),
});

/**
 * The webhooks of an application leaving the process or coming back (`reject_candidate`, `unreject_candidate`,
 * `hire_candidate`, `unhire_candidate`; webhooks/_candidate_events.md): only the application's id is read, since
 * the worker reads where the application stands before it acts.
 */
export const applicationChangeSchema = v.object({ application: v.object({ id }) });

/** `GET /v3/jobs` items: the id and the name a recruiter knows the job by. */
export const jobSchema = v.object({ id, name: v.nullish(v.string()), status: v.nullish(v.string()) });
/** `GET /v3/candidates?ids=` items: the name and the first e-mail address an invitation would go to. */
export const candidateSchema = v.object({
  id,
  first_name: v.nullish(v.string()),
  last_name: v.nullish(v.string()),
  email_addresses: v.optional(v.array(v.unknown()), []),
});
export const emailAddressSchema = v.object({ value: v.string() });

/** `delete_candidate` (webhooks/_candidate_events.md): also fired on merges and bulk deletes. */
export const candidateDeletedSchema = v.object({
  person: v.object({ id, deleted_application_ids: v.optional(v.nullable(lenientArray(id)), []) }),
});

/**
 * `merge_candidate`: sent instead of `delete_candidate` when both are configured; `person` is the record merged
 * away, `new_candidate_id` the one that stays (webhooks/_candidate_events.md, "Candidate merged").
 */
export const candidateMergedSchema = v.object({
  person: v.object({ id, new_candidate_id: v.nullish(id) }),
});

/** `candidate_anonymized {candidate_id, anonymized_fields}` (webhooks/_candidate_events.md). */
export const candidateAnonymizedSchema = v.object({
  candidate_id: id,
  anonymized_fields: v.optional(v.array(v.string()), []),
});

/** A candidate tag (Harvest `_tags.md`): its id and name. */
export const tagSchema = v.object({ id, name: v.string() });
/** `GET /v3/application_stages` rows: a stage an application entered; the current one has no `exited_at`. */
export const applicationStageSchema = v.object({
  id,
  application_id: id,
  job_interview_stage_id: id,
  exited_at: v.nullish(v.string()),
});
/** `GET /v3/applied_candidate_tags` rows: one tag on one candidate, removed by the row's own `id`. */
export const appliedTagSchema = v.object({ id, candidate_id: id, candidate_tag_id: id });
