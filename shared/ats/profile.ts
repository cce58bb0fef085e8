import type { AtsKind } from '../config';

/** Where a vendor fact comes from: the spec's key path or the vendor's page, as a reader can check it. */
interface Sourced {
  source: string;
}

/**
 * How a vendor counts its rate limit: a window of `requests` per `windowMs` from the caller's first call, a token
 * bucket (`requests` per `windowMs` sustained, `burst` at most at once), calls in flight at once, or no published
 * limit at all.
 */
export type RateCounting =
  | { counted: 'window-from-first-call'; requests: number; windowMs: number }
  | { counted: 'token-bucket'; requests: number; windowMs: number; burst: number }
  | { counted: 'concurrency'; inFlight: number }
  | { counted: 'unpublished' };

/** The headers every answer carries about the caller's window; the reset is a moment in epoch seconds. */
export interface RateHeaders {
  limit: string;
  remaining: string;
  reset: string;
}

/** The work the pipeline does as one message, whose calls a profile declares (a warm environment, one page). */
export const STEP_KINDS = [
  'invitation',
  'writeBack',
  'writeBackMove',
  'reminder',
  'expiry',
  'exit',
  'sweepPage',
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/**
 * One vendor as the connector meets it, declared once: its rate limit and how it is counted, the headers announcing
 * it, its 429 and error envelopes, its paging, its webhook signature, and the calls each step of the pipeline costs.
 * Plain data; each fact carries its source, and test/contract/ats/profiles.test.ts holds them to the vendors'
 * fixtures, the adapters and the sandboxes.
 */
export interface VendorProfile {
  kind: AtsKind;
  rate: RateCounting & Sourced;
  /** Absent where the vendor announces no window (Lever, Ashby). */
  rateHeaders?: RateHeaders & Sourced;
  /**
   * A 429: whether it names its wait in `Retry-After` (seconds), and its body; `backOffFromMs` where the vendor names
   * neither a wait nor a reset but says how long to back off (a retry sooner meets the same refusal).
   */
  throttled: { retryAfter: boolean; body: string; backOffFromMs?: number } & Sourced;
  /** How a refusal reads: its body's shape; `inSuccess` where a refusal may come as HTTP 200. */
  errors: { body: string; inSuccess: boolean } & Sourced;
  paging: {
    style: 'link-header' | 'offset-token' | 'next-url-in-body' | 'cursor-in-body';
    maxPageSize: number;
  } & Sourced;
  /**
   * How a webhook is signed: HMAC-SHA256 with the webhook's secret over `signs`, sent in `header` (or the body's
   * `signature` field where there is none) as `format` shows it, the digest in `encoding`.
   */
  signature: {
    header: string | undefined;
    /** The header naming each delivery, where the vendor sends one. */
    deliveryHeader?: string;
    format: string;
    signs: 'raw-body' | 'token+triggeredAt';
    encoding: 'hex' | 'hex-or-base64' | 'base64url';
  } & Sourced;
  /**
   * Where the report file lands (the application, or the candidate where the ATS keeps files there), the largest file
   * the vendor takes (undefined: none documented; the connector's own cap applies), and the calls attaching it adds to
   * a write-back: the upload (a resumed write-back reads the list of the record's files first, as it does its notes);
   * none where it rides on the note.
   */
  files: {
    on: 'application' | 'candidate';
    maxBytes: number | undefined;
    calls: number;
    /** The file rides on the report note (one call for both), where a note takes one attachment. */
    onNote?: boolean;
  } & Sourced;
  /**
   * The ATS calls each step costs, status tags off, in a warm environment (caches filled, one page, no retry). Every
   * profile's source alike: each port method's calls, counted, and held to the calls per route `npm run bench` prints
   * (docs/architecture.md, "Each vendor declared once").
   */
  stepCalls: Record<StepKind, number>;
  /** The calls status tags add to each step (`writeBack.status: tags`): the tags read, the old one off, the new on. */
  statusTagCalls: Record<StepKind, number>;
}

/** One step's cost as the architecture page's table writes it: its calls, + what status tags add. */
export type StepCost = `${number} + ${number}`;
type CostPerStep<Steps extends readonly StepKind[]> = { [I in keyof Steps]: StepCost };

/**
 * A profile's `stepCalls` and `statusTagCalls` from its column of the architecture page's table (docs/architecture.md,
 * "Each vendor declared once"): one cost a step, in `STEP_KINDS` order.
 */
export function stepCosts(
  ...costs: CostPerStep<typeof STEP_KINDS>
): Pick<VendorProfile, 'stepCalls' | 'statusTagCalls'> {
  const split = STEP_KINDS.map((step, i) => [step, (costs[i] ?? '').split(' + ').map(Number)] as const);
  return {
    stepCalls: Object.fromEntries(split.map(([step, [calls]]) => [step, calls])) as Record<StepKind, number>,
    statusTagCalls: Object.fromEntries(split.map(([step, [, tags]]) => [step, tags])) as Record<StepKind, number>,
  };
}

/** The longest a reset header is believed for: a longer one is more likely a misread unit than a real window. */
const MAX_RESET_WAIT_MS = 15 * 60_000;

/** The window an ATS announces in its answers: the calls left in it, and when it resets. */
export interface AnnouncedWindow {
  remaining: number;
  resetAt: number;
}

/** The window an answer announces (its vendor's rate headers), or undefined where it announces none. */
export function announcedWindow(
  names: RateHeaders | undefined,
  headers: Headers,
  now: number,
): AnnouncedWindow | undefined {
  const remaining = Number(names ? (headers.get(names.remaining) ?? Number.NaN) : Number.NaN);
  const resetAt = announcedResetAt(names, headers, now);
  return Number.isFinite(remaining) && resetAt !== undefined ? { remaining, resetAt } : undefined;
}

/** The moment the vendor's window resets, as announced in epoch seconds; undefined when absent or not believable. */
export function announcedResetAt(names: RateHeaders | undefined, headers: Headers, now: number): number | undefined {
  const reset = Number(names ? (headers.get(names.reset) ?? Number.NaN) : Number.NaN);
  if (!Number.isFinite(reset) || reset <= 0) return undefined;
  const at = reset * 1000;
  return at > now && at - now <= MAX_RESET_WAIT_MS ? at : undefined;
}
