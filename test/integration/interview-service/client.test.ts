import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  startInterviewServiceSandbox,
  type InterviewServiceSandbox,
} from '../../../infra/local/sandbox/interview-service/server';
import { sleep } from '../../../shared/http';
import { InterviewServiceClient, type InterviewServiceClientOptions } from '../../../shared/interview-service';
import { startRecordingServer } from '../../helpers/local-http';

const question = { question: 'How do you make a consumer idempotent?', time: 2, type: 'audio' as const };

describe('Class: InterviewServiceClient (against the sandbox over HTTP)', () => {
  let sandbox: InterviewServiceSandbox;
  const client = (options: Partial<InterviewServiceClientOptions> = {}) =>
    new InterviewServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.apiKey,
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
      ...options,
    });
  const requests = (route: string) => sandbox.state.requests[route] ?? 0;

  beforeAll(async () => {
    sandbox = await startInterviewServiceSandbox({ port: 0, reportDelayMs: 0, seed: 7 });
  });
  afterEach(() => {
    sandbox.setFaults({ rate429: 0, rate500: 0, latencyMs: 0, retryAfterSeconds: 1 });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('creates, lists, finds by name and updates an interview', async () => {
    const created = await client().createInterview({
      interview_name: 'acme:3301:ai-screen',
      custom_question_list: [question],
    });
    expect(created.invite_url).toContain(created.interview_id);
    const found = await client().findInterviewsByName('acme:3301:ai-screen');
    expect(found.map((i) => i.interview_id)).toEqual([created.interview_id]);
    await client().updateInterview(created.interview_id, {
      skills: [{ name: 'Node.js', description: 'async I/O' }],
      is_coding_round_required: true,
    });
    const stored = sandbox.state.interviews.find((i) => i.interview_id === created.interview_id);
    expect(stored?.settings.skills).toEqual([{ name: 'Node.js', description: 'async I/O' }]);
    expect(stored?.settings.is_coding_round_required).toBe(true);
    expect((await client().listInterviews({ keyword: 'acme:3301' })).length).toBe(1);
  });

  it('reads reports, invites, applicants and webhooks', async () => {
    const [interview] = await client().listInterviews({ limit: 1 });
    const { report_id: reportId, candidate_id: candidateId } = sandbox.completeInterview({
      interview_id: interview!.interview_id,
      candidate_name: 'Dara Okafor',
      candidate_email: 'Dara.Okafor@Example.com',
      ats_job_application_id: '4401',
      delay_ms: 0,
    });
    const reports = await client().listReports({ interview_id: interview!.interview_id, candidate_id: candidateId });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({
      report_id: reportId,
      ats_job_application_id: '4401',
      candidate_email_id: 'Dara.Okafor@Example.com',
    });
    expect(await client().listInvites({ candidate_id: candidateId })).toEqual([
      expect.objectContaining({ candidate_name: 'Dara Okafor' }),
    ]);

    const jobId = sandbox.state.applicants[0]!.job_id as string;
    const applicants = await client().listJobApplicants(jobId, { page: 1, limit: 5 });
    expect(applicants).toHaveLength(5);
    const detail = await client().getJobApplicant(applicants[0]!.job_applicant_id);
    expect(detail.screening_question_answers.length).toBeGreaterThan(0);
    expect(detail.parsed_resume_data?.experience.length).toBeGreaterThan(0);

    sandbox.registerWebhook('http://127.0.0.1:9/hook');
    expect((await client().listWebhooks()).map((w) => w.url)).toContain('http://127.0.0.1:9/hook');
  });

  it.each([
    ['unauthorized', { apiKey: 'wrong-key' }, 'Invalid or expired API key'],
    ['forbidden', { apiKey: 'sandbox-limited-key' }, 'no permission for reports'],
  ])('maps a refused key to %s with the service message', async (code, options, message) => {
    const error = await client(options)
      .listReports()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code, retryable: false });
    expect((error as Error).message).toContain(message);
  });

  it('reads the documented 400 "Invalid request" for an unknown interview saying what to check', async () => {
    const error = await client()
      .updateInterview('no-such-interview', { interview_name: 'x' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid-request', status: 400, retryable: false });
    expect((error as Error).message).toContain('check the ids');
    await expect(client().getJobApplicant('nobody')).rejects.toMatchObject({ code: 'not-found' });
  });

  it('refuses 21 questions and 11 skills before sending, naming the field', async () => {
    const before = requests('POST /custom/interview') + requests('PUT /interview/:interviewId');
    const tooMany = Array.from({ length: 21 }, () => question);
    await expect(
      client().createInterview({ interview_name: 'x', custom_question_list: tooMany }),
    ).rejects.toMatchObject({ code: 'invalid-request', field: 'custom_question_list' });
    const skills = Array.from({ length: 11 }, (_, i) => ({ name: `Skill ${i}`, description: '' }));
    await expect(client().updateInterview('any', { skills })).rejects.toMatchObject({
      code: 'invalid-request',
      field: 'skills',
    });
    await expect(client().updateInterview('', { interview_name: 'x' })).rejects.toMatchObject({ field: 'interviewId' });
    await expect(client().listReports({ page: 0 })).rejects.toMatchObject({ field: 'page' });
    expect(requests('POST /custom/interview') + requests('PUT /interview/:interviewId')).toBe(before);
  });

  it('sends an opted-in language with a warning, and surfaces the service refusing it', async () => {
    const warn = vi.fn();
    const optedIn = client({ extraLanguages: ['eu'], logger: { warn } });
    const error = await optedIn
      .createInterview({ interview_name: 'x', custom_question_list: [question], interview_language: 'eu' })
      .catch((e: unknown) => e);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('interview_language'), { interview_language: 'eu' });
    expect(error).toMatchObject({ code: 'invalid-request', status: 400 });
    expect((error as Error).message).toContain('Invalid request');
  });

  it('completes listAll of 300 reports under 30% injected 429s, waiting as Retry-After said', async () => {
    const interview = await client().createInterview({ interview_name: 'bulk', custom_question_list: [question] });
    await fetch(`${sandbox.url}/_sandbox/reports`, {
      method: 'POST',
      body: JSON.stringify({ interview_id: interview.interview_id, count: 300 }),
    });
    sandbox.setFaults({ rate429: 0.3, retryAfterSeconds: 1 });
    const waits: number[] = [];
    const before = requests('GET /interview/reports');
    const started = Date.now();
    const reports = await client({
      sleep: (ms, signal) => {
        waits.push(ms);
        return sleep(ms, signal);
      },
    }).listAllReports({ interview_id: interview.interview_id }, { pageSize: 50 });
    const elapsed = Date.now() - started;
    const sent = requests('GET /interview/reports') - before;
    expect(new Set(reports.map((r) => r.report_id)).size).toBe(300);
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.every((ms) => ms === 1000)).toBe(true);
    expect(sent).toBe(7 + waits.length); // 6 full pages, 1 empty page, and one extra request per 429
    expect(elapsed).toBeGreaterThanOrEqual(waits.length * 1000);
  });

  it('gives up after its bound with a rate-limited error under 100% 429s', async () => {
    sandbox.setFaults({ rate429: 1, retryAfterSeconds: 1 });
    const waits: number[] = [];
    const before = requests('GET /interview/invites');
    const error = await client({ retry: { maxAttempts: 3 }, sleep: async (ms) => void waits.push(ms) })
      .listInvites()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'rate-limited', retryable: true, retryAfterMs: 1000 });
    expect(requests('GET /interview/invites') - before).toBe(3);
    expect(waits).toEqual([1000, 1000]);
  });

  it('retries GET and PUT on 5xx but never re-sends a create', async () => {
    sandbox.setFaults({ rate500: 1 });
    const beforeGet = requests('GET /webhooks');
    await expect(client({ retry: { maxAttempts: 3 } }).listWebhooks()).rejects.toMatchObject({
      code: 'unavailable',
      status: 500,
      mayHaveSucceeded: false,
    });
    expect(requests('GET /webhooks') - beforeGet).toBe(3);

    const beforePost = requests('POST /custom/interview');
    const error = await client()
      .createInterview({ interview_name: 'once', custom_question_list: [question] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unavailable', retryable: true, mayHaveSucceeded: true });
    expect(requests('POST /custom/interview') - beforePost).toBe(1);

    sandbox.setFaults({ rate500: 0, rate429: 1 });
    const limited = await client()
      .createInterview({ interview_name: 'once', custom_question_list: [question] })
      .catch((e: unknown) => e);
    expect(limited).toMatchObject({ code: 'rate-limited', mayHaveSucceeded: false });
    expect(requests('POST /custom/interview') - beforePost).toBe(2);
  });

  it('times out slow calls and retries them, and stops at once when the caller aborts', async () => {
    // Each attempt has 250 ms to reach a sandbox that answers after 1 s: on a busy machine (three test files on two
    // cores) a 50-ms budget could run out before the retry was even sent, and the sandbox counted one request.
    sandbox.setFaults({ latencyMs: 1000 });
    const before = requests('GET /interviews');
    await expect(client({ timeoutMs: 250, retry: { maxAttempts: 2 } }).listInterviews()).rejects.toMatchObject({
      code: 'unavailable',
      retryable: true,
    });
    expect(requests('GET /interviews') - before).toBe(2);
    const beforeAbort = requests('GET /interviews');
    const aborted = await client()
      .listInterviews({}, { signal: AbortSignal.timeout(20) })
      .catch((e: unknown) => e);
    // Cut short by the caller's deadline: not a verdict (the message is retried), and not tried again here.
    expect(aborted).toMatchObject({ code: 'unavailable', retryable: true });
    // A request sent before the abort reaches the sandbox at most once (on a busy machine the abort may come before
    // it is sent at all); a retry would make two.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(requests('GET /interviews') - beforeAbort).toBeLessThanOrEqual(1);
  });

  it('reports network errors as unavailable', async () => {
    const closed = await startRecordingServer();
    await closed.close();
    const error = await new InterviewServiceClient({
      baseUrl: closed.url,
      apiKey: 'k',
      retry: { maxAttempts: 2, baseDelayMs: 1 },
    })
      .listWebhooks()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unavailable', retryable: true });
  });

  it('stops a listing at the page cap instead of looping', async () => {
    await expect(client().listAllReports({}, { pageSize: 1, maxPages: 2 })).rejects.toMatchObject({
      code: 'page-limit-exceeded',
    });
  });
});

