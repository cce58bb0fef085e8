import type { ServerResponse } from 'node:http';
import * as v from 'valibot';
import { sendJson } from '../http-kit';
import type { SandboxFaults } from './types';

/** Request bodies of the control endpoints, and the few HTTP helpers the service's API shares. */

/** The page size when a list request names none (the spec does not say; the sandbox picks 10). */
export const DEFAULT_PAGE_SIZE = 10;
export const NO_FAULTS: SandboxFaults = {
  rate429: 0,
  rate500: 0,
  retryAfterSeconds: 1,
  latencyMs: 0,
  slowRate: 0,
  slowMs: 0,
  dropWebhookRate: 0,
  sparseReportRate: 0,
  maxPageSize: 0,
};

export const faultsSchema = v.partial(
  v.object({
    rate429: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    rate500: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    retryAfterSeconds: v.pipe(v.number(), v.integer(), v.minValue(0)),
    latencyMs: v.pipe(v.number(), v.minValue(0), v.maxValue(120_000)),
    slowRate: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    slowMs: v.pipe(v.number(), v.minValue(0), v.maxValue(120_000)),
    dropWebhookRate: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    sparseReportRate: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    maxPageSize: v.pipe(v.number(), v.integer(), v.minValue(0)),
  }),
);

/** How the file host serves one report (types.ts `ReportFile`); `bytes` only for `oversize`, 11 MiB unless said. */
export const reportFileSchema = v.object({
  file: v.picklist(['pdf', 'missing', 'oversize', 'html'], 'file must be pdf, missing, oversize or html'),
  bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(64 * 1024 * 1024))),
});

export const completionSchema = v.object({
  interview_id: v.pipe(v.string(), v.minLength(1)),
  candidate_name: v.pipe(v.string(), v.minLength(1)),
  candidate_email: v.pipe(v.string(), v.email('candidate_email must be an e-mail address')),
  /** The `cid` of a per-candidate link: the candidate takes that invitation, whatever e-mail they type. */
  candidate_id: v.optional(v.string()),
  ats_job_id: v.optional(v.string()),
  ats_job_application_id: v.optional(v.string()),
  delay_ms: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(600_000))),
  ai_match_score: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100))),
  proctoring_violations: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(20))),
  report_file: v.optional(reportFileSchema),
});

export const reportFileControlSchema = v.object({
  report_id: v.pipe(v.string(), v.minLength(1)),
  ...reportFileSchema.entries,
});

export const webhookRegistrationSchema = v.object({
  url: v.pipe(v.string(), v.url('url must be a URL')),
  event: v.optional(v.string(), 'interview_report.created'),
  api_key: v.optional(v.string()),
  description: v.optional(v.string(), ''),
});

export const bulkReportsSchema = v.object({
  interview_id: v.optional(v.string()),
  count: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(5000)),
});

export function envelope(
  response: ServerResponse,
  status: number,
  body: { status: boolean | string; message?: string; data?: unknown },
  headers?: Record<string, string>,
): void {
  sendJson(response, status, body, headers);
}

export const requestAccount = new WeakMap<object, string>();

/**
 * `page` and `limit` as plain integers. A `maxPageSize` above 0 caps what a page holds, as a service that
 * documents no maximum may: the page is then shorter than asked without being the last.
 */
export function paginate<T>(items: T[], url: URL, maxPageSize = 0): { page: T[] } | { error: string } {
  const page = url.searchParams.get('page') ?? '1';
  const limit = url.searchParams.get('limit') ?? String(DEFAULT_PAGE_SIZE);
  if (!/^[1-9]\d*$/.test(page) || !/^[1-9]\d*$/.test(limit)) return { error: INVALID_REQUEST };
  const size = maxPageSize > 0 ? Math.min(Number(limit), maxPageSize) : Number(limit);
  const start = (Number(page) - 1) * size;
  return { page: items.slice(start, start + size) };
}

/** The service's one 400 message, for every bad body and unknown id (OpenAPI: declared on every operation). */
export const INVALID_REQUEST = 'Invalid request';

export function matchesKeyword(keyword: string | null, ...fields: unknown[]): boolean {
  if (!keyword) return true;
  const needle = keyword.toLowerCase();
  return fields.some((field) => typeof field === 'string' && field.toLowerCase().includes(needle));
}
