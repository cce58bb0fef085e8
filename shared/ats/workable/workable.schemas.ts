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

export const movedCandidateSchema = v.object({
  id: atsIdSchema,
  name: v.nullish(v.string()),
  firstname: v.nullish(v.string()),
  lastname: v.nullish(v.string()),
  email: v.nullish(v.string()),
  job: v.object({ shortcode: atsIdSchema, title: v.nullish(v.string()) }),
  /** The stage slug ("ai-interview"). */
  stage: atsIdSchema,
  disqualified: v.optional(v.boolean(), false),
  updated_at: v.nullish(v.string()),
});

export const commentCreatedSchema = v.object({
  id: v.optional(v.string()),
  comment: v.optional(v.object({ id: v.string() })),
});
export const commentsSchema = v.object({
  comments: v.array(v.object({ id: v.string(), body: v.nullish(v.string()) })),
});
export const candidateSchema = v.object({ candidate: v.object({ id: v.string(), stage: v.string() }) });
export const jobStagesSchema = v.object({ stages: v.array(v.object({ slug: v.string(), name: v.string() })) });
