import { AtsError, ATS_ERROR_CODES } from '../ats/errors';
import type { ConnectionContext } from './ports';

/**
 * Runs a message's work once its connection's ATS has room for it. When that ATS said its rate-limit window is
 * spent, nothing is claimed: the message goes back to the queue until its turn (the first window after the reset
 * with room for it; a retryable rate-limit error the worker defers), and the worker's slot is free at once for
 *
 * every other customer's messages. The message's `kind` names the sort of work, whose cost in calls is learnt apart.
 */
export async function withinRateWindow<T>(
  context: ConnectionContext,
  message: { kind: string; deferrals?: number | undefined },
  signal: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (!context.ats.admit) return work();
  // A message deferred before comes back for its turn (or after a wait another API asked for).
  const admission = await context.ats.admit(work, {
    signal,
    kind: message.kind,
    returning: (message.deferrals ?? 0) > 0,
  });
  if (admission.admitted) return admission.value;
  const { waitMs, spreadMs } = admission.turn;
  throw new AtsError(
    ATS_ERROR_CODES.rateLimited,
    `connection ${context.connection.id}: the ATS's rate-limit window is spent; back in ${Math.ceil(waitMs / 1000)} s`,
    { retryAfterMs: waitMs, spreadMs },
  );
}
