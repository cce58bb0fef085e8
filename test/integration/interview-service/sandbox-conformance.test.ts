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
    sandbox.setFaults({
      rate429: 0,
      rate500: 0,
      latencyMs: 0,
      dropWebhookRate: 0,
      sparseReportRate: 0,
      maxPageSize: 0,
    });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('answers the reports list with the envelope and seeded reports as the OpenAPI shows them', async () => {
    const { status, json } = await call('GET', '/interview/reports');
    expect(status).toBe(200);
    // A boolean on reports, the text "true" on the interviews, invites and webhooks lists (the OpenAPI's examples).
    expect(json).toMatchObject({ status: true, message: expect.any(String) });
    expect(json.data[0]).toMatchObject({
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      soft_skills_evaluation: [
        expect.objectContaining({ ai_evaluation: expect.objectContaining({ sub_score: expect.any(Object) }) }),
      ],
    });
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
  ])(
    'answers the documented 400 "Invalid request" for %s, and records which field',
    async (_n, method, path, body, field) => {
      const { status, json } = await call(method, path, { body });
      expect(status).toBe(400);
      expect(json).toEqual({ status: false, message: 'Invalid request' });
      expect(sandbox.state.refusals.at(-1)).toMatch(new RegExp(`^${field.replace(/\./g, '\\.')}: `));
    },
  );

  it('takes 10 skills on update and refuses 11; an unknown interview is 400 "Invalid request" too', async () => {
    const { interview_id: id } = await createInterview();
    const skills = Array.from({ length: 11 }, (_, i) => ({ name: `S${i}`, description: '' }));
    const tooMany = await call('PUT', `/interview/${id}`, { body: { skills } });
    expect(tooMany).toMatchObject({ status: 400, json: { status: false, message: 'Invalid request' } });
    expect(sandbox.state.refusals.at(-1)).toMatch(/^skills: /);
    const updated = await call('PUT', `/interview/${id}`, { body: { skills: skills.slice(0, 10) } });
    expect(updated).toMatchObject({ status: 200, json: { status: true } });
    expect(updated.json.data).toBeUndefined();
    expect(await call('PUT', '/interview/nope', { body: { interview_name: 'y' } })).toMatchObject({
      status: 400,
      json: { status: false, message: 'Invalid request' },
    });
  });

  it('answers 400 to a body that is not JSON and 413 to one over 1 MiB', async () => {
    expect((await call('POST', '/custom/interview', { rawBody: '{nope' })).status).toBe(400);
    const huge = JSON.stringify({ interview_name: 'x'.repeat(1024 * 1024 + 10), custom_question_list: [question] });
    expect((await call('POST', '/custom/interview', { rawBody: huge })).status).toBe(413);
  });

  it('lists interviews at GET /interviews as the OpenAPI shows them, filtered by keyword', async () => {
    const created = await createInterview('Keyword Probe 77');
    const { json } = await call('GET', '/interviews?keyword=probe%2077');
    expect(json.status).toBe('true');
    expect(json.data).toEqual([
      expect.objectContaining({
        interview_id: created.interview_id,
        interview_name: 'Keyword Probe 77',
        invite_url: created.invite_url,
        // Settings flat, question time in seconds, the language as its name.
        custom_questions: [{ question: question.question, time: 180, type: 'audio' }],
        interview_language: 'English',
        is_proctoring_required: true,
        status: 'active',
        date_created: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      }),
    ]);
    // There is no list at GET /interview: the gateway's bare 403.
    expect(await call('GET', '/interview')).toMatchObject({
      status: 403,
      json: { message: 'Missing Authentication Token' },
    });
  });

  it('invites a candidate with their own link, lists them by keyword, e-mails them unless told not to', async () => {
    const { interview_id: interviewId } = await createInterview('Per-candidate');
    const invite = (email: string, disable: boolean) =>
      call('POST', '/interview/invite', {
        body: { interview_id: interviewId, candidates: [{ name: 'Ines', email }], disable_email_notification: disable },
      });
    const first = await invite('ines@example.com', true);
    expect(first).toMatchObject({ status: 200, json: { status: true } });
    const [invitation] = first.json.data.invitations;
    expect(invitation.invite_url).toMatch(new RegExp(`\\?cid=${invitation.candidate_id}$`));
    expect(sandbox.state.emailsSent.some((m) => m.to === 'ines@example.com')).toBe(false);
    await invite('omar@example.com', false);
    expect(sandbox.state.emailsSent.some((m) => m.to === 'omar@example.com')).toBe(true);
    const listed = await call('GET', `/interview/invites?interview_id=${interviewId}&keyword=ines%40example.com`);
    expect(listed.json.status).toBe('true');
    expect(listed.json.data.map((i: any) => i.candidate_id)).toEqual([invitation.candidate_id]);
    // Not idempotent: a second invitation of the same candidate is a second one.
    await invite('ines@example.com', true);
    const again = await call('GET', `/interview/invites?interview_id=${interviewId}&keyword=ines%40example.com`);
    expect(again.json.data).toHaveLength(2);
    expect((await call('POST', '/interview/invite', { body: { interview_id: 'nope', candidates: [] } })).json).toEqual({
      status: false,
      message: 'Invalid request',
    });
  });

  it('caps a page at maxPageSize, and serves a share of reports sparse, the same ones every time', async () => {
    sandbox.setFaults({ maxPageSize: 2 });
    expect((await call('GET', '/interview/reports?limit=50')).json.data).toHaveLength(2);
    sandbox.setFaults({ maxPageSize: 0, sparseReportRate: 1 });
    const [sparse] = (await call('GET', '/interview/reports?limit=1')).json.data;
    expect(sparse).toMatchObject({ ats_job_id: null, custom_exercise_evaluation: null });
    expect(sparse).not.toHaveProperty('session_id');
    expect(sparse.interview_transcript[0].timestamp).toBeNull();
    expect(v.safeParse(interviewReportSchema, sparse).issues).toBeUndefined();
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
          // Long enough for the two reads below on a busy machine, well inside the webhook's wait.
          delay_ms: 1500,
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
    const limited = await call('GET', '/interviews');
    expect(limited).toMatchObject({ status: 429, json: { message: 'Too Many Requests' } });
    expect(limited.headers.get('retry-after')).toBe('7');
    expect((await fetch(`${sandbox.url}/_sandbox/state`)).status).toBe(200);
    sandbox.setFaults({ rate429: 0, rate500: 1 });
    // The documented 500: {status: false}, no message.
    expect(await call('GET', '/interviews')).toMatchObject({ status: 500, json: { status: false } });
    expect((await call('GET', '/interviews')).json).toEqual({ status: false });
    const response = await fetch(`${sandbox.url}/_sandbox/faults`, {
      method: 'POST',
      body: JSON.stringify({ rate500: 0, latencyMs: 120 }),
    });
    expect(await response.json()).toMatchObject({ rate500: 0, latencyMs: 120 });
    const started = Date.now();
    expect((await call('GET', '/interviews')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
    expect(
      (await fetch(`${sandbox.url}/_sandbox/faults`, { method: 'POST', body: JSON.stringify({ rate429: 2 }) })).status,
    ).toBe(400);
  });

  it("answers an unknown route as the service's gateway does: 403 with a bare message", async () => {
    expect(await call('GET', '/nothing/here')).toEqual(
      expect.objectContaining({ status: 403, json: { message: 'Missing Authentication Token' } }),
    );
  });
});
