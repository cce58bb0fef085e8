import * as v from 'valibot';
import { atsIdSchema } from '../ids';

/** Lever webhook (help.lever.co "Configuring webhooks"): the signature sits in the body, over token + triggeredAt. */
export const leverSignedFieldsSchema = v.object({
  token: v.pipe(v.string(), v.nonEmpty()),
  // A JSON integer (epoch ms) only: a digit string would let "0" + ms re-sign the same bytes under a new key.
  triggeredAt: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  signature: v.pipe(v.string(), v.nonEmpty()),
});

export const leverWebhookSchema = v.object({
  event: v.pipe(v.string(), v.nonEmpty()),
  token: v.string(),
  data: v.optional(v.unknown()),
});

/** `candidateStageChange`: ids only. */
export const stageChangeDataSchema = v.object({
  opportunityId: atsIdSchema,
  candidateId: v.optional(atsIdSchema),
  contactId: v.optional(atsIdSchema),
  fromStageId: v.nullish(v.string()),
  toStageId: atsIdSchema,
});

/** `GET /v1/opportunities/{id}?expand=applications`: what the API says, which the connector acts on. */
export const opportunitySchema = v.object({
  data: v.object({
    id: v.string(),
    name: v.nullish(v.string()),
    emails: v.optional(v.array(v.string()), []),
    contact: v.nullish(v.string()),
    stage: v.union([v.string(), v.object({ id: v.string(), text: v.optional(v.string()) })]),
    archived: v.nullish(v.unknown()),
    applications: v.optional(
      v.array(v.union([v.string(), v.object({ id: v.string(), posting: v.nullish(v.string()) })])),
      [],
    ),
  }),
});

/** `GET /v1/opportunities?contact_id=`: only whether any is left matters. */
export const opportunityListSchema = v.object({ data: v.array(v.unknown()) });

export const stagesSchema = v.object({ data: v.array(v.object({ id: v.string(), text: v.string() })) });
export const noteCreatedSchema = v.object({
  data: v.object({ noteId: v.optional(v.string()), id: v.optional(v.string()) }),
});
export const notesSchema = v.object({ data: v.array(v.object({ id: v.string(), value: v.nullish(v.string()) })) });

/** `candidateDeleted` (help.lever.co, Configuring webhooks); ids only, exact keys partly unconfirmed. */
export const candidateDeletedDataSchema = v.object({
  candidateId: v.optional(atsIdSchema),
  contactId: v.optional(atsIdSchema),
  opportunityId: v.optional(atsIdSchema),
});
