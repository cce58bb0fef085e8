/**
 * Text from outside (a candidate's or a job's name, a report's feedback) on its way to a person: an e-mail, an
 * ATS note, the interview's name on the service. One line, no control characters, bounded.
 */

// C0 and C1 controls (CR and LF among them), the Unicode line and paragraph separators, and the bidirectional
// overrides that make text read differently from what it holds.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g;
const SPACES = /\s+/g;

export const TEXT_LIMITS = {
  /** A person's or a job's name. */
  name: 200,
  /** One answer's feedback or one question in a note. */
  quote: 1_000,
} as const;

/** One line: controls become spaces, runs of spaces one space, and at most `maxLength` characters (… when cut). */
export function singleLine(text: string, maxLength: number): string {
  const flat = text
    .slice(0, maxLength * 2)
    .replace(CONTROLS, ' ')
    .replace(SPACES, ' ')
    .trim();
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1).trimEnd()}…` : flat;
}

/**
 * Report text inside a note, quoted: one line, so it cannot forge the note's own lines ("AI match score: …"),
 * and its quotes turned typographic, so it cannot close the quote around it.
 */
export function quoted(text: string, maxLength: number = TEXT_LIMITS.quote): string {
  return `“${singleLine(text, maxLength).replace(/["“”]/g, '＂')}”`;
}

// One mailbox, as SES takes it: no display name, no list, no quotes, no comments, no spaces.
const DOMAIN_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const SINGLE_ADDRESS = new RegExp(`^[A-Za-z0-9.!#$%&'*+/=?^_\`{|}~-]{1,64}@${DOMAIN_LABEL}(?:\\.${DOMAIN_LABEL})+$`);

/** The address when it is exactly one mailbox of at most 254 characters; otherwise undefined. */
export function singleEmailAddress(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const address = raw.trim();
  return address.length <= 254 && SINGLE_ADDRESS.test(address) ? address : undefined;
}

/** A link a note or an ATS may show: `https:` only, at most 2,000 characters, no whitespace. */
export function httpsLink(raw: string | null | undefined): string | undefined {
  if (!raw || raw.length > 2_000 || /\s/.test(raw)) return undefined;
  try {
    return new URL(raw).protocol === 'https:' ? raw : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A link the interview service gave (a report, a recording): `https:`, or on the service's own origin as the
 * connection configures it (`interviewService.baseUrl`, which is https in production and the sandbox on one machine).
 */
export function serviceLink(raw: string | null | undefined, serviceBaseUrl: string | undefined): string | undefined {
  const https = httpsLink(raw);
  if (https || !raw || !serviceBaseUrl || raw.length > 2_000 || /\s/.test(raw)) return https;
  try {
    return new URL(raw).origin === new URL(serviceBaseUrl).origin ? raw : undefined;
  } catch {
    return undefined;
  }
}
