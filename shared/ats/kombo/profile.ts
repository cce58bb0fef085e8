import { stepCosts, type VendorProfile } from '../profile';

/**
 * Kombo's unified ATS API, as the connector meets it for one integration (ats-routes.json `ats.kombo`): calls are
 * limited by how many writes are in flight at once per integration, not by a window; reads of the synced models are
 * exempt. Every write is first checked against the integration's capability table (one read, kept 5 minutes).
 */
export const komboProfile = {
  kind: 'kombo',
  rate: {
    counted: 'concurrency',
    inFlight: 30,
    source:
      'ats-routes.json ats.kombo.rateLimit ("more than 30 unified actions in flight per integration -> 429 ' +
      'PLATFORM.CONCURRENCY_LIMIT_EXCEEDED"; reads of synced models exempt); ' +
      'docs.kombo.dev/ats/guides/concurrency-limiting',
  },
  throttled: {
    retryAfter: false,
    backOffFromMs: 1_000,
    body: '{status: "error", error: {code: "PLATFORM.CONCURRENCY_LIMIT_EXCEEDED"}}',
    source: 'ats-routes.json ats.kombo.rateLimit ("Concurrency-Remaining response header, back off from ~1 s")',
  },
  errors: {
    body: '{status: "error", error: {code, title, message}}',
    inSuccess: false,
    source: 'ats-routes.json ats.kombo.rateLimit (error codes: branch on the code, not the message) [sdk]',
  },
  paging: {
    style: 'cursor-in-body',
    maxPageSize: 250,
    source: 'ats-routes.json ats.kombo.routes GET /ats/applications (cursor, page_size; data.next)',
  },
  signature: {
    header: 'X-Kombo-Signature',
    format: '<digest>',
    signs: 'raw-body',
    encoding: 'base64url',
    source:
      'ats-routes.json ats.kombo.webhooks[].signature ("X-Kombo-Signature"; base64url HMAC-SHA256 of the body per ' +
      'one implementation, unconfirmed)',
  },
  files: {
    on: 'application',
    maxBytes: 10 * 1024 * 1024,
    calls: 1,
    source:
      'ats-routes.json ats.kombo.routes POST /ats/applications/{application_id}/attachments ("keep an ' +
      'application\'s files under 10 MB"; on the candidate where the ATS keeps files there) and GET …/attachments',
  },
  // Each step's calls (invitation, writeBack, writeBackMove, reminder, expiry, exit, sweepPage) + what tags add.
  ...stepCosts('2 + 2', '1 + 2', '2 + 2', '1 + 0', '2 + 2', '1 + 2', '1 + 0'),
} as const satisfies VendorProfile;
