import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { AtsHttpClient, AtsRequest } from '../../../shared/ats/ats-http';
import { linkNext, nextPageRequest, Pager, type PagingStyle } from '../../../shared/ats/paging';

/** A client that answers every request with one page, read by the schema the pager asks for, as the client does. */
function answering(body: unknown, headers: Record<string, string> = {}) {
  const sent: AtsRequest[] = [];
  const http = {
    answer: (request: AtsRequest, schema: v.GenericSchema) => {
      sent.push(request);
      return Promise.resolve({ body: v.parse(schema, body), headers: new Headers(headers) });
    },
  } as unknown as AtsHttpClient;
  return { http, sent };
}

const get = (path: string): AtsRequest => ({ method: 'GET', path });

describe('Module: paging', () => {
  it.each<[PagingStyle, unknown, Record<string, string>, string | undefined, { items: unknown[]; next?: string }]>([
    [
      'link-header',
      [{ id: 1 }],
      { link: '<https://h.test/v3/notes?cursor=b>; rel="next"' },
      undefined,
      {
        items: [{ id: 1 }],
        next: 'https://h.test/v3/notes?cursor=b',
      },
    ],
    ['link-header', [{ id: 1 }], {}, undefined, { items: [{ id: 1 }] }],
    ['offset-token', { data: [1], hasNext: true, next: '%5B1%5D' }, {}, undefined, { items: [1], next: '%5B1%5D' }],
    ['offset-token', { data: [1], hasNext: false, next: 'stale' }, {}, undefined, { items: [1] }],
    [
      'next-url-in-body',
      { jobs: [1], paging: { next: 'https://a.test/spi/v3/jobs?since_id=9' } },
      {},
      'jobs',
      {
        items: [1],
        next: 'https://a.test/spi/v3/jobs?since_id=9',
      },
    ],
    ['next-url-in-body', { jobs: [1], paging: null }, {}, 'jobs', { items: [1] }],
    [
      'cursor-in-body',
      { results: [1], moreDataAvailable: true, nextCursor: 'c2' },
      {},
      undefined,
      {
        items: [1],
        next: 'c2',
      },
    ],
    ['cursor-in-body', { results: [1], nextCursor: 'c2' }, {}, undefined, { items: [1] }],
  ])('reads a %s page into its items and the next page', async (style, body, headers, items, expected) => {
    const { http } = answering(body, headers);
    const page = await new Pager(http, style).page({ first: get('/list?limit=100'), items }, undefined);
    expect(page).toEqual({ items: expected.items, next: expected.next });
  });

  it('asks for the next page as each style says, a Lever token as it was given', () => {
    const first = get('/v1/notes?limit=100');
    expect(nextPageRequest('offset-token', first, '%5B1%2C%22a%22%5D').path).toBe(
      '/v1/notes?limit=100&offset=%5B1%2C%22a%22%5D',
    );
    expect(nextPageRequest('link-header', first, 'https://h.test/v3/notes?cursor=b').path).toBe(
      'https://h.test/v3/notes?cursor=b',
    );
    const rpc: AtsRequest = { method: 'POST', path: '/job.list', body: { limit: 100 }, readOnly: true };
    expect(nextPageRequest('cursor-in-body', rpc, 'c2')).toEqual({ ...rpc, body: { limit: 100, cursor: 'c2' } });
    expect(nextPageRequest('cursor-in-body', rpc, undefined)).toBe(rpc);
  });

  it('refuses a page whose body is not its style', async () => {
    const { http } = answering({ data: 'not a list' });
    await expect(new Pager(http, 'offset-token').page({ first: get('/v1/notes') }, undefined)).rejects.toThrow();
  });

  it('follows only the Link target named next', () => {
    expect(linkNext('<https://h.test/a>; rel="prev", <https://h.test/b>; rel="next"')).toBe('https://h.test/b');
    expect(linkNext('<https://h.test/a>; rel="prev"')).toBeUndefined();
    expect(linkNext(null)).toBeUndefined();
  });
});
