import { stepCosts, type VendorProfile } from '../profile';

/** Lever's API, as the connector meets it (ats-routes.json `ats.lever`; ats-facts, Corrections 2026-11). */
export const leverProfile = {
  kind: 'lever',
  rate: {
    counted: 'token-bucket',
    requests: 10,
    windowMs: 1_000,
    burst: 20,
    source: 'ats-routes.json ats.lever.rateLimit ("about 10 requests/s per key with bursts to 20")',
  },
  throttled: {
    retryAfter: false,
    body: '{code: "TooManyRequests", message}',
    source: 'ats-routes.json ats.lever.rateLimit ("429 without Retry-After or rate headers")',
  },
  errors: {
    body: '{code, message}',
    inSuccess: false,
    source: 'hire.lever.co developer documentation, "Errors"',
  },
  paging: {
    style: 'offset-token',
    maxPageSize: 100,
    source:
      'ats-routes.json ats.lever.routes[].paging ("limit 1-100; answer {data, hasNext, next}; pass next back as ' +
      'offset")',
  },
  signature: {
    header: undefined,
    format: '<digest>',
    signs: 'token+triggeredAt',
    encoding: 'hex',
    source: 'ats-routes.json ats.lever.webhooks[].signature ("hex HMAC-SHA256(signatureToken, token + triggeredAt)")',
  },
  files: {
    on: 'application',
    maxBytes: 30 * 1_048_576,
    calls: 1,
    source:
      'ats-routes.json ats.lever.routes POST /v1/opportunities/{id}/files (multipart, 30 MB [3p]) and GET ' +
      '/v1/opportunities/{id}/files (the list a retry reads first)',
  },
  // Each step's calls (invitation, writeBack, writeBackMove, reminder, expiry, exit, sweepPage) + what tags add.
  ...stepCosts('2 + 2', '2 + 2', '5 + 2', '1 + 0', '2 + 2', '1 + 2', '1 + 0'),
} as const satisfies VendorProfile;
