import * as v from 'valibot';

/**
 * Kombo's Assessment API (assessment-partner facts, section 4; the SDK's models): what the connector reads is
 * checked, every other field accepted, and any field but the candidate's e-mail may be null.
 */
const id = v.pipe(v.string(), v.trim(), v.nonEmpty(), v.maxLength(200));
const optionalText = v.nullish(v.pipe(v.string(), v.trim(), v.maxLength(1000)));
/** Read if it is there and of its type; anything else is as if absent. */
const tolerant = <S extends v.GenericSchema>(schema: S) => v.fallback(v.nullish(schema), undefined);

export const KOMBO_STATUSES = ['OPEN', 'COMPLETED', 'CANCELLED', 'REJECTED'] as const;

/** An order, as `GET /assessment/orders` lists it and `order-received` carries it (with its `integration_id`). */
export const komboOrderSchema = v.looseObject({
  id,
  package_id: id,
  status: v.picklist(KOMBO_STATUSES),
  candidate: v.looseObject({
    email: v.pipe(v.string(), v.trim(), v.maxLength(320), v.email('must be an e-mail address')),
    remote_id: optionalText,
    first_name: optionalText,
    last_name: optionalText,
  }),
  application: v.nullish(v.looseObject({ remote_id: optionalText })),
});
export type KomboOrder = v.InferOutput<typeof komboOrderSchema>;

/** Only an order's id and status: what the result's look-up reads, whatever the rest of the order is. */
export const komboOrderStatusSchema = v.looseObject({ id: v.string(), status: v.string() });

/** The webhook's envelope; its `data` is read once the type says it is an order. */
export const komboEventSchema = v.looseObject({ id, type: v.pipe(v.string(), v.maxLength(200)), data: v.unknown() });

export const komboOrderReceivedSchema = v.looseObject({
  ...komboOrderSchema.entries,
  integration_id: id,
});

/** A page of `GET /assessment/orders`: each item read alone, so one bad item never refuses its page. */
export const komboOrdersPageSchema = v.looseObject({
  data: v.looseObject({ next: v.nullish(v.string()), results: v.array(v.unknown()) }),
});

export const komboPackagesSchema = v.looseObject({
  data: v.looseObject({
    packages: v.array(
      v.looseObject({
        id: v.string(),
        name: tolerant(v.string()),
        description: tolerant(v.string()),
        type: v.string(),
      }),
    ),
  }),
});

/** A write's answer: `warnings` to log (Kombo shows them in its dashboard). Read leniently: a 2xx is done. */
export const komboWarningsSchema = v.looseObject({
  warnings: tolerant(v.array(v.looseObject({ message: tolerant(v.string()) }))),
});

/** Kombo's error envelope: branch on `code`, not the status. */
export const komboErrorSchema = v.looseObject({
  error: v.looseObject({ code: v.nullish(v.string()), message: tolerant(v.string()) }),
});
