import { createHash } from 'node:crypto';
import * as v from 'valibot';

/**
 * Every outside identifier that becomes part of a DynamoDB key or a URL segment: ATS ids, the interview
 * service's ids in its webhook, delivery ids. 200 characters leave room for the `connection#…#trigger` keys under
 * DynamoDB's 2,048-byte key limit; the charset is what the ATSs and the service issue (numbers, UUIDs, short
 * codes, slugs) and nothing a URL or a log line would need to escape.
 */
export const MAX_ID_LENGTH = 200;
export const SAFE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=~-]{0,199}$/;

export const safeIdSchema = v.pipe(
  v.string(),
  v.regex(SAFE_ID_PATTERN, `must be an identifier of at most ${MAX_ID_LENGTH} letters, digits or . _ : @ + = ~ -`),
);

const sha256 = (data: string | Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/**
 * A delivery id as the connector stores it. An id the sender did not sign (Greenhouse's `Greenhouse-Event-ID`
 * header) or one too long or odd to be a key is hashed: never stored raw, never a reason to refuse the delivery.
 * Without one, the hash of the signed body stands in, so the same bytes are the same delivery.
 */
export function deliveryIdOf(raw: string | undefined, body: Buffer): string {
  if (raw && SAFE_ID_PATTERN.test(raw)) return raw;
  return sha256(raw || body);
}
