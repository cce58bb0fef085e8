/**
 * Key schema of the mapping tables, shared by the store, the CDK stack and the local table creation, so the
 * three never drift.
 */
export const MAPPING_TABLES = {
  jobs: { partitionKey: 'pk' },
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
  },
  events: { partitionKey: 'pk' },
  /** Epoch seconds; DynamoDB TTL deletes the record after it. */
  ttlAttribute: 'expiresAt',
} as const;

export const RETENTION_DEFAULTS = {
  /** Applications hold a candidate e-mail: kept for the hiring cycle, then deleted by TTL. */
  applicationDays: 180,
  /** Delivery de-duplication and parked reports. */
  eventDays: 30,
} as const;

/** listJobs and the reconciler's queries stop here rather than page forever. */
export const MAX_QUERY_PAGES = 50;
