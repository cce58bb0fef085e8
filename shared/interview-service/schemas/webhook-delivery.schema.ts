import * as v from 'valibot';
import { EVENT_KINDS } from '../constants';
import { safeIdSchema, singleEmailAddress } from '../../validation';
import { reportEntries } from './resources.schema';

/**
 * A delivery to the connector: `{event, data}` (facts "Webhook deliveries"). Unsigned and without a
 * delivery id, so `data` only says which report to re-read; the report itself comes from the API.
 */
export const webhookDeliverySchema = v.object({
  event: v.pipe(v.string(), v.nonEmpty('event must name an event kind')),
  data: v.optional(v.unknown()),
});

/** `data` of `interview_report.created`: at least the three ids, often the whole (untrusted) report. */
export const reportCreatedDataSchema = v.object({
  ...reportEntries,
  // These ids become keys and URL segments: bounded and in a safe charset (shared/validation/ids.ts).
  report_id: safeIdSchema,
  interview_id: safeIdSchema,
  candidate_id: safeIdSchema,
});

export const reportCreatedDeliverySchema = v.object({
  event: v.literal(EVENT_KINDS.reportCreated),
  data: reportCreatedDataSchema,
});

/**
 * The candidate's e-mail where a delivery's `data` gives one address (the service often sends the whole report): only
 * to find the application should the service not give the report. Anything else in its place is left out, not refused.
 */
export function deliveredCandidateEmail(data: unknown): string | undefined {
  const read = v.safeParse(v.object({ candidate_email_id: v.string() }), data);
  return read.success ? singleEmailAddress(read.output.candidate_email_id) : undefined;
}
