import { PAGINATION } from './constants';
import { PageLimitExceededError } from './errors';

export interface ListAllOptions {
  pageSize?: number;
  maxPages?: number;
  /** Called after each page, for a progress line on long listings. */
  onPage?: (event: { page: number; items: number; total: number }) => void;
}

/**
 * Pages from 1 until a page shorter than `pageSize` (or empty): the service returns no total and no
 * has_more (facts "Behaviour"). Past `maxPages` it throws rather than return a list it knows is cut short.
 */
export async function listAll<T>(
  fetchPage: (page: number, limit: number) => Promise<T[]>,
  options: ListAllOptions = {},
): Promise<T[]> {
  const pageSize = options.pageSize ?? PAGINATION.pageSize;
  const maxPages = options.maxPages ?? PAGINATION.maxPages;
  const items: T[] = [];
  for (let page = 1; page <= maxPages; page++) {
    const batch = await fetchPage(page, pageSize);
    items.push(...batch);
    options.onPage?.({ page, items: batch.length, total: items.length });
    if (batch.length < pageSize) return items;
  }
  throw new PageLimitExceededError(maxPages);
}
