import * as v from 'valibot';
import { atsIdSchema } from '../ids';
import { validItems } from '../lists';
import { KOMBO_COVERAGE_STATUSES } from './kombo.actions';

/**
 * Kombo's unified ATS API as the connector reads it (kombohq/typescript-sdk @1dc00a9, src/models/getats*.ts,
 * getintegrationsintegrationidpositiveresponse.ts, datachangedwebhookpayload.ts): the fields read are checked, every
 * other field is accepted as it comes. Timestamps stay ISO text (`YYYY-MM-DDTHH:mm:ss.sssZ`).
 */
const id = atsIdSchema;
const text = v.pipe(v.string(), v.maxLength(2000));
/** Read if it is there and of its type; anything else is as if absent. */
const tolerant = <S extends v.GenericSchema>(schema: S) => v.fallback(v.nullish(schema), undefined);
const timestamp = tolerant(v.pipe(v.string(), v.maxLength(64)));
/** A list of which only the items `schema` reads are kept; absent, null or not a list reads as empty. */
const lenientList = <T>(schema: v.GenericSchema<unknown, T>) =>
  v.optional(
    v.pipe(
      v.unknown(),
      v.transform((raw) => validItems(Array.isArray(raw) ? raw : [], schema)),
    ),
    [],
  );

export const KOMBO_OUTCOMES = ['PENDING', 'HIRED', 'DECLINED'] as const;
export type KomboOutcome = (typeof KOMBO_OUTCOMES)[number];

/** A stage of a job (`stages[]`) and an application's `current_stage`: `index` is its place in the job's order. */
export const komboStageSchema = v.looseObject({
  id,
  remote_id: tolerant(text),
  name: v.nullable(text),
  status: tolerant(v.picklist(['ACTIVE', 'INACTIVE'])),
  index: tolerant(v.number()),
});
export type KomboStage = v.InferOutput<typeof komboStageSchema>;

/** `email_addresses[]`: `{email_address, type}`, both nullable in the SDK; an entry without an address is skipped. */
const emailAddressesSchema = lenientList(
  v.looseObject({ email_address: v.pipe(v.string(), v.trim(), v.email()), type: tolerant(text) }),
);
const tagsSchema = lenientList(v.looseObject({ id, name: v.nullable(text) }));

/**
 * An application of `GET /ats/applications`. `outcome` DECLINED covers rejected and withdrawn alike; `changed_at`
 * moves only when the application's own fields change, while `updated_after` also matches a change of its candidate
 * or current stage (the SDK's description of both). `remote_deleted_at` set: gone from the ATS.
 */
export const komboApplicationSchema = v.looseObject({
  id,
  remote_id: tolerant(text),
  outcome: v.fallback(v.nullable(v.picklist(KOMBO_OUTCOMES)), null),
  rejection_reason_name: tolerant(text),
  rejected_at: timestamp,
  current_stage_id: v.nullable(id),
  job_id: v.nullable(id),
  candidate_id: v.nullable(id),
  changed_at: timestamp,
  remote_updated_at: timestamp,
  remote_deleted_at: timestamp,
  current_stage: tolerant(komboStageSchema),
  candidate: tolerant(
    v.looseObject({
      id,
      first_name: tolerant(text),
      last_name: tolerant(text),
      email_addresses: emailAddressesSchema,
      tags: tagsSchema,
    }),
  ),
});
export type KomboApplication = v.InferOutput<typeof komboApplicationSchema>;

/** A candidate of `GET /ats/candidates`: names, e-mails, tags, and their applications' ids and stages. */
export const komboCandidateSchema = v.looseObject({
  id,
  remote_id: tolerant(text),
  first_name: tolerant(text),
  last_name: tolerant(text),
  email_addresses: emailAddressesSchema,
  tags: tagsSchema,
  remote_deleted_at: timestamp,
  applications: lenientList(
    v.looseObject({
      id,
      outcome: v.fallback(v.nullable(v.picklist(KOMBO_OUTCOMES)), null),
      current_stage: tolerant(komboStageSchema),
      job: tolerant(v.looseObject({ id, name: v.nullable(text) })),
    }),
  ),
});
export type KomboCandidate = v.InferOutput<typeof komboCandidateSchema>;

/** A job of `GET /ats/jobs` with its `stages` (the move targets; a stage that does not read is left out). */
export const komboJobSchema = v.looseObject({
  id,
  remote_id: tolerant(text),
  name: v.nullable(text),
  status: tolerant(text),
  remote_deleted_at: timestamp,
  stages: lenientList(komboStageSchema),
});
export type KomboJob = v.InferOutput<typeof komboJobSchema>;

