import { createHmac, timingSafeEqual } from 'node:crypto';

export function hmacSha256(secret: string, data: Buffer | string): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

/**
 * Compares a received digest (hex or base64 text) with the expected bytes in constant time. The received text
 * is decoded first, so a wrong length or alphabet fails without an early exit on content.
 */
export function digestMatches(expected: Buffer, received: string, encoding: 'hex' | 'base64'): boolean {
  const pattern = encoding === 'hex' ? /^[0-9a-fA-F]+$/ : /^[A-Za-z0-9+/_-]+={0,2}$/;
  if (!pattern.test(received)) return false;
  const decoded = Buffer.from(encoding === 'hex' ? received : received.replace(/-/g, '+').replace(/_/g, '/'), encoding);
  if (decoded.length !== expected.length) return false;
  return timingSafeEqual(decoded, expected);
}

/** Constant-time equality of two secrets given as text (e.g. a token in a URL). */
export function secretEquals(expected: string, received: string): boolean {
  const a = hmacSha256('compare', expected);
  const b = hmacSha256('compare', received);
  return timingSafeEqual(a, b);
}
