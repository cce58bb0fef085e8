/** An hour and a day, in milliseconds. */
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** One place for the timing that the CDK stack, the local event source and the leases must agree on. */
export const WORKER_TIMING = {
  /** Lambda timeout of the SQS workers. */
  workerTimeoutSeconds: 60,
  /** SQS visibility timeout = 6 × the worker timeout (AWS: "Using Lambda with Amazon SQS", visibility timeout). */
  visibilityTimeoutMultiplier: 6,
  /**
   * Each worker's event source gathers a batch that is not full for up to this long before the worker runs (its
   * maximum batching window): a burst's messages fill their batches, and a report's write-back starts within a second
   * on a quiet queue. A message going back for its turn comes back early enough for it (shared/pacing/turn.ts).
   */
  batchingWindowSeconds: { invite: 1, writeback: 1 },
  /** A claim outlives one invocation, never the visibility timeout: a retry after a crash finds it expired. */
  applicationLeaseMs: 60_000,
  /**
   * How long past a worker's deadline its claim still holds: a write it sent just before the deadline may land at the
   * ATS after it (a server goes on with a request whose client went away), and the next holder trusts its lookup (a
   * note by its marker) only once that write has had time to land. The chaos run's slow answers land 1 s late.
   */
  inFlightSettleMs: 5_000,
  jobLeaseMs: 60_000,
  /** Workers that lose the race to create an interview poll for it this long, then let SQS retry. */
  jobWaitMs: 15_000,
  jobPollMs: 200,
  /** A worker that finds a claim held by another polls it this long before asking SQS to retry. */
  heldClaimWaitMs: 5_000,
  /**
   * Deliveries go from SQS to the DLQ after this many receives. A stage change is now up to five side effects
   * (the service's invitation, the e-mail, the note, the status; each may be cut by a deadline or a 5xx and
   * resumed), so a message gets eight tries, at 6 minutes apart about 48 minutes, before it needs an operator.
   */
  maxReceiveCount: 8,
  /**
   * A message whose outside API asked to wait (429, a claim held by another worker) is sent again with a delay
   * this many times at most, without counting toward maxReceiveCount; after that SQS's own retries take over.
   */
  maxDeferrals: 10,
  /** The wait when a rate limit gives no Retry-After or reset time. */
  defaultRateLimitWaitMs: 10_000,
  /**
   * The reconciler pages the reports of interviews with open applications, or whose job or failed invitation changed
   * this recently: a report arrives minutes after an interview, so older quiet interviews need no more looking.
   */
  reconcileWindowMs: 14 * 86_400_000,
  /**
   * A write-back claimed this lately is taken as under way by the reconciler (its message may be waiting for the
   * ATS's window); one older is enqueued again, in case its message was lost.
   */
  writeBackUnderWayMs: 15 * 60_000,
  /**
   * A report or stage change enqueued this lately (by its webhook, the reconciler or the sweep) is taken as pending
   * and not enqueued again: longer than a queue takes to drain a burst paced to an ATS's rate limit, and three of the
   * reconciler's 10-minute runs, so a message that was lost after all is enqueued again by the run after it.
   */
  enqueueGraceMs: 30 * 60_000,
  /**
   * A report file that could not be read or uploaded (no answer, a 5xx) is tried on this many receives, then given up
   * with a note saying so: the move and the status wait for it no longer.
   */
  reportFileReceives: 4,
  /**
   * A report the service does not answer for (no answer, a 5xx) this many receives is told in the ATS as not there
   * yet, and its candidate is reminded no more; a refusal (401, 403) is told at once. Its message keeps its tries.
   */
  reportUnreadableReceives: 4,
  /**
   * A message of a disabled connection goes back on its queue for this long (`PARKED_RECHECK_SECONDS` overrides it),
   * not counted as a deferral: parked there, never lost, until the connection is enabled again.
   */
  parkedRecheckSeconds: 300,
  /** A report the API does not show yet is retried this many receives, then parked as unmatched. */
  reportNotFoundReceives: 3,
} as const;

export const visibilityTimeoutSeconds = (): number =>
  WORKER_TIMING.workerTimeoutSeconds * WORKER_TIMING.visibilityTimeoutMultiplier;
