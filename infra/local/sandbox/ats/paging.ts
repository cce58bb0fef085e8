import type { VendorProfile } from '../../../../shared/ats/profile';

/** A vendor's paging, as its profile declares it: the style and the largest page. */
type Paging = VendorProfile['paging'];
/** A page size as asked (`raw`), within 1 and the vendor's largest page; `fallback` when absent or unreadable. */
const pageLimit = (paging: Paging, raw: unknown, fallback: number = paging.maxPageSize) =>
  Math.min(paging.maxPageSize, Math.max(1, Number(raw ?? fallback) || fallback));

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A page from the offset the last one handed out: Ashby's `{results, moreDataAvailable, nextCursor}`, Lever's. */
export function bodyPage<T>(
  paging: Paging,
  all: readonly T[],
  asked: { limit: unknown; token: unknown },
  show = (item: T): unknown => item,
) {
  const limit = pageLimit(paging, asked.limit);
  const offset = Number(Buffer.from(String(asked.token ?? ''), 'base64url').toString()) || 0;
  const items = all.slice(offset, offset + limit).map(show);
  const next = offset + limit < all.length ? encode(offset + limit) : undefined;
  if (paging.style === 'cursor-in-body')
    return { results: items, moreDataAvailable: next !== undefined, ...(next ? { nextCursor: next } : {}) };
  return { data: items, hasNext: next !== undefined, ...(next ? { next } : {}) };
}

/** A page whose next is a whole URL in the body (Workable's `paging.next`), after `since_id` (or `max_id`). */
export function nextUrlPage<T extends { id: string }>(
  paging: Paging,
  url: URL,
  list: { key: string; all: readonly T[]; after?: 'since_id' | 'max_id'; defaultLimit: number },
  show: (item: T) => unknown,
): Record<string, unknown> {
  const after = list.after ?? 'since_id';
  const limit = pageLimit(paging, url.searchParams.get('limit') ?? undefined, list.defaultLimit);
  const since = url.searchParams.get(after);
  const start = since === null ? 0 : list.all.findIndex((item) => item.id === since) + 1;
  const items = list.all.slice(start, start + limit);
  const next = new URL(url.toString());
  next.searchParams.set('limit', String(limit));
  const last = items.at(-1);
  if (last) next.searchParams.set(after, last.id);
  const more = start + limit < list.all.length;
  return { [list.key]: items.map(show), ...(more ? { paging: { next: next.toString() } } : {}) };
}

/** Where a link-header page starts: the query its first page was asked with, and the offset. */
export type LinkCursor = { query: URLSearchParams; offset: number };
/** A cursor this sandbox handed out in a Link header, or undefined for one it did not. */
export function readLinkCursor(cursor: string): LinkCursor | undefined {
  try {
    const { q, o } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { q: string; o: number };
    return { query: new URLSearchParams(q), offset: Number(o) };
  } catch {
    return undefined;
  }
}

/** Link-header paging (Greenhouse): the page, and `Link: <…?cursor=…>; rel="next"` while there is more. */
export function linkPage<T>(all: readonly T[], at: LinkCursor & { perPage: number; route: string }) {
  const end = at.offset + at.perPage;
  const headers: Record<string, string> = {};
  if (end < all.length) headers.link = `<${at.route}?cursor=${encode({ q: at.query.toString(), o: end })}>; rel="next"`;
  return { items: all.slice(at.offset, end), headers };
}
