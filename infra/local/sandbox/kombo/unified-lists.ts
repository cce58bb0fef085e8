import type { UnifiedApplication, UnifiedIntegration } from './unified-records';

/**
 * Kombo's refusals and its list reads: `{status: 'error', error: {code, title, message, log_url}}` with the SDK's
 * codes (kombohq/typescript-sdk @1dc00a9 src/models/komboatserror.ts), and the filters and cursor paging every
 * synced model shares (src/models/operations/getats*.ts: comma-separated lists, `page_size` up to 250).
 */
/** A refusal as Kombo answers it. */
export class KomboRefusal extends Error {
  public constructor(
    public readonly status: number,
    public readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'KomboRefusal';
  }
}
export const invalid = (message: string) => new KomboRefusal(400, 'PLATFORM.INPUT_INVALID', message);
export const komboError = (code: string, message: string) => ({
  status: 'error',
  error: { code, title: null, message, log_url: null },
});

export const list = (url: URL, name: string) => url.searchParams.get(name)?.split(',').filter(Boolean);

/** A page of a synced model: filters common to every list, then `cursor` (an offset) and `page_size` (≤ 250). */
export function page<T extends { id: string; remote_id: string; updatedAt: string; deletedAt: string | null }>(
  url: URL,
  all: T[],
  show: (item: T) => unknown,
) {
  const size = Number(url.searchParams.get('page_size') ?? 100);
  if (!Number.isInteger(size) || size < 1 || size > 250) throw invalid('page_size: an integer from 1 to 250');
  const after = url.searchParams.get('updated_after');
  if (after !== null && Number.isNaN(Date.parse(after))) throw invalid('updated_after: YYYY-MM-DDTHH:mm:ss.sssZ');
  const cursor = url.searchParams.get('cursor');
  const start = cursor === null ? 0 : Number(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!Number.isInteger(start) || start < 0) throw invalid('cursor: not one this API handed out');
  const [ids, remoteIds] = [list(url, 'ids'), list(url, 'remote_ids')];
  const deleted = url.searchParams.get('include_deleted') === 'true';
  // "updated since": strictly after, the less forgiving reading (inclusive or not is unconfirmed).
  const matching = all.filter(
    (item) =>
      (!ids || ids.includes(item.id)) &&
      (!remoteIds || remoteIds.includes(item.remote_id)) &&
      (deleted || item.deletedAt === null) &&
      (after === null || Date.parse(item.updatedAt) > Date.parse(after)),
  );
  const end = start + size;
  const next = end < matching.length ? Buffer.from(String(end)).toString('base64url') : null;
  return { next, results: matching.slice(start, end).map(show) };
}

export const applicationFilter = (url: URL, integration: UnifiedIntegration) => {
  const [outcomes, jobs, jobRemotes, stages] = ['outcomes', 'job_ids', 'job_remote_ids', 'current_stage_ids'].map(
    (name) => list(url, name),
  );
  if (outcomes?.some((o) => !['PENDING', 'HIRED', 'DECLINED'].includes(o)))
    throw invalid('outcomes: PENDING, HIRED or DECLINED');
  const createdAfter = url.searchParams.get('remote_created_after');
  const remoteJob = (a: UnifiedApplication) => integration.jobs.find((j) => j.id === a.job_id)?.remote_id ?? '';
  return (a: UnifiedApplication) =>
    (!outcomes || outcomes.includes(a.outcome)) &&
    (!jobs || jobs.includes(a.job_id)) &&
    (!jobRemotes || jobRemotes.includes(remoteJob(a))) &&
    (!stages || stages.includes(a.current_stage_id)) &&
    (!createdAfter || a.createdAt >= createdAfter);
};

export const text = (value: unknown, what: string, max = 100_000) => {
  if (typeof value !== 'string' || !value.trim() || value.length > max) throw invalid(`${what}: required text`);
  return value;
};
