import type { VendorProfile } from '../../../../shared/ats/profile';

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
   * fixed on the clock (each starts at a multiple of `windowMs`); otherwise a key's window starts at its first
   * request, as the profiles count them (`window-from-first-call`).
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

/** A sandbox's own limit: the options' (for measuring at other rates), else its vendor's. */
export interface RateOptions {
  rateLimit?: number | undefined;
  rateWindowMs?: number | undefined;
}

/**
 * The limiter a vendor's profile declares, counted per principal: a token bucket (a given limit keeps the profile's
 * proportion of burst) or a window from the first call. Where the vendor publishes none, `unpublished` stands in.
 */
export function limiterOf(
  rate: VendorProfile['rate'],
  options: RateOptions,
  unpublished: { limit: number; windowMs: number } = { limit: 50, windowMs: 10_000 },
): { limit: number; limiter: { take(key: string): RateAnswer } } {
  const documented = 'requests' in rate ? { limit: rate.requests, windowMs: rate.windowMs } : unpublished;
  const limit = options.rateLimit ?? documented.limit;
  const windowMs = options.rateWindowMs ?? documented.windowMs;
  if (rate.counted === 'token-bucket')
    return { limit, limiter: new TokenBucketLimiter(limit, windowMs, (limit * rate.burst) / rate.requests) };
  return { limit, limiter: new FixedWindowLimiter(limit, windowMs) };
}
