import { describe, expect, it } from 'vitest';
import { ReportFileUnavailableError, UnavailableError } from '../../../shared/interview-service';
import { readReportFile } from '../../../shared/interview-service/report-file';

// The report file is read bounded: its size, its type and its first bytes checked; a verdict only where the file
// host gave one, anything that did not come left retryable.
const LINK = 'https://files.example.com/reports/rep-1.pdf';
const PDF = '%PDF-1.4\n1 0 obj << >> endobj\n%%EOF\n';
type Fetch = typeof fetch;
const answer = (body: string, init: { status?: number; type?: string; headers?: Record<string, string> } = {}) =>
  (async () =>
    new Response(body, {
      status: init.status ?? 200,
      headers: { 'content-type': init.type ?? 'application/pdf', ...init.headers },
    })) as unknown as Fetch;
const read = (fetch: Fetch, signal?: AbortSignal) =>
  readReportFile(LINK, { maxBytes: 1_000, timeoutMs: 1_000, fetch, signal });

describe('readReportFile: the report PDF, bounded', () => {
  it("answers the file's bytes, sending no credential", async () => {
    let headers: unknown;
    const fetch = (async (_url: string, init: RequestInit) => {
      headers = init.headers;
      return new Response(PDF, { headers: { 'content-type': 'application/pdf; charset=binary' } });
    }) as unknown as Fetch;
    expect(Buffer.from(await read(fetch)).toString('latin1')).toBe(PDF);
    expect(headers).toEqual({ accept: 'application/pdf' });
  });

  it.each([
    ['a 404', answer('gone', { status: 404 }), 'no file at its link'],
    ['a 403', answer('denied', { status: 403 }), 'refused it (403)'],
    ['an HTML page', answer('<html></html>', { type: 'text/html' }), 'not a PDF (text/html)'],
    ['bytes that are no PDF', answer('MZ not a pdf'), 'first bytes are not %PDF-'],
    ['a declared size over the cap', answer(PDF, { headers: { 'content-length': '5000' } }), 'over the'],
    ['a body that passes the cap', answer(PDF.repeat(100)), 'over the'],
  ])('gives a verdict on %s', async (_, fetch, reason) => {
    const error = await read(fetch).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReportFileUnavailableError);
    expect((error as ReportFileUnavailableError).reason).toContain(reason);
  });

  it.each([
    ['a 503', answer('busy', { status: 503 })],
    ['a 429', answer('slow down', { status: 429 })],
    ['no answer', (async () => Promise.reject(new TypeError('fetch failed'))) as unknown as Fetch],
  ])('leaves %s retryable', async (_, fetch) => {
    const error = await read(fetch).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).retryable).toBe(true);
  });

  it('follows a few redirects to https (a signed storage URL), never one off https, nor too many', async () => {
    const hops: string[] = [];
    const redirecting = (locations: string[]) =>
      (async (url: string, init: RequestInit) => {
        hops.push(url);
        expect(init.redirect).toBe('manual');
        const location = locations[hops.length - 1];
        return location === undefined
          ? new Response(PDF, { headers: { 'content-type': 'application/pdf' } })
          : new Response(null, { status: 302, headers: { location } });
      }) as unknown as Fetch;
    expect(Buffer.from(await read(redirecting(['https://storage.example.com/r.pdf?sig=1', '/r2.pdf']))).length).toBe(
      PDF.length,
    );
    expect(hops).toEqual([LINK, 'https://storage.example.com/r.pdf?sig=1', 'https://storage.example.com/r2.pdf']);
    for (const [locations, reason] of [
      [['http://169.254.169.254/latest/meta-data'], 'not https'],
      [['file:///etc/passwd'], 'not https'],
      [
        ['https://a.example.com/1', 'https://a.example.com/2', 'https://a.example.com/3', 'https://a.example.com/4'],
        'more than 3',
      ],
    ] as const) {
      hops.length = 0;
      const error = await read(redirecting([...locations])).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReportFileUnavailableError);
      expect((error as ReportFileUnavailableError).reason).toContain(reason);
    }
  });

  it('sends nothing once the deadline has passed', async () => {
    let called = false;
    const fetch = (async () => {
      called = true;
      return new Response(PDF);
    }) as unknown as Fetch;
    await expect(read(fetch, AbortSignal.abort())).rejects.toBeInstanceOf(UnavailableError);
    expect(called).toBe(false);
  });
});
