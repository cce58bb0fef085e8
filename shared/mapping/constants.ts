/**
 * Key schema of the mapping tables, shared by the store, the CDK stack and the local table creation, so the
 * three never drift.
 */
export const MAPPING_TABLES = {
  jobs: {
    partitionKey: 'pk',
    /** A connection's jobs, for the reconciler and the follow-ups: read per connection, never by a table scan. */
    connectionIndex: { name: 'byConnection', partitionKey: 'connectionId' },
  },
  applications: {
    partitionKey: 'pk',
    sortKey: 'sk',
    /** Finds the application a report belongs to: interview id + normalised candidate e-mail. */
    interviewIndex: { name: 'byInterview', partitionKey: 'interviewId', sortKey: 'candidateEmail' },
    /** Every application of one ATS candidate, for purges: `connectionId#atsCandidateId`. */
    candidateIndex: { name: 'byCandidate', partitionKey: 'candidateKey' },
    /**
     * Per-candidate invitations: the service's own candidate id of the invitation, `interviewId#candidateId`,
     * which its report carries. Matches a report exactly, whatever e-mail the candidate typed.
     */
    serviceCandidateIndex: { name: 'byServiceCandidate', partitionKey: 'serviceCandidateKey' },
    /**
     * A connection's applications in one state, keys only: what the reconciler's follow-ups and its look for missed
     * reports read (the invitations still open), never every application of every job.
     */
    stateIndex: { name: 'byConnectionState', partitionKey: 'connectionId', sortKey: 'state' },
  },
  events: { partitionKey: 'pk' },
  orders: {
    partitionKey: 'pk',
    /** Finds the order a report belongs to: the ordered test's interview id + normalised candidate e-mail. */
    interviewIndex: { name: 'byInterview', partitionKey: 'interviewId', sortKey: 'candidateEmail' },
    /**
     * A connection's orders with work left (`hasWorkLeft`), oldest first: `workConnectionId` is set while work
     * remains and removed when none does, so the index holds only those.
     */
    workIndex: { name: 'withWork', partitionKey: 'workConnectionId', sortKey: 'createdAt' },
    /**
     * A candidate's orders (`<connection>#<ATS candidate id>`, where the ATS named the candidate), keys only: what a
     * purge of the candidate deletes.
     */
    candidateIndex: { name: 'byCandidate', partitionKey: 'candidateKey' },
  },
  /** One item per connection (shared/mapping/connections.records.ts): every function reads the one it serves. */
  connections: { partitionKey: 'id' },
  /** Every change to a connection, newest last: who, what and when. */
  connectionAudit: { partitionKey: 'connectionId', sortKey: 'at' },
  /**
   * What the console shows of the pipeline (shared/mapping/activity.records.ts): `day#<connection>` × day,
   * `app#<connection>#<application>` × time, `doctor#<connection>`, `link#<token hash>`.
   */
  activity: { partitionKey: 'pk', sortKey: 'sk' },
  /** Epoch seconds; DynamoDB TTL deletes the record after it. */
  ttlAttribute: 'expiresAt',
} as const;

export const RETENTION_DEFAULTS = {
  /** Applications hold a candidate e-mail: kept for the hiring cycle, then deleted by TTL. */
  applicationDays: 180,
  /** Delivery de-duplication and parked reports. */
  eventDays: 30,
} as const;

/**
 * A Query or Scan reads at most this many pages (DynamoDB's pages are up to 1 MB each) and then fails, naming what
 * it was reading, rather than page forever or answer from a list it did not finish.
 */
export const MAX_QUERY_PAGES = 1000;
