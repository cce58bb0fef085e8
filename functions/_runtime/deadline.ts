import type { Context } from 'aws-lambda';
import { deadlineAfter } from '../../shared/http/deadline';

/**
 * Outbound calls stop shortly before the Lambda deadline (3 s, or a fifth of the time left when that is
 * shorter), so a record is reported failed instead of being cut off mid-write.
 */
const DEADLINE_MARGIN_MS = 3000;

export function deadlineSignal(
  context: Pick<Context, 'getRemainingTimeInMillis'> | undefined,
  fallbackMs = 60_000,
): AbortSignal {
  const remaining =
    typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : fallbackMs;
  // AbortSignal.timeout takes whole milliseconds only.
  return deadlineAfter(Math.max(500, Math.floor(remaining - Math.min(DEADLINE_MARGIN_MS, remaining / 5))));
}
