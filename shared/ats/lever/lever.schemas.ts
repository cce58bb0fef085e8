import * as v from 'valibot';
import { atsIdSchema } from '../ids';
import { lenientArray } from '../lists';

/** Lever webhook (help.lever.co "Configuring webhooks"): the signature sits in the body, over token + triggeredAt. */
export const leverSignedFieldsSchema = v.object({
  /** Not signed: it only chooses which webhook's token verifies the delivery (one webhook per event type). */
  event: v.pipe(v.string(), v.nonEmpty()),
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

/**
 * An opportunity's `archived`: null while it is in the pipeline, else `{archivedAt, reason}`, `reason` an archive
 * reason id, hired or not (Lever's opportunity description in the openSDKs mirror, ats-routes.json). Only the
 * reason is read.
 */
export const archivedSchema = v.nullish(v.object({ reason: v.nullish(v.pipe(v.string(), v.nonEmpty())) }));

/** `GET /v1/opportunities/{id}?expand=applications`: what the API says, which the connector acts on. */
export const opportunitySchema = v.object({
  data: v.object({
    id: v.string(),
    name: v.nullish(v.string()),
    emails: v.optional(v.array(v.string()), []),
    contact: v.nullish(v.string()),
    stage: v.union([v.string(), v.object({ id: v.string(), text: v.optional(v.string()) })]),
    archived: archivedSchema,
    applications: v.optional(
      v.array(v.union([v.string(), v.object({ id: v.string(), posting: v.nullish(v.string()) })])),
      [],
    ),
  }),
});

/** `GET /v1/opportunities?contact_id=`: only whether any is left matters. */
export const opportunityListSchema = v.object({ data: v.array(v.unknown()) });
/** An item of a `GET /v1/opportunities?stage_id=` page (read by shared/ats/paging.ts), read for its ids. */
export const listedOpportunitySchema = v.object({
  id: v.string(),
  contact: v.nullish(v.string()),
  archived: v.nullish(v.unknown()),
});

export const stagesSchema = v.object({ data: lenientArray(v.object({ id: v.string(), text: v.string() })) });
export const noteCreatedSchema = v.object({
  data: v.object({ noteId: v.optional(v.string()), id: v.optional(v.string()) }),
});
/**
 * A note of `GET /v1/opportunities/{id}/notes`, paged by `offset=<next>` (NangoHQ's Lever notes model): `{id, text,
 * fields: [{type, text, value}], …}`; what was written as the note's `value` is read back in `fields[].value`.
 */
export const noteSchema = v.object({
  id: v.string(),
  text: v.nullish(v.string()),
  fields: v.optional(
    v.array(v.object({ type: v.nullish(v.string()), text: v.nullish(v.string()), value: v.nullish(v.unknown()) })),
    [],
  ),
});

/**
 * `candidateArchiveChange` (help.lever.co 20087284427677, "archived or unarchived"): `toArchived` is where the
 * opportunity went, null (or absent) when it was unarchived. Only the ids and that are read; the rest ([impl]
 * `fromArchived`) is left unread, and the worker re-reads the opportunity anyway (the body is not signed).
 */
export const archiveChangeDataSchema = v.object({
  opportunityId: atsIdSchema,
  toArchived: archivedSchema,
});

/** `candidateHired` (same article, "marked as Hired"): the opportunity's id is all that is read. */
export const candidateHiredDataSchema = v.object({ opportunityId: atsIdSchema });

/** `candidateDeleted` (help.lever.co, Configuring webhooks); ids only, exact keys partly unconfirmed. */
export const candidateDeletedDataSchema = v.object({
  candidateId: v.nullish(atsIdSchema),
  contactId: v.nullish(atsIdSchema),
  opportunityId: v.nullish(atsIdSchema),
});

/** `GET /v1/users/{id}`: whether the user writes are made as exists and is active. */
export const userSchema = v.object({
  data: v.object({ id: v.string(), accessRole: v.nullish(v.string()), deactivatedAt: v.nullish(v.unknown()) }),
});

/** A webhook of `GET /v1/webhooks` (help.lever.co 4402565460237), read one by one from its pages. */
export const webhookSchema = v.object({
  id: v.string(),
  event: v.string(),
  url: v.string(),
  enabled: v.nullish(v.boolean()),
});
/** `POST /v1/webhooks` → 201 `{data: {id, configuration: {signatureToken}}}` (NangoHQ create-webhook). */
export const webhookCreatedSchema = v.object({
  data: v.object({ id: v.string(), configuration: v.object({ signatureToken: v.pipe(v.string(), v.minLength(16)) }) }),
});
