import * as v from 'valibot';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  startInterviewServiceSandbox,
  type InterviewServiceSandbox,
} from '../../../infra/local/sandbox/interview-service/server';
import {
  candidateInviteSchema,
  interviewReportSchema,
  jobApplicantDetailSchema,
  jobApplicantListItemSchema,
  reportCreatedDeliverySchema,
} from '../../../shared/interview-service';
import { startRecordingServer, waitFor } from '../../helpers/local-http';

const question = { question: 'Tell us about a system you designed.', time: 3, type: 'audio' };

describe('Sandbox: interview service conformance (raw HTTP)', () => {
  let sandbox: InterviewServiceSandbox;
  const call = async (
    method: string,
    path: string,
    options: { key?: string | null; body?: unknown; rawBody?: string } = {},
  ) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.key !== null) headers['x-api-key'] = options.key ?? sandbox.apiKey;
    const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const response = await fetch(sandbox.url + path, { method, headers, body });
    return { status: response.status, headers: response.headers, json: (await response.json()) as any };
  };
  const createInterview = async (name = 'Conformance') =>
    (await call('POST', '/custom/interview', { body: { interview_name: name, custom_question_list: [question] } })).json
      .data;

  beforeAll(async () => {
    sandbox = await startInterviewServiceSandbox({ port: 0, reportDelayMs: 50, seed: 11 });
  });
  afterEach(() => {
    sandbox.setFaults({ rate429: 0, rate500: 0, latencyMs: 0, dropWebhookRate: 0 });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('answers the reports list with the envelope and seeded reports that match the spec', async () => {
    const { status, json } = await call('GET', '/interview/reports');
    expect(status).toBe(200);
    expect(json).toMatchObject({ status: 'true', message: expect.any(String) });
    expect(json.data.length).toBeGreaterThan(0);
    for (const report of json.data) expect(v.safeParse(interviewReportSchema, report).issues).toBeUndefined();
  });

  it.each([
    ['no key', null, 'API key is missing'],
    ['a wrong key', 'not-a-key', 'Invalid or expired API key'],
  ])('answers 401 {status:false, message} with %s', async (_name, key, message) => {
    const { status, json } = await call('GET', '/interview/reports', { key });
    expect(status).toBe(401);
    expect(json).toEqual({ status: false, message });
  });

  it('answers 403 to the limited key on reports only', async () => {
    expect((await call('GET', '/interview/reports', { key: sandbox.limitedApiKey })).status).toBe(403);
    expect((await call('GET', '/interview/invites', { key: sandbox.limitedApiKey })).status).toBe(200);
  });

  it.each([
    [
      '21 questions on create',
      'POST',
      '/custom/interview',
      { interview_name: 'x', custom_question_list: Array.from({ length: 21 }, () => question) },
      'custom_question_list',
    ],
    ['no questions on create', 'POST', '/custom/interview', { interview_name: 'x' }, 'custom_question_list'],
    ['no name on create', 'POST', '/custom/interview', { custom_question_list: [question] }, 'interview_name'],
    [
      'an unknown language',
      'POST',
      '/custom/interview',
      { interview_name: 'x', custom_question_list: [question], interview_language: 'pt-BR' },
      'interview_language',
    ],
    [
      'a 5-minute question',
      'POST',
      '/custom/interview',
      { interview_name: 'x', custom_question_list: [{ ...question, time: 5 }] },
      'custom_question_list.0.time',
    ],
  ])('answers 400 naming the field for %s', async (_name, method, path, body, field) => {
    const { status, json } = await call(method, path, { body });
    expect(status).toBe(400);
    expect(json.status).toBe(false);
    expect(json.message).toMatch(new RegExp(`^${field.replace(/\./g, '\\.')}: `));
  });

  it('answers 400 naming skills for 6 skills on update, and 404 for an unknown interview', async () => {
    const { interview_id: id } = await createInterview();
    const skills = Array.from({ length: 6 }, (_, i) => ({ name: `S${i}`, description: '' }));
    const tooMany = await call('PUT', `/interview/${id}`, { body: { skills } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.message).toMatch(/^skills: /);
    const updated = await call('PUT', `/interview/${id}`, { body: { skills: skills.slice(0, 5) } });
    expect(updated).toMatchObject({ status: 200, json: { status: true } });
    expect(updated.json.data).toBeUndefined();
    expect((await call('PUT', '/interview/nope', { body: { interview_name: 'y' } })).status).toBe(404);
  });

  it('answers 400 to a body that is not JSON and 413 to one over 1 MiB', async () => {
    expect((await call('POST', '/custom/interview', { rawBody: '{nope' })).status).toBe(400);
    const huge = JSON.stringify({ interview_name: 'x'.repeat(1024 * 1024 + 10), custom_question_list: [question] });
    expect((await call('POST', '/custom/interview', { rawBody: huge })).status).toBe(413);
  });

  it('lists interviews with id, name, invite URL, settings, dates and status, filtered by keyword', async () => {
    const created = await createInterview('Keyword Probe 77');
    const { json } = await call('GET', '/interview?keyword=probe%2077');
    expect(json.data).toEqual([
      expect.objectContaining({
        interview_id: created.interview_id,
        interview_name: 'Keyword Probe 77',
        invite_url: created.invite_url,
        settings: expect.objectContaining({ interview_language: 'en', is_proctoring_required: true }),
        status: 'active',
        date_created: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      }),
    ]);
  });

  it('pages lists with page and limit, and refuses a bad page', async () => {
    const jobId = sandbox.state.applicants[0]!.job_id as string;
    const first = await call('GET', `/job/${jobId}/applicants?page=1&limit=10`);
    const third = await call('GET', `/job/${jobId}/applicants?page=3&limit=10`);
    expect(first.json.data).toHaveLength(10);
    expect(third.json.data).toHaveLength(sandbox.state.applicants.length - 20);
    expect(first.json.data[0]).not.toHaveProperty('screening_question_answers');
    for (const item of first.json.data) expect(v.safeParse(jobApplicantListItemSchema, item).success).toBe(true);
    expect((await call('GET', `/job/${jobId}/applicants?page=0`)).status).toBe(400);
    expect((await call('GET', '/job/unknown-job/applicants')).status).toBe(404);
    const detail = await call('GET', `/job/applicant/${first.json.data[0].job_applicant_id}`);
    expect(v.parse(jobApplicantDetailSchema, detail.json.data).screening_question_answers.length).toBeGreaterThan(0);
  });

  it('completes an interview: invite at once, report after the delay, webhook {event, data} delivered', async () => {
    const receiver = await startRecordingServer();
    try {
      const registered = await fetch(`${sandbox.url}/_sandbox/webhooks`, {
        method: 'POST',
        body: JSON.stringify({ url: `${receiver.url}/hook` }),
      });
      expect(registered.status).toBe(201);
      expect((await call('GET', '/webhooks')).json.data.map((w: any) => w.url)).toContain(`${receiver.url}/hook`);
      const { interview_id: interviewId } = await createInterview('Completion');
      const completion = await fetch(`${sandbox.url}/_sandbox/complete-interview`, {
        method: 'POST',
        body: JSON.stringify({
          interview_id: interviewId,
          candidate_name: 'Elif Yilmaz',
          candidate_email: 'elif@example.com',
          ats_job_id: '3301',
          ats_job_application_id: '4401',
        }),
      });
      const { candidate_id: candidateId, report_id: reportId } = (await completion.json()) as any;
      const invites = await call('GET', `/interview/invites?candidate_id=${candidateId}`);
      expect(v.parse(v.array(candidateInviteSchema), invites.json.data)).toHaveLength(1);
      expect((await call('GET', `/interview/reports?candidate_id=${candidateId}`)).json.data).toHaveLength(0);
      await waitFor(() => receiver.received.length === 1, 5000, 'the report webhook');
      const delivery = v.parse(reportCreatedDeliverySchema, JSON.parse(receiver.received[0]!.body));
      expect(delivery.data).toMatchObject({
        report_id: reportId,
        interview_id: interviewId,
        candidate_id: candidateId,
        ats_job_application_id: '4401',
      });
      const reports = await call('GET', `/interview/reports?interview_id=${interviewId}&candidate_id=${candidateId}`);
      expect(reports.json.data[0].report_id).toBe(reportId);
    } finally {
      sandbox.state.webhooks.length = 0;
      await receiver.close();
    }
  });

  it('drops webhook deliveries at the configured rate and records them', async () => {
    const receiver = await startRecordingServer();
    try {
      sandbox.registerWebhook(`${receiver.url}/hook`);
      sandbox.setFaults({ dropWebhookRate: 1 });
      const { interview_id: interviewId } = await createInterview('Dropped');
      const { report_id: reportId } = sandbox.completeInterview({
        interview_id: interviewId,
        candidate_name: 'Farid Haddad',
        candidate_email: 'farid@example.com',
        delay_ms: 0,
      });
      await sandbox.whenIdle(5000);
      expect(receiver.received).toHaveLength(0);
      expect(sandbox.state.deliveries.find((d) => d.report_id === reportId)?.outcome).toBe('dropped');
      expect(sandbox.state.reports.some((r) => r.report_id === reportId)).toBe(true);
    } finally {
      sandbox.state.webhooks.length = 0;
      await receiver.close();
    }
  });

  it('injects 429 with Retry-After, 500 and latency on API routes only', async () => {
    sandbox.setFaults({ rate429: 1, retryAfterSeconds: 7 });
    const limited = await call('GET', '/interview');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect((await fetch(`${sandbox.url}/_sandbox/state`)).status).toBe(200);
    sandbox.setFaults({ rate429: 0, rate500: 1 });
    expect((await call('GET', '/interview')).status).toBe(500);
    const response = await fetch(`${sandbox.url}/_sandbox/faults`, {
      method: 'POST',
      body: JSON.stringify({ rate500: 0, latencyMs: 120 }),
    });
    expect(await response.json()).toMatchObject({ rate500: 0, latencyMs: 120 });
    const started = Date.now();
    expect((await call('GET', '/interview')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
    expect(
      (await fetch(`${sandbox.url}/_sandbox/faults`, { method: 'POST', body: JSON.stringify({ rate429: 2 }) })).status,
    ).toBe(400);
  });

  it('answers 404 in the envelope for an unknown route', async () => {
    expect(await call('GET', '/nothing/here')).toMatchObject({ status: 404, json: { status: false } });
  });
});
