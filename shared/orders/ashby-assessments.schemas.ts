import * as v from 'valibot';

/**
 * What Ashby sends the partner's `assessment.start` and `assessment.cancel` (ASPEC, assessment-partner facts section
 * 2): only what the connector reads is checked; every other field (the hiring team, custom fields) is accepted.
 */
const text = v.pipe(v.string(), v.trim(), v.nonEmpty());
const optionalText = v.nullish(v.pipe(v.string(), v.trim(), v.maxLength(1000)));

export const startBodySchema = v.object({
  assessment_type_id: v.pipe(text, v.maxLength(200)),
  candidate: v.object({
    ashby_id: v.pipe(text, v.maxLength(200)),
    first_name: optionalText,
    last_name: optionalText,
    email: v.pipe(text, v.maxLength(320), v.email('must be an e-mail address')),
    ashby_profile_url: optionalText,
  }),
  application: v.object({ ashby_id: v.pipe(text, v.maxLength(200)), status: optionalText }),
  job: v.object({ ashby_id: optionalText, name: optionalText }),
});

export const cancelBodySchema = v.object({ assessment_id: v.pipe(text, v.maxLength(200)) });
