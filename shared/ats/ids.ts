import { safeIdSchema } from '../validation';

/**
 * An identifier as the ATSs issue them: numbers (Greenhouse), UUIDs (Ashby, Lever), short codes and slugs
 * (Workable). Anything else (spaces, control characters, lone surrogates that cannot even be put in a URL, more
 * than 200 characters) is refused at the webhook, before a worker would try to use it as a key.
 */
export const atsIdSchema = safeIdSchema;
