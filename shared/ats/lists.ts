import * as v from 'valibot';
import { AtsError, ATS_ERROR_CODES } from './errors';

/** Pages a lookup follows before it stops and says so: a list this long is not what the connector expects. */
export const MAX_LIST_PAGES = 20;

/** A list in an answer or a webhook whose items `item` can read are kept: one bad item never refuses the rest. */
export const lenientArray = <T>(item: v.GenericSchema<unknown, T>) =>
  v.pipe(
    v.array(v.unknown()),
    v.transform((items): T[] => validItems(items, item)),
  );

/** The items of a list that `schema` can read; one bad item never refuses its page. */
export function validItems<T>(items: readonly unknown[], schema: v.GenericSchema<unknown, T>): T[] {
  const valid: T[] = [];
  for (const item of items) {
    const parsed = v.safeParse(schema, item);
    if (parsed.success) valid.push(parsed.output);
  }
  return valid;
}

/**
 * Walks a paged list (`cursor` undefined for the first page) until `found` returns a value or the pages end.
 * Past `maxPages` it fails loudly, for good, rather than answer "not there" from a list it did not finish.
 */
export async function searchPages<P, R>(
  fetchPage: (cursor: string | undefined) => Promise<{ page: P; next: string | undefined }>,
  found: (page: P) => R | undefined,
  what: string,
  maxPages = MAX_LIST_PAGES,
): Promise<R | undefined> {
  let cursor: string | undefined;
  for (let pages = 1; ; pages++) {
    const { page, next } = await fetchPage(cursor);
    const hit = found(page);
    if (hit !== undefined) return hit;
    if (!next) return undefined;
    if (pages >= maxPages)
      throw new AtsError(ATS_ERROR_CODES.malformedResponse, `${what}: more than ${maxPages} pages; not read further`);
    cursor = next;
  }
}

/** The first `limit` items of a list, each mapped by `each`: pages are read until there are enough. */
export async function firstItems<T, R>(
  fetchPage: (cursor: string | undefined) => Promise<{ page: T[]; next: string | undefined }>,
  limit: number,
  each: (item: T) => R,
  what: string,
): Promise<R[]> {
  const items: R[] = [];
  await searchPages(
    fetchPage,
    (page) => {
      items.push(...page.map(each));
      return items.length >= limit ? true : undefined;
    },
    what,
  );
  return items.slice(0, limit);
}

/** A cursor of the connector's own (a position over several lists): opaque text, read back by `readCursor`. */
export function writeCursor(position: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function readCursor<T extends Record<string, unknown>>(cursor: string | undefined, fallback: T): T {
  if (!cursor) return fallback;
  try {
    return { ...fallback, ...(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as T) };
  } catch {
    return fallback;
  }
}
