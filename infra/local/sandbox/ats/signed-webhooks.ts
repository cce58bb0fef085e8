import { randomUUID } from 'node:crypto';
import { errorMessage } from '../../../../shared/errors';

export interface WebhookTarget {
  url: string;
  /** The secret the customer chose, for ATSs that let them (Greenhouse, Ashby, Workable). */
  secret: string;
  /** Secrets the ATS issued itself, per event type (Lever: one webhook, and one signature token, per event). */
  issued?: Record<string, string> | undefined;
  /** The ATS's id for it, when it was made through the ATS's API. */
  id?: string;
  /** The events it is for; every event when absent (a webhook registered by the sandbox's control). */
  events?: string[];
  /** A disabled webhook is kept but sent nothing (Greenhouse disables one whose ping failed). */
  enabled?: boolean;
}

/** Whether `target` is sent a delivery of `event`. */
export function receives(target: WebhookTarget, event: string | undefined): boolean {
  if (target.enabled === false) return false;
  return event === undefined || target.events === undefined || target.events.includes(event);
}

/** The secret a delivery of `event` is signed with: the one the ATS issued for it, else the customer's. */
export function secretFor(target: WebhookTarget, event: string): string {
  return target.issued && Object.hasOwn(target.issued, event) ? (target.issued[event] as string) : target.secret;
}

export interface DeliveryRecord {
  eventId: string;
  url: string;
  action: string;
  status?: number;
  error?: string;
  /** Never sent: the stage change's webhook was dropped (a fault of the sandbox). */
  dropped?: boolean;
  at: number;
}

/** Posts the exact bytes it signed; records each delivery's answer. */
export async function deliverSigned(
  target: WebhookTarget,
  body: Buffer,
  headers: Record<string, string>,
  deliveries: DeliveryRecord[],
  action: string,
  eventId: string = randomUUID(),
): Promise<DeliveryRecord> {
  const record: DeliveryRecord = { eventId, url: target.url, action, at: Date.now() };
  deliveries.push(record);
  try {
    const response = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    await response.arrayBuffer();
    record.status = response.status;
  } catch (error) {
    record.error = errorMessage(error);
  }
  return record;
}

/** What a sandbox's limiter answers a request: let in or not, what is left, and how long until the next is let in. */
export interface RateAnswer {
  allowed: boolean;
  remaining: number;
  resetMs: number;
}

/**
 * A token bucket per key: `limit` requests per `windowMs` sustained, and up to `burst` at once from a full bucket, as
 * Lever counts ("10 requests per second steady state per API key, bursts to 20", ats-facts). Each key's bucket starts
 * full; `resetMs` is how long until it holds a request again.
 */
export class TokenBucketLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  public constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly burst: number,
  ) {}

  public take(key: string, now = Date.now()): RateAnswer {
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) * this.limit) / this.windowMs);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) {
      const resetMs = Math.ceil(((1 - bucket.tokens) * this.windowMs) / this.limit);
      return { allowed: false, remaining: 0, resetMs };
    }
    bucket.tokens -= 1;
    return { allowed: true, remaining: Math.floor(bucket.tokens), resetMs: 0 };
  }
}

/** A fixed-window limiter: `limit` requests per `windowMs` per key, answering how long until the window resets. */
export class FixedWindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  /**
   * `limit` requests per window per key (the vendor's unit: an API credential, a token). `aligned` windows are
   * fixed on the clock (each starts at a multiple of `windowMs`), as Greenhouse's 30-second windows and Workable's
   * intervals are; otherwise a key's window starts at its first request.
   */
  public constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly aligned = false,
  ) {}

  public take(key: string, now = Date.now()): RateAnswer {
    let window = this.windows.get(key);
    if (!window || now - window.start >= this.windowMs) {
      window = { start: this.aligned ? now - (now % this.windowMs) : now, count: 0 };
      this.windows.set(key, window);
    }
    const resetMs = window.start + this.windowMs - now;
    if (window.count >= this.limit) return { allowed: false, remaining: 0, resetMs };
    window.count++;
    return { allowed: true, remaining: this.limit - window.count, resetMs };
  }
}