/** An attachment of `GET /ats/applications/{id}/attachments`: found again by `file_name`. */
export const komboAttachmentSchema = v.looseObject({
  id,
  type: tolerant(text),
  file_name: text,
  content_type: tolerant(text),
  data_url: tolerant(text),
});
export type KomboAttachment = v.InferOutput<typeof komboAttachmentSchema>;

/** One write action of an integration: whether the tool supports it, and whether it is enabled for this one. */
export const komboWriteActionSchema = v.looseObject({
  id: text,
  is_available: v.boolean(),
  coverage_status: v.fallback(v.picklist(KOMBO_COVERAGE_STATUSES), 'UNKNOWN'),
});
export type KomboWriteActionState = v.InferOutput<typeof komboWriteActionSchema>;

/** `GET /integrations/{integration_id}`: its tool, its health and its write actions. */
export const komboIntegrationSchema = v.looseObject({
  status: v.literal('success'),
  data: v.looseObject({
    id: text,
    tool: v.looseObject({ id: text, label: tolerant(text) }),
    category: tolerant(text),
    status: v.fallback(v.picklist(['ACTIVE', 'INVALID', 'INACTIVE']), 'INVALID'),
    setup_status: tolerant(text),
    write_actions: lenientList(komboWriteActionSchema),
  }),
});
export type KomboIntegration = v.InferOutput<typeof komboIntegrationSchema>['data'];

/** A list page `{status: 'success', data: {next, results}}`: its items are read one by one (`readKomboPage`). */
export const komboPageSchema = v.looseObject({
  status: v.literal('success'),
  data: v.looseObject({ next: v.fallback(v.nullable(v.string()), null), results: v.array(v.unknown()) }),
});

/** A page's items that `schema` reads, how many did not (one bad item never refuses its page), and the next cursor. */
export function readKomboPage<T>(
  body: unknown,
  schema: v.GenericSchema<unknown, T>,
): { items: T[]; unreadable: number; next: string | undefined } | undefined {
  const page = v.safeParse(komboPageSchema, body);
  if (!page.success) return undefined;
  const { results, next } = page.output.data;
  const items = validItems(results, schema);
  return { items, unreadable: results.length - items.length, next: next ?? undefined };
}

/** A write's answer `{status: 'success', data: {}, warnings: [{message}]}`: the warnings are logged. */
export const komboWriteAnswerSchema = v.looseObject({
  status: v.literal('success'),
  warnings: v.fallback(v.array(v.looseObject({ message: tolerant(text) })), []),
});

/** Kombo's error `{status: 'error', error: {code, title, message, log_url}}`: branch on `code`. */
export const komboApiErrorSchema = v.looseObject({
  status: v.literal('error'),
  error: v.looseObject({ code: v.fallback(v.nullable(v.string()), null), message: tolerant(text) }),
});

/**
 * The `data-changed` webhook: models named, no record ids (re-read with `updated_after`). Signed in
 * `X-Kombo-Signature`; the scheme (base64url HMAC-SHA256 of the body) is from one implementation, unconfirmed.
 */
export const komboDataChangedSchema = v.looseObject({
  id: text,
  type: v.literal('data-changed'),
  data: v.looseObject({
    integration_id: text,
    integration_tool: text,
    integration_category: tolerant(text),
    changed_models: v.pipe(
      v.array(v.unknown()),
      v.transform((items) => validItems(items, v.looseObject({ name: text })).map((model) => model.name)),
    ),
  }),
});
export type KomboDataChanged = v.InferOutput<typeof komboDataChangedSchema>;

/**
 * `integration-state-changed` (ats-routes.json `ats.kombo.webhooks`): the integration's state, `ACTIVE`, `INVALID`
 * (its credentials broken: the customer relinks it) or `INACTIVE`, kept as Kombo spells it.
 */
export const komboIntegrationStateSchema = v.looseObject({
  id: text,
  type: v.literal('integration-state-changed'),
  data: v.looseObject({ integration_id: text, state: v.pipe(v.string(), v.maxLength(40)) }),
});

/** `integration-deleted`: the integration (`data.id`) is gone from the Kombo account. */
export const komboIntegrationDeletedSchema = v.looseObject({
  id: text,
  type: v.literal('integration-deleted'),
  data: v.looseObject({ id: text }),
});
