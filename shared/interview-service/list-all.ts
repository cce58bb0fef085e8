import { PAGINATION } from './constants';
import { PageLimitExceededError } from './errors';

export interface ListAllOptions {
  pageSize?: number;
  maxPages?: number;
  /** Called after each page, for a progress line on long listings. */
  onPage?: (event: { page: number; items: number; total: number }) => void;
}

/**
 * Pages from 1 until an **empty** page. The service returns no total and no has_more, and documents no maximum
 * for `limit`: a server that caps it answers a short page that is not the last (facts, Corrections). So a short
 * page proves nothing; only an empty one ends the listing. Items are de-duplicated by `idOf` (a page that shifts
 * while it is read repeats an item; a page of nothing new ends it), and past `maxPages` it throws rather than
 * return a list it knows is cut.
 */
export async function listAll<T>(
  fetchPage: (page: number, limit: number) => Promise<T[]>,
  options: ListAllOptions & { idOf?: (item: T) => string } = {},
): Promise<T[]> {
  const pageSize = options.pageSize ?? PAGINATION.pageSize;
  const maxPages = options.maxPages ?? PAGINATION.maxPages;
  const seen = new Set<string>();
  const items: T[] = [];
  for (let page = 1; page <= maxPages; page++) {
    const batch = await fetchPage(page, pageSize);
    if (batch.length === 0) return items;
    let added = 0;
    for (const item of batch) {
      const id = options.idOf?.(item);
      if (id !== undefined) {
        if (seen.has(id)) continue;
        seen.add(id);
      }
      items.push(item);
      added++;
    }
    options.onPage?.({ page, items: batch.length, total: items.length });
    // A whole page of items already seen: the server repeats itself (it ignores `page`); nothing new follows.
    if (options.idOf && added === 0) return items;
  }
  throw new PageLimitExceededError(maxPages);
}
