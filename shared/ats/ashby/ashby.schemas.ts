import * as v from 'valibot';
import { atsIdSchema } from '../ids';
import { lenientArray } from '../lists';

/** Ashby webhooks: `{action, data}` (developers.ashbyhq.com, webhook payloads OpenAPI). */
export const ashbyEnvelopeSchema = v.object({
  action: v.pipe(v.string(), v.nonEmpty()),
  data: v.optional(v.unknown()),
  webhookActionId: v.optional(v.string()),
});

/** `candidateStageChange` carries the whole application; `title` of the stage is unconfirmed, so optional. */
export const candidateStageChangeSchema = v.object({
  application: v.object({
    id: atsIdSchema,
    status: v.optional(v.string()),
    updatedAt: v.optional(v.string()),
    candidate: v.object({
      id: atsIdSchema,
      name: v.nullish(v.string()),
      primaryEmailAddress: v.nullish(v.object({ value: v.string() })),
    }),
    currentInterviewStage: v.object({
      id: atsIdSchema,
      title: v.nullish(v.string()),
      interviewPlanId: v.nullish(v.string()),
    }),
    job: v.object({ id: atsIdSchema, title: v.nullish(v.string()) }),
  }),
});

/** Every RPC answers `{success, results}`; failures come as HTTP 200 with `success: false` and `errors`. */
export const rpcEnvelopeSchema = v.object({
  success: v.boolean(),
  results: v.optional(v.unknown()),
  errors: v.optional(v.unknown()),
  errorInfo: v.optional(v.unknown()),
});

export const noteResultSchema = v.object({ results: v.object({ id: v.string() }) });
/** An application's place in the process (Ashby application schema: `status` enum Active, Hired, Archived, Lead). */
export const applicationStatusSchema = v.picklist(['Active', 'Hired', 'Archived', 'Lead']);
/**
 * While archived, why (`archiveReason{id, text, reasonType}`; `reasonType` RejectedByCandidate, RejectedByOrg or
 * Other, Ashby's archive reason OpenAPI): only the text and the type are read.
 */
export const archiveReasonSchema = v.object({ text: v.nullish(v.string()), reasonType: v.nullish(v.string()) });
/**
 * `application.info`: where the application stands (its status, archive reason and current stage). `status` is
 * optional here only so that a move, which read no status before, refuses nothing it used to accept; the standing
 * read requires it (ashby.lifecycle.ts).
 */
export const applicationInfoSchema = v.object({
  results: v.object({
    id: v.string(),
    status: v.optional(applicationStatusSchema),
    archiveReason: v.nullish(archiveReasonSchema),
    currentInterviewStage: v.object({
      id: v.string(),
      title: v.nullish(v.string()),
      interviewPlanId: v.nullish(v.string()),
    }),
  }),
});
export type AshbyApplicationInfo = v.InferOutput<typeof applicationInfoSchema>['results'];
/**
 * `candidateStageChange`, `applicationUpdate` and `candidateHire` all carry the application (webhook payloads OpenAPI):
 * read for its id and status only, to tell an exit or its undo from a stage entry.
 */
export const applicationPlaceSchema = v.object({
  application: v.object({ id: atsIdSchema, status: v.optional(v.string()), updatedAt: v.optional(v.string()) }),
});
export const interviewStagesSchema = v.object({
  results: lenientArray(v.object({ id: v.string(), title: v.string() })),
});

/** `candidateDelete` (Ashby's webhook payloads OpenAPI): `data.candidate.id`, the deleted candidate. */
export const candidateDeleteSchema = v.object({ candidate: v.object({ id: atsIdSchema }) });
/** `candidateMerge`: `data.deletedCandidate.id` merged into `data.mergedCandidate.id`. */
export const candidateMergeSchema = v.object({
  deletedCandidate: v.object({ id: atsIdSchema }),
  mergedCandidate: v.nullish(v.object({ id: v.nullish(v.string()) })),
});

/**
 * `job.list` (cursor pages, as shared/ats/paging.ts reads them; the access probe reads one page): a job's id, title,
 * and the interview plan its stages belong to.
 */
export const jobListSchema = v.object({
  results: v.array(v.unknown()),
  moreDataAvailable: v.optional(v.boolean(), false),
  nextCursor: v.nullish(v.string()),
});
export const jobSchema = v.object({
  id: v.string(),
  title: v.nullish(v.string()),
  defaultInterviewPlanId: v.nullish(v.string()),
  interviewPlanIds: v.optional(v.array(v.string()), []),
});
export const jobInfoSchema = v.object({ results: jobSchema });

/** `webhook.create` and `webhook.info` answer the webhook: its id, type, URL and whether it is enabled. */
export const webhookInfoSchema = v.object({
  results: v.object({
    id: v.string(),
    webhookType: v.string(),
    requestUrl: v.string(),
    enabled: v.nullish(v.boolean()),
  }),
});

/** `candidateTag.list` / `candidateTag.create`: a tag's id and title. */
export const tagSchema = v.object({ id: v.string(), title: v.string() });
export const tagCreatedSchema = v.object({ results: tagSchema });
/** `candidate.info`, read for the candidate's tags. */
export const candidateTagsSchema = v.object({
  results: v.object({ tags: v.optional(lenientArray(tagSchema), []) }),
});
