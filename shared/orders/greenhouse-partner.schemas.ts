import * as v from 'valibot';

/**
 * What Greenhouse's Assessment Partner calls send (assessment-partner facts, section 1): absent values come as
 * `null`, names are snake_case, and properties may be added at any time, so only what the connector reads is checked
 * and every other field is accepted and dropped.
 */
const text = v.pipe(v.string(), v.trim(), v.nonEmpty());
const optionalText = v.nullish(v.pipe(v.string(), v.trim(), v.maxLength(1000)));

export const sendTestBodySchema = v.object({
  partner_test_id: v.pipe(text, v.maxLength(200)),
  candidate: v.object({
    first_name: optionalText,
    last_name: optionalText,
    preferred_name: optionalText,
    email: v.pipe(text, v.maxLength(320), v.email('must be an e-mail address')),
    /** The only place the application's id appears (`…/people/<candidate>?application_id=<application>`). */
    greenhouse_profile_url: optionalText,
    resume_url: optionalText,
    phone_number: optionalText,
  }),
  sent_by: optionalText,
  /** Where the completion PATCH goes (`https://app.greenhouse.io/integrations/testing_partners/…`). */
  // https, or plain http on this machine's loopback (the local Greenhouse sandbox); nothing else is PATCHed.
  url: v.pipe(
    text,
    v.url('must be a URL'),
    v.regex(/^(https:\/\/|http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\/)/, 'must be an https URL'),
  ),
});
export type SendTestBody = v.InferOutput<typeof sendTestBodySchema>;

/**
 * Whether a completion URL may be PATCHed with the Greenhouse-issued credential: Greenhouse's own hosts over https on
 * the default port, or the origin the connection reaches its Greenhouse at (the local sandbox). Anywhere else, an
 * order placed with a stolen partner key would carry that credential to the placer.
 */
export function isGreenhouseCompletionUrl(url: string, atsBaseUrl: string): boolean {
  const parsed = URL.parse(url);
  if (!parsed) return false;
  const host = parsed.hostname.toLowerCase();
  const greenhouse = host === 'greenhouse.io' || host.endsWith('.greenhouse.io');
  if (parsed.protocol === 'https:' && parsed.port === '' && greenhouse) return true;
  return parsed.origin === URL.parse(atsBaseUrl)?.origin;
}

/** A malformed answer Greenhouse reports back: logged and counted; its other fields are optional. */
export const responseErrorBodySchema = v.object({
  api_call: v.pipe(text, v.maxLength(100)),
  errors: v.pipe(v.array(v.pipe(v.string(), v.maxLength(2000))), v.maxLength(50)),
  partner_test_id: v.nullish(v.string()),
  partner_interview_id: v.nullish(v.string()),
});

/**
 * The ATS ids in a Greenhouse profile URL, read defensively (its format is not specified): the candidate from
 * `/people/<id>`, the application from `application_id=<id>`; digits only, or nothing.
 */
export function idsFromProfileUrl(profileUrl: string | null | undefined): {
  atsCandidateId?: string;
  atsApplicationId?: string;
} {
  if (!profileUrl) return {};
  let url: URL;
  try {
    url = new URL(profileUrl);
  } catch {
    return {};
  }
  const candidate = /\/people\/(\d{1,20})(?:\/|$)/.exec(url.pathname)?.[1];
  const application = url.searchParams.get('application_id');
  return {
    ...(candidate ? { atsCandidateId: candidate } : {}),
    ...(application && /^\d{1,20}$/.test(application) ? { atsApplicationId: application } : {}),
  };
}
