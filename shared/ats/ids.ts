import * as v from 'valibot';

/**
 * An identifier as the ATSs issue them: numbers (Greenhouse), UUIDs (Ashby, Lever), short codes and slugs
 * (Workable). Anything else (spaces, control characters, lone surrogates that cannot even be put in a URL) is
 * refused at the webhook, before a worker would try to use it.
 */
export const atsIdSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._:@+=~-]{0,199}$/, 'must be an ATS identifier (letters, digits, . _ : @ + = ~ -)'),
);
