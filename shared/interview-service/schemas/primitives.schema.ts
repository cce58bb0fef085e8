import * as v from 'valibot';

function isRealCalendarDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** `YYYY-MM-DD HH:MM:SS` (date_created, date_modified). */
export const timestampSchema = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, 'expected a timestamp YYYY-MM-DD HH:MM:SS'),
  v.check((value) => {
    const [y, m, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
    const [hh, mm, ss] = value.slice(11).split(':').map(Number) as [number, number, number];
    return isRealCalendarDate(y, m, d) && hh < 24 && mm < 60 && ss < 60;
  }, 'expected a real date and time'),
);

/** `YYYY-MM-DD` (report_date, resume dates). */
export const dateSchema = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD'),
  v.check((value) => {
    const [y, m, d] = value.split('-').map(Number) as [number, number, number];
    return isRealCalendarDate(y, m, d);
  }, 'expected a real calendar date'),
);

/** Fields the spec names but that the live service may leave out or null (facts: design for the worst case). */
export const optionalString = v.nullish(v.string());
export const optionalNumber = v.nullish(v.number());

/** An identifier: strings, UUIDs for most, short alphanumerics for report_id and candidate_id. */
export const idSchema = v.pipe(v.string(), v.nonEmpty('expected a non-empty identifier'));

/** `status` is a boolean, or the text "true"/"false" on some lists (spec §1; facts "Behaviour"). */
export const envelopeStatusSchema = v.pipe(
  v.union([v.boolean(), v.picklist(['true', 'false'])], 'expected a boolean or "true"/"false"'),
  v.transform((value) => value === true || value === 'true'),
);

/** The common envelope `{status, message, data}`; `data` is absent on the update response. */
export function envelopeSchema<TData extends v.GenericSchema>(data: TData) {
  return v.object({
    status: envelopeStatusSchema,
    message: v.optional(v.string(), ''),
    data,
  });
}

/** The envelope as any response carries it, before `data` is known to be of any shape. */
export const bareEnvelopeSchema = v.object({
  status: envelopeStatusSchema,
  message: v.optional(v.string(), ''),
  data: v.optional(v.unknown()),
});
