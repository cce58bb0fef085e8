import { AtsError, ATS_ERROR_CODES } from '../ats/errors';
import type { Like } from '../ats/port';
import type { ConnectionContext } from './ports';

/**
 * Runs a message's work in its turn on its connection's ATS schedule (shared/ats/pacer.ts). When the turn is later
 * than a short wait, nothing is claimed: the message goes back to the queue carrying its turn (a retryable
 * rate-limit error with `turnAt`, which the worker defers), and the worker's slot is free at once for every other
 * customer's messages. The message's `kind` names the sort of work, whose cost in calls is learnt apart.
 */
export async function withinRateWindow<T>(
  context: ConnectionContext,
  message: {
    kind: string;
    turnAt?: number | undefined;
    turnCalls?: number | undefined;
    turnWhole?: boolean | undefined;
    turnKind?: string | undefined;
    /** What a kind not shown yet is booked like (shared/ats/port.ts). */
    like?: Like | undefined;
  },
  signal: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (!context.pacer) return work();
  const turn =
    message.turnAt === undefined
      ? undefined
      : { at: message.turnAt, calls: message.turnCalls ?? 1, whole: message.turnWhole === true };
  // A message back for its turn counts toward the sort it was booked for.
  const kind = message.turnKind ?? message.kind;
  const paced = message.like ? { kind, like: message.like } : kind;
  const admission = await context.pacer.admit(paced, turn, signal, work);
  if (admission.admitted) return admission.value;
  const turnIn = Math.ceil(Math.max(0, admission.waitMs) / 1000);
  // Back in the queue until shortly before the turn, with the messages whose turns are near it (pacer.ts).
  throw new AtsError(
    ATS_ERROR_CODES.rateLimited,
    `connection ${context.connection.id}: its turn on the ATS's rate limit is in ${turnIn} s`,
    {
      retryAfterMs: Math.floor(admission.returnInMs),
      turnAt: admission.turnAt,
      turnCalls: admission.turnCalls,
      // Whole only when no earlier run did part of its work.
      turnWhole: message.turnAt === undefined || message.turnWhole === true,
      turnKind: kind,
    },
  );
}
