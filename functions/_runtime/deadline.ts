import type { Context } from 'aws-lambda';
import { deadlineAfter } from '../../shared/http/deadline';

/**
 * Outbound calls stop shortly before the Lambda deadline (3 s, or a fifth of the time left when that is
 * shorter), so a record is reported failed instead of being cut off mid-write.
 */
const DEADLINE_MARGIN_MS = 3000;

/**
 * What an invocation writes once its records are answered (the console's record, ./activity.ts) may use most of that
 * margin: it stops half a second (or a tenth of the time left) before Lambda's own deadline. Under load, the work
 * running up to its deadline left the record a few hundred milliseconds, and it was dropped.
 */
const CLOSING_MARGIN_MS = 500;

type LambdaContext = Pick<Context, 'getRemainingTimeInMillis'> | undefined;

export function deadlineSignal(context: LambdaContext, fallbackMs = 60_000): AbortSignal {
  const remaining = remainingMs(context, fallbackMs);
  // AbortSignal.timeout takes whole milliseconds only.
  return deadlineAfter(Math.max(500, Math.floor(remaining - Math.min(DEADLINE_MARGIN_MS, remaining / 5))));
}

/** The invocation's closing writes' deadline: later than `deadlineSignal`'s, still before Lambda's. */
export function closingSignal(context: LambdaContext, fallbackMs = 60_000): AbortSignal {
  const remaining = remainingMs(context, fallbackMs);
  return deadlineAfter(Math.max(100, Math.floor(remaining - Math.min(CLOSING_MARGIN_MS, remaining / 10))));
}

const remainingMs = (context: LambdaContext, fallbackMs: number): number =>
  typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : fallbackMs;
