import { stepCosts, type VendorProfile } from '../profile';

/** Workable's SPI v3, as the connector meets it with an account token (ats-routes.json `ats.workable`). */
export const workableProfile = {
  kind: 'workable',
  rate: {
    counted: 'window-from-first-call',
    requests: 10,
    windowMs: 10_000,
    source:
      'ats-routes.json ats.workable.rateLimit ("account tokens 10 requests / 10 s"; OAuth and partner tokens ' +
      '50 / 10 s, set with atsRateLimit); workable.readme.io/reference/rate-limits',
  },
  rateHeaders: {
    limit: 'X-Rate-Limit-Limit',
    remaining: 'X-Rate-Limit-Remaining',
    reset: 'X-Rate-Limit-Reset',
    source:
      'ats-routes.json ats.workable.rateLimit (X-Rate-Limit-Limit, X-Rate-Limit-Remaining, X-Rate-Limit-Reset: ' +
      '"timestamp of next interval")',
  },
  throttled: {
    retryAfter: false,
    body: '{error}',
    source: 'ats-routes.json ats.workable.rateLimit ("no Retry-After")',
  },
  errors: {
    body: '{error}',
    inSuccess: false,
    source: 'workable.readme.io/reference (error answers)',
  },
  paging: {
    style: 'next-url-in-body',
    maxPageSize: 100,
    source: 'ats-routes.json ats.workable.routes[].paging ("paging.next is a full URL to follow verbatim")',
  },
  signature: {
    header: 'X-Workable-Signature',
    format: '<digest>',
    signs: 'raw-body',
    encoding: 'hex-or-base64',
    source: 'ats-routes.json ats.workable.webhooks[].signature ("X-Workable-Signature"; hex vs base64 not stated)',
  },
  files: {
    on: 'candidate',
    maxBytes: undefined,
    calls: 0,
    onNote: true,
    source:
      'ats-routes.json ats.workable.routes POST /spi/v3/candidates/{id}/comments (comment.attachment {name, data}, ' +
      "one per comment, so the report note's comment carries the file; no size stated) and GET " +
      '/spi/v3/candidates/{id}/activities?actions=comment (the list a retry reads first)',
  },
  // Each step's calls (invitation, writeBack, writeBackMove, reminder, expiry, exit, sweepPage) + what tags add.
  ...stepCosts('1 + 2', '1 + 2', '4 + 1', '1 + 0', '2 + 2', '1 + 1', '2 + 0'),
} as const satisfies VendorProfile;
