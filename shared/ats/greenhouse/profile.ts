import type { VendorProfile } from '../profile';

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
  stepCalls: { invitation: 1, writeBack: 1, writeBackMove: 4, reminder: 1, expiry: 3, exit: 1, sweepPage: 6 },
  statusTagCalls: { invitation: 2, writeBack: 3, writeBackMove: 3, reminder: 0, expiry: 3, exit: 3, sweepPage: 0 },
} as const satisfies VendorProfile;
