import { AtsError, ATS_ERROR_CODES } from '../ats/errors';
import type { ConnectionContext } from './ports';

/**
 * Before a worker claims anything for a connection: when that connection's ATS said its rate-limit window is
 * spent, the message goes back to the queue until its turn (the first window after the reset with room for it;
 * a retryable rate-limit error the worker defers), and the worker's slot is free at once for every other
 * customer's messages.
 */
export async function deferWhileWindowSpent(context: ConnectionContext, signal?: AbortSignal): Promise<void> {
  const turn = await context.ats.admitMessage?.(signal);
  if (!turn) return;
  const seconds = Math.ceil(turn.waitMs / 1000);
  throw new AtsError(
    ATS_ERROR_CODES.rateLimited,
    `connection ${context.connection.id}: the ATS's rate-limit window is spent; back in ${seconds} s`,
    { retryAfterMs: turn.waitMs, spreadMs: turn.spreadMs },
  );
}
