import type { VendorProfile } from '../../../../shared/ats/profile';

/** What a limiter answers a request: let in or not, what is left, and how long until the next is let in. */
export type RateAnswer = { allowed: boolean; remaining: number; resetMs: number };
/** A token bucket per key, as Lever counts ("10 requests per second steady state per API key, bursts to 20"). */
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
    const resetMs = Math.ceil(((1 - bucket.tokens) * this.windowMs) / this.limit);
    if (bucket.tokens < 1) return { allowed: false, remaining: 0, resetMs };
    bucket.tokens -= 1;
    return { allowed: true, remaining: Math.floor(bucket.tokens), resetMs: 0 };
  }
}

/** `limit` requests per window per key, from the key's first request as the profiles count, or on the clock. */
export class FixedWindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

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

/** A sandbox's own limit, for measuring at other rates: else its vendor's. */
export type RateOptions = { rateLimit?: number | undefined; rateWindowMs?: number | undefined };
/** No published limit (Ashby): a per-key window stands in, with the 429 and Retry-After its OpenAPI implies. */
const UNPUBLISHED = { limit: 50, windowMs: 10_000 };
/** The limiter a vendor's profile declares, a given limit keeping its burst's proportion. */
export function limiterOf(rate: VendorProfile['rate'], options: RateOptions) {
  const documented = 'requests' in rate ? { limit: rate.requests, windowMs: rate.windowMs } : UNPUBLISHED;
  const [limit, windowMs] = [options.rateLimit ?? documented.limit, options.rateWindowMs ?? documented.windowMs];
  const limiter =
    rate.counted === 'token-bucket'
      ? new TokenBucketLimiter(limit, windowMs, (limit * rate.burst) / rate.requests)
      : new FixedWindowLimiter(limit, windowMs);
  return { limit, limiter };
}
