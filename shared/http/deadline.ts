const DEADLINE_AT = Symbol('deadlineAt');
const DEADLINE_SPAN = Symbol('deadlineSpan');

type DeadlineSignal = AbortSignal & { [DEADLINE_AT]?: number; [DEADLINE_SPAN]?: number };

/**
 * A signal that aborts after `ms` and remembers the wall-clock time it stands for. Its timer fires only when the
 * event loop gets to it: a process starved of CPU may run on past the deadline with the signal not yet aborted,
 * and `deadlinePassed` still tells.
 */
export function deadlineAfter(ms: number, now: () => number = Date.now): AbortSignal {
  return Object.assign(AbortSignal.timeout(ms), { [DEADLINE_AT]: now() + ms, [DEADLINE_SPAN]: ms });
}

/** The whole time the signal was given when it was made; infinite for a signal that carries no time (or none). */
export function deadlineSpanMs(signal: AbortSignal | undefined): number {
  return (signal as DeadlineSignal | undefined)?.[DEADLINE_SPAN] ?? Number.POSITIVE_INFINITY;
}

/**
 * Whether the signal aborted or its deadline's time has come. Checked before a request is sent: a request sent
 * past the worker's deadline may land after its claim ran out and another worker took the work over.
 */
export function deadlinePassed(signal: AbortSignal | undefined, now: () => number = Date.now): boolean {
  return timeLeftMs(signal, now) <= 0;
}

/** How long until the signal's deadline, by the clock; infinite for a signal that carries no time (or none). */
export function timeLeftMs(signal: AbortSignal | undefined, now: () => number = Date.now): number {
  if (signal?.aborted) return 0;
  const at = signal ? (signal as DeadlineSignal)[DEADLINE_AT] : undefined;
  return at === undefined ? Number.POSITIVE_INFINITY : Math.max(0, at - now());
}
