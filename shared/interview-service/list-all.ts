import { PAGINATION } from './constants';
import { PageLimitExceededError } from './errors';

export interface ListAllOptions {
  pageSize?: number;
  maxPages?: number;
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
  const items: T[] = [];
  for await (const { added } of eachPage(fetchPage, options)) items.push(...added);
  return items;
}

/**
 * The same listing a page at a time, from page `from` (1 unless said): each page's number and the items not seen on
 * an earlier page of this listing. A caller that stops part-way keeps what it took of the pages before.
 */
export async function* eachPage<T>(
  fetchPage: (page: number, limit: number) => Promise<T[]>,
  options: ListAllOptions & { idOf?: (item: T) => string; from?: number } = {},
): AsyncGenerator<{ page: number; added: T[] }> {
  const pageSize = options.pageSize ?? PAGINATION.pageSize;
  const maxPages = options.maxPages ?? PAGINATION.maxPages;
  const seen = new Set<string>();
  for (let page = options.from ?? 1; page <= maxPages; page++) {
    const batch = await fetchPage(page, pageSize);
    if (batch.length === 0) return;
    const added: T[] = [];
    for (const item of batch) {
      const id = options.idOf?.(item);
      if (id !== undefined) {
        if (seen.has(id)) continue;
        seen.add(id);
      }
      added.push(item);
    }
    // A whole page of items already seen: the server repeats itself (it ignores `page`); nothing new follows.
    if (options.idOf && added.length === 0) return;
    yield { page, added };
  }
  throw new PageLimitExceededError(maxPages);
}
