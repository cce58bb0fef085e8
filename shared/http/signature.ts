import { createHmac, timingSafeEqual } from 'node:crypto';

export function hmacSha256(secret: string, data: Buffer | string): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

/**
 * Compares a received digest (hex or base64 text) with the expected bytes in constant time. Only the exact
 * encoding of a digest of the expected length is accepted: hex of exactly twice its bytes, or canonical base64
 * (standard or URL-safe alphabet, padding optional), so no extra character or non-canonical spelling passes.
 */
export function digestMatches(expected: Buffer, received: string, encoding: 'hex' | 'base64'): boolean {
  if (encoding === 'hex') {
    if (received.length !== expected.length * 2 || !/^[0-9a-fA-F]+$/.test(received)) return false;
    return timingSafeEqual(Buffer.from(received, 'hex'), expected);
  }
  const standard = received.replace(/-/g, '+').replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(standard)) return false;
  const decoded = Buffer.from(standard, 'base64');
  if (decoded.length !== expected.length) return false;
  // Canonical: re-encoding gives back what was sent (Node's decoder ignores stray trailing bits and characters).
  if (decoded.toString('base64').replace(/=+$/, '') !== standard.replace(/=+$/, '')) return false;
  return timingSafeEqual(decoded, expected);
}

/** Constant-time equality of two secrets given as text (e.g. a token in a URL). */
export function secretEquals(expected: string, received: string): boolean {
  const a = hmacSha256('compare', expected);
  const b = hmacSha256('compare', received);
  return timingSafeEqual(a, b);
}
