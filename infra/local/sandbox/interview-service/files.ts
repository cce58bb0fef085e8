import type { ServerResponse } from 'node:http';
import { sendJson, type Route, type RouteContext } from '../http-kit';
import type { ServiceRecords } from './records';
import { reportPdf } from './report.pdf';

/** What `oversize` is larger than unless a control says: over the 10 MB a vendor (Kombo) advises per application. */
export const OVERSIZE_BYTES = 11 * 1024 * 1024;

/** What a file host answers in place of a file whose signed link has expired: its sign-in page. */
const SIGN_IN_PAGE = Buffer.from(
  '<!doctype html><html><head><title>Sign in</title></head>' +
    '<body><p>This link has expired. Sign in to see the file.</p></body></html>',
);

function send(response: ServerResponse, type: string, body: Buffer, disposition?: string): void {
  const headers = { 'content-type': type, 'content-length': String(body.length) };
  response.writeHead(200, disposition ? { ...headers, 'content-disposition': disposition } : headers);
  response.end(body);
}

/**
 * The service's file host: `report_url` serves the report as a PDF with no key (a signed link, as an S3 one), only
 * for a report that exists and has a file; a control may make it oversized or an HTML page instead (types.ts).
 */
export function reportFileRoutes(records: ServiceRecords): Route[] {
  const { state } = records;
  const serve = ({ request, response, params }: RouteContext) => {
    const name = `${request.method} /files/reports/:file`;
    state.requests[name] = (state.requests[name] ?? 0) + 1;
    const reportId = /^(.+)\.pdf$/.exec(params.file ?? '')?.[1];
    const report = state.reports.find((r) => r.report_id === reportId);
    const file = state.reportFiles[reportId ?? ''] ?? { file: 'pdf' };
    if (!report || file.file === 'missing') return sendJson(response, 404, { message: 'Not Found' });
    if (file.file === 'html') return send(response, 'text/html; charset=utf-8', SIGN_IN_PAGE);
    const pdf = reportPdf(report, file.file === 'oversize' ? (file.bytes ?? OVERSIZE_BYTES) : 0);
    send(response, 'application/pdf', pdf, `inline; filename="${report.report_id}.pdf"`);
  };
  return ['GET', 'HEAD'].map((method) => ({ method, pattern: '/files/reports/:file', handle: serve }));
}
