import { stepCosts, type VendorProfile } from '../profile';

/** Ashby's RPC API, as the connector meets it (ats-routes.json `ats.ashby`). */
export const ashbyProfile = {
  kind: 'ashby',
  rate: {
    counted: 'unpublished',
    source:
      'ats-routes.json ats.ashby.rateLimit ("no general limit published"; report.* 15 per minute, a route the ' +
      'connector never calls): paced only where a connection sets atsRateLimit',
  },
  throttled: {
    retryAfter: true,
    body: '{success: false, errors: ["rate_limit_exceeded"]}',
    source: 'Ashby OpenAPI 429 schema, as ats-routes.json ats.ashby.rateLimit cites it',
  },
  errors: {
    body: '{success: false, errors, errorInfo: {code, message}}',
    inSuccess: true,
    source:
      'ats-routes.json ats.ashby.rateLimit ("refusals often arrive as HTTP 200 {success:false, errors, errorInfo}"); ' +
      'test/contract/ats/fixtures/ashby-error-in-200.json',
  },
  paging: {
    style: 'cursor-in-body',
    maxPageSize: 100,
    source:
      'ats-routes.json ats.ashby.routes[].paging ("body {cursor, limit}; answer {results, moreDataAvailable, ' +
      'nextCursor}")',
  },
  signature: {
    header: 'Ashby-Signature',
    format: 'sha256=<digest>',
    signs: 'raw-body',
    encoding: 'hex',
    source: 'ats-routes.json ats.ashby.webhooks[].signature ("Ashby-Signature: sha256=<hex>")',
  },
  files: {
    on: 'candidate',
    maxBytes: undefined,
    calls: 2,
    source:
      'ats-routes.json ats.ashby.routes file.createFileUploadHandle + candidate.uploadFile (files are the ' +
      "candidate's; no size stated; the bytes go to the handle's storage URL, not the API) and candidate.info " +
      'fileHandles (the list a retry reads first)',
  },
  // Each step's calls (invitation, writeBack, writeBackMove, reminder, expiry, exit, sweepPage) + what tags add.
  ...stepCosts('1 + 2', '1 + 3', '4 + 3', '1 + 0', '2 + 3', '1 + 3', '1 + 0'),
} as const satisfies VendorProfile;
