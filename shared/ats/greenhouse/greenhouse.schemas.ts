import * as v from 'valibot';
import { atsIdSchema } from '../ids';

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
        v.nullable(v.array(v.object({ value: v.string(), type: v.nullish(v.string()) }))),
        [],
      ),
    }),
    jobs: v.optional(v.nullable(v.array(v.object({ id, name: v.nullish(v.string()) }))), []),
  }),
});

export const tokenResponseSchema = v.object({
  access_token: v.pipe(v.string(), v.nonEmpty()),
  token_type: v.optional(v.string()),
  expires_in: v.optional(v.number(), 3600),
});

export const noteSchema = v.object({ id, body: v.optional(v.nullable(v.string())) });
export const notesListSchema = v.array(noteSchema);
export const jobStageSchema = v.object({ id, name: v.string() });
export const applicationSchema = v.object({
  id,
  current_stage: v.nullish(v.object({ id, name: v.nullish(v.string()) })),
});

/** `delete_candidate` (webhooks/_candidate_events.md): also fired on merges and bulk deletes. */
export const candidateDeletedSchema = v.object({
  person: v.object({ id, deleted_application_ids: v.optional(v.nullable(v.array(id)), []) }),
});
