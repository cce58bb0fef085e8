import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startInterviewServiceSandbox,
  type InterviewServiceSandbox,
} from '../../../infra/local/sandbox/interview-service/server';
import type { SandboxReport } from '../../../infra/local/sandbox/interview-service/types';

/**
 * A PDF a reader can open: `%PDF-` first, `%%EOF` last, `startxref` at the cross-reference table, and each of its
 * entries the byte offset of that object (ISO 32000-1 §7.5.4–7.5.5). Answers the page's text.
 */
function expectReadablePdf(pdf: Buffer): string {
  const text = pdf.toString('latin1');
  expect(text.startsWith('%PDF-')).toBe(true);
  expect(text.endsWith('%%EOF\n')).toBe(true);
  const xref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(text)?.[1]);
  expect(text.slice(xref, xref + 4)).toBe('xref');
  const entries = [...text.slice(xref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
  expect(entries.length).toBeGreaterThanOrEqual(6);
  for (const [index, offset] of entries.entries())
    expect(text.slice(offset)).toMatch(new RegExp(`^${index + 1} 0 obj`));
  return [...text.matchAll(/\((.*)\) Tj/g)].map((m) => m[1]?.replace(/\\([\\()])/g, '$1')).join('\n');
}

describe('Sandbox: the report PDF at report_url, served by the service file host', () => {
  let sandbox: InterviewServiceSandbox;
  const control = (path: string, body: unknown) =>
    fetch(`${sandbox.url}${path}`, { method: 'POST', body: JSON.stringify(body) });
  const reportOf = (id: string) => sandbox.state.reports.find((r) => r.report_id === id) as SandboxReport;

  beforeAll(async () => {
    sandbox = await startInterviewServiceSandbox({ port: 0, reportDelayMs: 0, seededReports: 2, seed: 5 });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('links the report at its own origin, keyless, as a PDF of the scores that never names the candidate', async () => {
    const report = sandbox.state.reports[0] as SandboxReport;
    expect(report.report_url).toBe(`${sandbox.url}/files/reports/${report.report_id}.pdf`);
    expect(report.interview_recording_url).toMatch(/^https:\/\/files\.interview-sandbox\.example\//);
    const before = sandbox.state.requests['GET /files/reports/:file'] ?? 0;
    const answer = await fetch(report.report_url as string);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/pdf');
    const pdf = Buffer.from(await answer.arrayBuffer());
    expect(answer.headers.get('content-length')).toBe(String(pdf.length));
    const text = expectReadablePdf(pdf);
    expect(text).toContain(`AI interview report ${report.report_id}`);
    expect(text).toContain(`Interview: ${report.interview_name}`);
    expect(text).toContain(`Date: ${report.report_date}`);
    expect(text).toContain(`AI match score: ${report.ai_match_score} / 100`);
    expect(text).toContain(`Proctoring score: ${report.proctoring_score} / 100`);
    const skill = (report.technical_skills_evaluation as { skill: string; ai_evaluation: { rating: string } }[])[0];
    expect(text).toContain(`${skill?.skill}: ${skill?.ai_evaluation.rating}`);
    expect(text).not.toContain(report.candidate_name);
    expect(text).not.toContain(report.candidate_email_id);
    expect(pdf.includes(Buffer.from(report.candidate_email_id))).toBe(false);
    expect(sandbox.state.requests['GET /files/reports/:file']).toBe(before + 1);
  });

  it.each([
    ['an unknown report', '/files/reports/rnotareport0.pdf'],
    ['a report without .pdf', () => `/files/reports/${sandbox.state.reports[0]?.report_id}`],
  ])('answers 404 for %s', async (_what, path) => {
    const answer = await fetch(`${sandbox.url}${typeof path === 'string' ? path : path()}`);
    expect(answer.status).toBe(404);
  });

  it('missing: report_url null in the report, and no file', async () => {
    const { report_id } = sandbox.completeInterview({
      ...{ interview_id: sandbox.state.interviews[0]?.interview_id as string, candidate_name: 'Ana Lima' },
      ...{ candidate_email: 'ana.lima@example.com', delay_ms: 0, report_file: { file: 'missing' } },
    });
    expect(reportOf(report_id).report_url).toBeNull();
    const reports = await fetch(`${sandbox.url}/interview/reports?limit=100`, {
      headers: { 'x-api-key': sandbox.apiKey },
    });
    const listed = ((await reports.json()) as { data: SandboxReport[] }).data.find((r) => r.report_id === report_id);
    expect(listed?.report_url).toBeNull();
    expect((await fetch(`${sandbox.url}/files/reports/${report_id}.pdf`)).status).toBe(404);
    const restored = await control('/_sandbox/report-file', { report_id, file: 'pdf' });
    const url = `${sandbox.url}/files/reports/${report_id}.pdf`;
    expect(await restored.json()).toEqual({ report_id, file: 'pdf', report_url: url });
    expect((await fetch(url)).status).toBe(200);
  });

  it('oversize: a valid PDF larger than the bytes asked (11 MiB unless said); html: a page in its place', async () => {
    const { report_id } = sandbox.state.reports[1] as SandboxReport;
    const url = `${sandbox.url}/files/reports/${report_id}.pdf`;
    expect((await control('/_sandbox/report-file', { report_id, file: 'oversize', bytes: 2_000_000 })).status).toBe(
      200,
    );
    const large = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(large.length).toBeGreaterThan(2_000_000);
    expect(expectReadablePdf(large)).toContain(`AI interview report ${report_id}`);
    await control('/_sandbox/report-file', { report_id, file: 'oversize' });
    const head = await fetch(url, { method: 'HEAD' });
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(11 * 1024 * 1024);
    await control('/_sandbox/report-file', { report_id, file: 'html' });
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect((await page.text()).startsWith('<!doctype html>')).toBe(true);
    await control('/_sandbox/report-file', { report_id, file: 'pdf' });
  });

  it('sets a report to come by its id, and refuses an id the service never had or a mode it has not', async () => {
    const { report_id } = sandbox.completeInterview({
      ...{ interview_id: sandbox.state.interviews[0]?.interview_id as string, candidate_name: 'Bo Sun' },
      ...{ candidate_email: 'bo.sun@example.com', delay_ms: 200 },
    });
    const pending = await control('/_sandbox/report-file', { report_id, file: 'missing' });
    expect(await pending.json()).toEqual({ report_id, file: 'missing', report_url: null });
    await sandbox.whenIdle();
    expect(reportOf(report_id).report_url).toBeNull();
    expect((await control('/_sandbox/report-file', { report_id: 'rnever', file: 'html' })).status).toBe(404);
    expect((await control('/_sandbox/report-file', { report_id, file: 'zip' })).status).toBe(400);
    expect(() => sandbox.setReportFile('rnever', { file: 'pdf' })).toThrow(/no report rnever/);
  });
});
