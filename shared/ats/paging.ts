import * as v from 'valibot';
import type { AtsHttpClient, AtsRequest } from './ats-http';
import { validItems } from './lists';
import type { VendorProfile } from './profile';

/** How a vendor's lists page, as its profile declares it (`paging.style`). */
export type PagingStyle = VendorProfile['paging']['style'];

/** A list as an adapter names it: what only the list itself can say, its paging being its vendor's. */
export interface PagedList {
  /** The request for the first page; a later page is asked for as the style says. */
  first: AtsRequest;
  /** The body's field holding the items, where the style leaves it to each list (Workable's `jobs`, `members`). */
  items?: string;
}

/** One page of a list: its items, each still to be read by the list's own schema, and the next page's token. */
export interface ListPage {
  items: unknown[];
  /** The token, URL or cursor the style passes back for the next page; undefined after the last page. */
  next: string | undefined;
}

/**
 * Lever's `next` token may come back percent-encoded already: it is passed on as given (ats-facts, Corrections
 * 2026-11b), only a character that would end the parameter (`&`, `#`, a space, `+`) encoded.
 */
const asGivenToken = (token: string): string => token.replace(/[^A-Za-z0-9%._~=/-]/g, encodeURIComponent);

/** The `rel="next"` target of an RFC 8288 `Link` header (Greenhouse v3 pages by it alone). */
export function linkNext(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(',')) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match && /(^|;)\s*rel\s*=\s*"?next"?\s*(;|$)/i.test(match[2] as string)) return match[1];
  }
  return undefined;
}

/** A page's body as the style frames it, read down to its items and the next page's token where the body has it. */
type PageBody = v.GenericSchema<unknown, { items: unknown[]; next?: string | null | undefined }>;

/** Workable's `paging`: the next page's whole URL, absent or null on the last page. */
const nextUrlSchema = v.nullish(v.object({ next: v.nullish(v.string()) }));

/**
 * Each style's page, as the profiles' `paging.source` quote it: a bare array with the next page in the `Link` header;
 * `{data, hasNext, next}`; `{<items>, paging: {next}}`; `{results, moreDataAvailable, nextCursor}`.
 */
const PAGE_BODIES: Record<PagingStyle, (items: string) => PageBody> = {
  'link-header': () =>
    v.pipe(
      v.array(v.unknown()),
      v.transform((items) => ({ items })),
    ),
  'offset-token': () =>
    v.pipe(
      v.object({ data: v.array(v.unknown()), hasNext: v.optional(v.boolean(), false), next: v.nullish(v.string()) }),
      v.transform((page) => ({ items: page.data, next: page.hasNext ? page.next : undefined })),
    ),
  'next-url-in-body': (items) =>
    v.pipe(
      v.object({ [items]: v.array(v.unknown()), paging: nextUrlSchema }),
      v.transform((page) => ({
        items: page[items] as unknown[],
        next: (page.paging as v.InferOutput<typeof nextUrlSchema>)?.next,
      })),
    ),
  'cursor-in-body': () =>
    v.pipe(
      v.object({
        results: v.array(v.unknown()),
        moreDataAvailable: v.optional(v.boolean(), false),
        nextCursor: v.nullish(v.string()),
      }),
      v.transform((page) => ({ items: page.results, next: page.moreDataAvailable ? page.nextCursor : undefined })),
    ),
};

/** The request for the page `next` names: the first one while there is none. */
export function nextPageRequest(style: PagingStyle, first: AtsRequest, next: string | undefined): AtsRequest {
  if (!next) return first;
  switch (style) {
    case 'link-header':
    case 'next-url-in-body':
      // A whole URL, followed as given (the client keeps it to the ATS's own origin).
      return { ...first, path: next };
    case 'offset-token':
      return { ...first, path: `${first.path}${first.path.includes('?') ? '&' : '?'}offset=${asGivenToken(next)}` };
    case 'cursor-in-body':
      return { ...first, body: { ...(first.body as object), cursor: next } };
  }
}

/**
 * The one pager every adapter's lists share: it asks for a page as the vendor's paging style says and reads the
 * answer (its body, and its headers for a `Link`) into the items and the next page's token.
 */
export class Pager {
  public constructor(
    private readonly http: AtsHttpClient,
    private readonly style: PagingStyle,
  ) {}

  /** One page of `list`: the first (`next` undefined) or the one `next` names. */
  public async page(list: PagedList, next: string | undefined): Promise<ListPage> {
    const request = nextPageRequest(this.style, list.first, next);
    const { body, headers } = await this.http.answer(request, PAGE_BODIES[this.style](list.items ?? 'items'));
    const following = this.style === 'link-header' ? linkNext(headers.get('link')) : body.next;
    return { items: body.items, next: following ?? undefined };
  }

  /** A list's pages as `searchPages` and `firstItems` walk them, each item read by `item` (a bad one left out). */
  public pages<T>(list: PagedList, item: v.GenericSchema<unknown, T>) {
    return async (next: string | undefined): Promise<{ page: T[]; next: string | undefined }> => {
      const page = await this.page(list, next);
      return { page: validItems(page.items, item), next: page.next };
    };
  }
}
