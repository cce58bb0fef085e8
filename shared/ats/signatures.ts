import { digestMatches, hmacSha256 } from '../http';
import type { VendorProfile } from './profile';

type Scheme = VendorProfile['signature'];

/** The signature as the vendor sends it (its header's value, or Lever's body field): its profile's format, hex. */
export function signatureFor(scheme: Scheme, secret: string, signed: Buffer | string): string {
  return scheme.format.replace('<digest>', hmacSha256(secret, signed).toString('hex'));
}

/**
 * Checks a webhook signed in a header, by its vendor's profile: exactly the format (`sha256 <digest>`,
 * `sha256=<digest>`, or the digest alone), the digest compared in constant time in the encodings the profile
 * accepts. The reason names the header.
 */
export function verifyHeaderSignature(
  scheme: Scheme,
  secret: string | undefined,
  request: { headers: Record<string, string | undefined>; rawBody: Buffer },
): { valid: true } | { valid: false; reason: string } {
  const name = scheme.header;
  if (!name) return { valid: false, reason: 'this ATS signs no header' };
  if (!secret) return { valid: false, reason: 'the connection has no webhook secret' };
  const sent = request.headers[name.toLowerCase()]?.trim();
  if (!sent) return { valid: false, reason: `no ${name} header` };
  const [before, after] = scheme.format.split('<digest>') as [string, string];
  if (!sent.startsWith(before) || !sent.endsWith(after))
    return { valid: false, reason: `${name} is not "${scheme.format}"` };
  const digest = sent.slice(before.length, sent.length - after.length);
  const expected = hmacSha256(secret, request.rawBody);
  const matches =
    digestMatches(expected, digest, 'hex') ||
    (scheme.encoding === 'hex-or-base64' && digestMatches(expected, digest, 'base64'));
  return matches ? { valid: true } : { valid: false, reason: 'signature does not match' };
}
