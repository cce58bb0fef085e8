import * as v from 'valibot';
import { atsIdSchema } from '../ids';

/** Workable webhook envelope (workable.readme.io/reference/webhooks); `data` is the candidate as of delivery. */
export const workableEnvelopeSchema = v.object({
  id: v.nullish(v.string()),
  firing_id: v.nullish(v.string()),
  event_type: v.pipe(v.string(), v.nonEmpty()),
  fired_at: v.nullish(v.string()),
  resource_type: v.nullish(v.string()),
  data: v.optional(v.unknown()),
});

/** A stage as Workable names it in webhooks and candidate reads: its display name, spaces and all. */
const stageName = v.pipe(v.string(), v.nonEmpty('the stage name is empty'), v.maxLength(200));

/**
 * `candidate_moved` data (reference: candidate-events): `stage` is "the name of the current stage" ("Applied"),
 * not its slug.
 */
export const movedCandidateSchema = v.object({
  id: atsIdSchema,
  name: v.nullish(v.string()),
  firstname: v.nullish(v.string()),
  lastname: v.nullish(v.string()),
  email: v.nullish(v.string()),
  job: v.object({ shortcode: atsIdSchema, title: v.nullish(v.string()) }),
  stage: stageName,
  disqualified: v.optional(v.nullable(v.boolean()), false),
  disqualified_at: v.nullish(v.string()),
  // Documented on the candidate details the payload is "similar to" (reference: job-candidates-show), not in the
  // event's own field list: read where it comes, otherwise the worker's read finds the hire.
  hired_at: v.nullish(v.string()),
  updated_at: v.nullish(v.string()),
});

/**
 * `GET /candidates/{id}` (reference: job-candidates-show), as a move and the standing read it: the stage by name,
 * and whether the candidate left the process, disqualified (with the recruiter's reason) or hired (`hired_at`).
 */
export const candidateSchema = v.object({
  candidate: v.object({
    id: v.string(),
    stage: stageName,
    disqualified: v.optional(v.nullable(v.boolean()), false),
    disqualification_reason: v.nullish(v.string()),
    hired_at: v.nullish(v.string()),
    tags: v.optional(v.array(v.string()), []),
  }),
});

/**
 * An item of `GET /candidates/{id}/activities` (reference: candidate-activities; its pages read by
 * shared/ats/paging.ts): comments are items with action "comment".
 */
export const activitySchema = v.object({
  id: v.union([v.string(), v.number()]),
  action: v.nullish(v.string()),
  body: v.nullish(v.string()),
});

/** `GET /jobs/{shortcode}/stages`: the map from a stage's name to the slug a move needs. */
export const jobStagesSchema = v.object({ stages: v.array(v.unknown()) });
/** `kind` ("hired" for the job's hired stage) comes from a mirror of the reference; read where it comes. */
export const jobStageSchema = v.object({ slug: v.string(), name: v.string(), kind: v.nullish(v.string()) });

/** `GET /candidates/{id}` as the dry run reads it: the job, the stage's name, whether there is an e-mail address. */
export const candidateViewSchema = v.object({
  candidate: v.object({
    id: v.string(),
    stage: stageName,
    email: v.nullish(v.string()),
    job: v.object({ shortcode: atsIdSchema, title: v.nullish(v.string()) }),
  }),
});

/** `GET /jobs` (reference: jobs): a job's shortcode and title; the access probe reads one page. */
export const jobsSchema = v.object({
  jobs: v.array(v.unknown()),
  paging: v.nullish(v.object({ next: v.nullish(v.string()) })),
});
export const jobSchema = v.object({ shortcode: v.string(), title: v.nullish(v.string()) });

/** An item of `GET /members` (reference: members): whether the member writes are made as exists and is active. */
export const memberSchema = v.object({ id: v.string(), active: v.nullish(v.boolean()) });

/** `GET /subscriptions` (reference: webhook-subscriptions): the account's webhook subscriptions. */
export const subscriptionsSchema = v.object({ subscriptions: v.array(v.unknown()) });
export const subscriptionSchema = v.object({
  id: v.union([v.string(), v.number()]),
  target: v.string(),
  event: v.string(),
  status: v.nullish(v.string()),
});
export const subscriptionCreatedSchema = v.object({ id: v.union([v.string(), v.number()]) });

/** An item of `GET /candidates?shortcode=&stage=` (reference: job-candidates-index), listed by the stage's slug. */
export const listedCandidateSchema = v.object({
  id: atsIdSchema,
  name: v.nullish(v.string()),
  email: v.nullish(v.string()),
  disqualified: v.optional(v.boolean(), false),
});