describe('Class: InterviewServiceClient (malformed responses)', () => {
  it('skips a report with a numeric id and keeps the page, saying which field', async () => {
    const good = { report_id: 'r1', interview_id: 'i1', candidate_id: 'c1' };
    const server = await startRecordingServer((_request, response) => {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: true, message: '', data: [{ report_id: 5 }, good] }));
    });
    try {
      const onSkippedItem = vi.fn();
      const reports = await new InterviewServiceClient({
        baseUrl: server.url,
        apiKey: 'k',
        onSkippedItem,
      }).listReports();
      expect(reports.map((r) => r.report_id)).toEqual(['r1']);
      expect(onSkippedItem).toHaveBeenCalledWith({
        where: 'GET /interview/reports',
        index: 0,
        field: 'data[0].report_id',
      });
    } finally {
      await server.close();
    }
  });

  it.each([
    ['no envelope', 200, ['a', 'list'], 'malformed-response', 'status'],
    ['status false on 200', 200, { status: false, message: 'job is closed' }, 'invalid-request', undefined],
    [
      'a 422 validation error',
      422,
      { status: false, message: 'interview_name: too long' },
      'invalid-request',
      undefined,
    ],
  ])('%s → %s', async (_name, status, body, code, field) => {
    const server = await startRecordingServer((_request, response) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    try {
      const error = await new InterviewServiceClient({ baseUrl: server.url, apiKey: 'k' })
        .listReports()
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code, field });
      expect(server.received[0]?.headers['x-api-key']).toBe('k');
    } finally {
      await server.close();
    }
  });

  it('reads a non-JSON error page by its status', async () => {
    const server = await startRecordingServer((_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>');
    });
    try {
      const client = new InterviewServiceClient({
        baseUrl: server.url,
        apiKey: 'k',
        retry: { maxAttempts: 2, baseDelayMs: 1 },
      });
      await expect(client.listInvites()).rejects.toMatchObject({ code: 'unavailable', status: 502 });
      expect(server.received).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});
