import * as v from 'valibot';
import { describe, expect, it, vi } from 'vitest';
import {
  InterviewServiceClient,
  reportCreatedDataSchema,
  webhookDeliverySchema,
} from '../../../shared/interview-service';
import { loadFixture } from '../../helpers/fixtures';

/** A fixture assembled from the service's OpenAPI (README beside the files says how and from where). */
const documented = (name: string) => loadFixture<any>(`contract/interview-service/openapi/${name}`);

type Route = { status: number; body: unknown };

/**
 * The client over a stubbed fetch that answers as the service documents: each `METHOD /path` its fixture, any
 * other route the gateway's bare 403. Records every request.
 */
function serviceStub(routes: Record<string, Route | ((url: URL) => Route)>) {
  const requests: { method: string; url: URL; body: unknown }[] = [];
  const fetch = vi.fn(async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    requests.push({ method, url, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    const route = routes[`${method} ${url.pathname}`];
    const answer =
      typeof route === 'function' ? route(url) : (route ?? documentedRoute('gateway-unknown-route.403.json', 403));
    return Response.json(answer.body, { status: answer.status });
  });
  const client = (options: Partial<ConstructorParameters<typeof InterviewServiceClient>[0]> = {}) =>
    new InterviewServiceClient({
      baseUrl: 'https://api.interviews.example.com',
      apiKey: 'k',
      fetch: fetch as unknown as typeof globalThis.fetch,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
      sleep: async () => undefined,
      ...options,
    });
  return { client, requests };
}
const documentedRoute = (name: string, status = 200): Route => ({ status, body: documented(name) });

describe('Contract: the interview service as its OpenAPI documents it', () => {
  it('row 1: finds an interview after a lost create at GET /interviews (no GET /interview list exists)', async () => {
    const { client, requests } = serviceStub({ 'GET /interviews': documentedRoute('list-interviews.200.json') });
    const found = await client().findInterviewsByName('Full Stack Engineer Interview');
    expect(found.map((i) => i.interview_id)).toEqual(['123e4567-e89b-12d3-a456-426614174000']);
    expect(requests.every((r) => r.url.pathname === '/interviews')).toBe(true);
    // The list item is parsed though its settings are flat, its times in seconds and its language a name.
    expect(found[0]).toMatchObject({ invite_url: expect.stringContaining('uid=') });
  });

  it('row 2: reads a report whose transcript and skill timestamps are null, as documented', async () => {
    const { client } = serviceStub({ 'GET /interview/reports': documentedRoute('list-reports.nullable.200.json') });
    const [report] = await client().listReports({ interview_id: 'i' });
    expect(report).toMatchObject({ report_id: 'h0gqkAcaDJ', ai_match_score: 85, ats_job_id: null });
    expect(report?.interview_transcript[0]).toMatchObject({ timestamp: null });
  });

  it('row 3: pages until an empty page, so a server that caps limit at 10 loses no report', async () => {
    const all = Array.from({ length: 120 }, (_, i) => ({
      ...documented('list-reports.200.json').data[0],
      report_id: `r${i}`,
    }));
    const { client, requests } = serviceStub({
      'GET /interview/reports': (url) => {
        const limit = Math.min(Number(url.searchParams.get('limit')), 10);
        const page = Number(url.searchParams.get('page'));
        return { status: 200, body: { status: true, message: '', data: all.slice((page - 1) * limit, page * limit) } };
      },
    });
    const reports = await client().listAllReports({ interview_id: 'i' });
    expect(new Set(reports.map((r) => r.report_id)).size).toBe(120);
    expect(reports).toHaveLength(120);
    // Report pages are asked small (each carries a transcript).
    expect(requests[0]?.url.searchParams.get('limit')).toBe('20');
  });

  it('row 4: one record missing what the OpenAPI never requires does not refuse its page', async () => {
    const page = documented('list-reports.200.json');
    const sparse = { report_id: 'r2', interview_id: 'i2', candidate_id: 'c2' };
    page.data.push(sparse, { interview_id: 'no report id' });
    const onSkippedItem = vi.fn();
    const { client } = serviceStub({ 'GET /interview/reports': { status: 200, body: page } });
    const reports = await client({ onSkippedItem }).listReports();
    expect(reports.map((r) => r.report_id)).toEqual(['h0gqkAcaDJ', 'r2']);
    expect(onSkippedItem).toHaveBeenCalledTimes(1);
    expect(onSkippedItem).toHaveBeenCalledWith(expect.objectContaining({ index: 2, field: 'data[2].report_id' }));
    const applicant = serviceStub({
      'GET /job/applicant/a1': documentedRoute('job-applicant.nullable.200.json'),
    }).client();
    expect((await applicant.getJobApplicant('a1')).screening_question_answers).toEqual([]);
  });

  it.each([
    ['gateway-unknown-route.403.json', 403, 'wrong-base-url', 'interviewService.baseUrl'],
    ['list-interviews.400.json', 400, 'invalid-request', 'check the ids'],
  ])('row 5: %s (%i) reads as %s and says what to do', async (name, status, code, advice) => {
    const { client } = serviceStub({ 'GET /interviews': documentedRoute(name, status) });
    const error = await client()
      .listInterviews()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code, retryable: false });
    expect((error as Error).message).toContain(advice);
  });

  it('row 5: a 403 in the envelope is a refused key (an expired one too), and says to rotate it', async () => {
    const { client } = serviceStub({
      'GET /interview/reports': { status: 403, body: { status: false, message: 'Forbidden' } },
    });
    const error = await client()
      .listReports()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'forbidden', retryable: false });
    expect((error as Error).message).toMatch(/rotate/);
  });

  it('row 5: the documented 500 {status: false} is retried and then unavailable', async () => {
    const { client, requests } = serviceStub({ 'GET /interviews': documentedRoute('list-interviews.500.json', 500) });
    await expect(client().listInterviews()).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    expect(requests).toHaveLength(2);
  });

  it('creates an interview with the documented request and reads the documented answer', async () => {
    const { client, requests } = serviceStub({
      'POST /custom/interview': documentedRoute('create-interview.200.json'),
    });
    const request = documented('create-interview.request.json');
    const created = await client().createInterview(request);
    expect(created).toEqual(documented('create-interview.200.json').data);
    expect(requests[0]?.body).toEqual(request);
  });

  it('updates, lists invites and webhooks as documented', async () => {
    const { client } = serviceStub({
      'PUT /interview/123e4567-e89b-12d3-a456-426614174000': documentedRoute('update-interview.200.json'),
      'GET /interview/invites': documentedRoute('list-invites.200.json'),
      'GET /webhooks': documentedRoute('list-webhooks.200.json'),
    });
    await expect(
      client().updateInterview('123e4567-e89b-12d3-a456-426614174000', { interview_name: 'x' }),
    ).resolves.toBeUndefined();
    expect((await client().listInvites())[0]).toMatchObject({ candidate_id: 'h0gqkAcaDJ' });
    expect((await client().listWebhooks())[0]).toMatchObject({ event: expect.any(String), url: expect.any(String) });
  });

  it('invites one candidate with the documented request, and finds the invitation by e-mail afterwards', async () => {
    const { client, requests } = serviceStub({
      'POST /interview/invite': documentedRoute('invite.200.json'),
      'GET /interview/invites': (url) =>
        url.searchParams.get('page') === '1'
          ? {
              status: 200,
              body: {
                status: 'true',
                message: '',
                data: [{ ...documented('list-invites.200.json').data[0], candidate_email_id: 'candidate@example.com' }],
              },
            }
          : { status: 200, body: { status: 'true', message: '', data: [] } },
    });
    const invitation = await client().inviteCandidate({
      interviewId: '123e4567-e89b-12d3-a456-426614174000',
      name: 'John Doe',
      email: 'candidate@example.com',
      jobApplicationId: '123e4567-e89b-12d3-a456-426614174000',
      disableEmailNotification: false,
    });
    expect(invitation).toEqual(documented('invite.200.json').data.invitations[0]);
    const { candidate_id: _resend, ...documentedRequest } = documented('invite.request.json');
    expect(requests[0]?.body).toEqual(documentedRequest);
    const found = await client().findInvitation('123e4567-e89b-12d3-a456-426614174000', 'Candidate@Example.com');
    expect(found?.candidate_id).toBe('h0gqkAcaDJ');
    expect(requests[1]?.url.searchParams.get('keyword')).toBe('Candidate@Example.com');
  });

  it('reads the documented webhook delivery: the three ids the worker re-reads the report by', () => {
    const delivery = v.parse(webhookDeliverySchema, documented('webhook-report-created.json'));
    const ids = v.parse(v.pick(reportCreatedDataSchema, ['report_id', 'interview_id', 'candidate_id']), delivery.data);
    expect(ids).toEqual({
      report_id: 'h0gqkAcaDJ',
      interview_id: '123e4567-e89b-12d3-a456-426614174000',
      candidate_id: '123e4567-e89b-12d3-a456-426614174000',
    });
  });
});
