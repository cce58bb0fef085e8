import { stepCosts, type VendorProfile } from '../profile';

/**
 * Greenhouse Harvest v3 as the connector meets it (ats-routes.json `ats.greenhouse`; ats-facts, Corrections
 * 2026-11).
 */
export const greenhouseProfile = {
  kind: 'greenhouse',
  rate: {
    counted: 'window-from-first-call',
    requests: 75,
    windowMs: 30_000,
    source:
      'ats-routes.json ats.greenhouse.rateLimit ("fixed 30-second windows, ceiling not published"); 75 the ' +
      'X-RateLimit-Limit observed (ats-facts, Corrections 2026-11)',
  },
  rateHeaders: {
    limit: 'X-RateLimit-Limit',
    remaining: 'X-RateLimit-Remaining',
    reset: 'X-RateLimit-Reset',
    source:
      'ats-routes.json ats.greenhouse.rateLimit (X-RateLimit-Remaining/X-RateLimit-Reset); X-RateLimit-Limit as ' +
      'observed (ats-facts, Corrections 2026-11)',
  },
  throttled: {
    retryAfter: true,
    body: '{message}',
    source: 'ats-routes.json ats.greenhouse.rateLimit ("429 with Retry-After")',
  },
  errors: {
    body: '{message, errors: [{message, field}]}',
    inSuccess: false,
    source:
      'developers.greenhouse.io Harvest introduction, "Errors" (test/contract/ats/fixtures/greenhouse-error-422.json)',
  },
  paging: {
    style: 'link-header',
    maxPageSize: 500,
    source: 'ats-routes.json ats.greenhouse.routes[].paging ("next page only in the Link header"); per_page 1-500',
  },
  signature: {
    header: 'Signature',
    format: 'sha256 <digest>',
    deliveryHeader: 'Greenhouse-Event-ID',
    signs: 'raw-body',
    encoding: 'hex',
    source: 'ats-routes.json ats.greenhouse.webhooks[].signature ("Signature: sha256 <hex>" over the raw body)',
  },
  files: {
    on: 'application',
    maxBytes: undefined,
    calls: 1,
    source:
      'ats-routes.json ats.greenhouse.routes POST /v3/attachments (on the application; no size documented) and ' +
      'GET /v3/attachments?application_ids= (the list a retry reads first)',
  },
  // Each step's calls (invitation, writeBack, writeBackMove, reminder, expiry, exit, sweepPage) + what tags add.
  ...stepCosts('1 + 2', '1 + 3', '4 + 3', '1 + 0', '2 + 3', '1 + 3', '6 + 0'),
} as const satisfies VendorProfile;
