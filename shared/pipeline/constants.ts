/** One place for the timing that the CDK stack, the local event source and the leases must agree on. */
export const WORKER_TIMING = {
  /** Lambda timeout of the SQS workers. */
  workerTimeoutSeconds: 60,
  /** SQS visibility timeout = 6 × the worker timeout (AWS: "Using Lambda with Amazon SQS", visibility timeout). */
  visibilityTimeoutMultiplier: 6,
  /**
   * Each worker's event source gathers a batch that is not full for up to this long before the worker runs (its
   * maximum batching window). A burst's stage changes come all at once and fill their batches. The reports come one at
   * a time as invitations go out (about 2 a second at Greenhouse's 50 per 10 s), and most go back for a later turn:
   * with 1 s, each batch of two to six cost two receives, a send back and a delete (Greenhouse 50 per 10 s, 5 + 5
   * environments: 4.17 to 4.31 SQS requests per candidate); with 5 s, 3.73 and 3.79 (docs/benchmark.md). A
   * report's write-back starts up to 5 s later on a quiet queue (on AWS, a queue with very little traffic may wait up
   * to 20 s whatever the window, as Lambda's SQS documentation says), which no recruiter waits on. The pacer sends
   * messages back for their turns early enough for the window (`BATCHING_WINDOW_SECONDS`, shared/ats/pacer.ts).
   */
  batchingWindowSeconds: { invite: 1, writeback: 5 },
  /**
   * A report's webhook puts it on the queue out of sight until the next multiple of this many seconds on the clock
   * (`gatherDelaySeconds`), so the reports of a busy connection reach the write-back worker together, a batch at a
   * time, where they came one or two to a batch: each batch costs two receives, a delete and, in a burst paced to an
   * ATS's rate, the send that puts its reports back for their turns. A report's write-back starts up to this much
   * later on a quiet connection; no recruiter waits on it to the second, and Lambda's SQS documentation already
   * allows a quiet queue 20 s. Figures: docs/benchmark.md.
   */
  reportGatherSeconds: 20,
  /** A claim outlives one invocation, never the visibility timeout: a retry after a crash finds it expired. */
  applicationLeaseMs: 60_000,
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
   * The reconciler pages the reports of interviews with open applications, or with any activity this recent:
   * a report arrives minutes after an interview, so older quiet interviews need no more looking.
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
  /** A report the API does not show yet is retried this many receives, then parked as unmatched. */
  reportNotFoundReceives: 3,
} as const;

export const visibilityTimeoutSeconds = (): number =>
  WORKER_TIMING.workerTimeoutSeconds * WORKER_TIMING.visibilityTimeoutMultiplier;
