import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import {
  BodyTooLargeError,
  formatTimestamp,
  listen,
  matchRoute,
  readBody,
  seededRandom,
  sendJson,
  type Route,
  type RouteContext,
} from '../http-kit';
import {
  bulkReportsSchema,
  completionSchema,
  DEFAULT_PAGE_SIZE,
  envelope,
  faultsSchema,
  INVALID_REQUEST,
  matchesKeyword,
  NO_FAULTS,
  paginate,
  requestAccount,
  webhookRegistrationSchema,
} from './control';
import { buildReport, isSparse, shortId, sparseReport } from './report.factory';
import { SEEDED_JOB, seedApplicants, type SeededApplicant } from './seed';
import type {
  CompletionRequest,
  SandboxDelivery,
  SandboxFaults,
  SandboxInterview,
  SandboxInvite,
  SandboxReport,
  SandboxWebhook,
} from './types';
import { createBody, firstIssueMessage, inviteBody, updateBody } from './validation';
import { errorMessage } from '../../../../shared/errors';

export const SANDBOX_DEFAULTS = {
  port: 4010,
  apiKey: 'sandbox-key',
  limitedApiKey: 'sandbox-limited-key',
  /** The live service takes 2 to 5 minutes; locally a second keeps demos short. */
  reportDelayMs: 1000,
  /** The service waits 30 s for a webhook answer (facts "Webhook deliveries"). */
  webhookTimeoutMs: 30_000,
  defaultPageSize: DEFAULT_PAGE_SIZE,
  seed: 42,
} as const;

export interface InterviewServiceSandboxOptions {
  port?: number;
  apiKey?: string;
  limitedApiKey?: string;
  reportDelayMs?: number;
  webhookTimeoutMs?: number;
  faults?: Partial<SandboxFaults>;
  seed?: number;
  /** Completed reports present at start, so `GET /interview/reports` shows data at once. */
  seededReports?: number;
}

export interface InterviewServiceSandbox {
  url: string;
  port: number;
  apiKey: string;
  limitedApiKey: string;
  state: SandboxState;
  setFaults(faults: Partial<SandboxFaults>): SandboxFaults;
  /** Another customer account: its key sees only its own interviews, reports and webhooks. */
  addAccount(apiKey: string): void;
  /** Registers a webhook for the account of `apiKey` (default: the sandbox's main key). */
  registerWebhook(url: string, event?: string, apiKey?: string): SandboxWebhook;
  completeInterview(request: CompletionRequest): { candidate_id: string; report_id: string };
  /** Resolves once every scheduled report is created and every delivery answered, or rejects after `timeoutMs`. */
  whenIdle(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface SandboxState {
  /** E-mails the service itself sent for `POST /interview/invite` (unless `disable_email_notification`). */
  emailsSent: { to: string; interview_id: string }[];
  /** Why each 400 "Invalid request" was answered (the answer itself names nothing, as the service's). */
  refusals: string[];
  interviews: SandboxInterview[];
  invites: SandboxInvite[];
  reports: SandboxReport[];
  webhooks: SandboxWebhook[];
  deliveries: SandboxDelivery[];
  applicants: SeededApplicant[];
  /** Requests per route (`POST /custom/interview`), faults included, control endpoints excluded. */
  requests: Record<string, number>;
  faults: SandboxFaults;
}

/** A faithful stand-in of the interview service on 127.0.0.1 (interview-service-api.md), with control endpoints. */
export async function startInterviewServiceSandbox(
  options: InterviewServiceSandboxOptions = {},
): Promise<InterviewServiceSandbox> {
  const apiKey = options.apiKey ?? SANDBOX_DEFAULTS.apiKey;
  const limitedApiKey = options.limitedApiKey ?? SANDBOX_DEFAULTS.limitedApiKey;
  const reportDelayMs = options.reportDelayMs ?? SANDBOX_DEFAULTS.reportDelayMs;
  const webhookTimeoutMs = options.webhookTimeoutMs ?? SANDBOX_DEFAULTS.webhookTimeoutMs;
  const random = seededRandom(options.seed ?? SANDBOX_DEFAULTS.seed);
  const state: SandboxState = {
    emailsSent: [],
    refusals: [],
    interviews: [],
    invites: [],
    reports: [],
    webhooks: [],
    deliveries: [],
    applicants: seedApplicants(),
    requests: {},
    faults: { ...NO_FAULTS, ...options.faults },
  };
  const pending = new Set<Promise<unknown>>();
  // Accounts are named by their full key; the limited key reads the main account.
  const accounts = new Set<string>([apiKey]);
  const accountOfKey = (key: string): string | undefined =>
    key === limitedApiKey ? apiKey : accounts.has(key) ? key : undefined;
  const interviewAccount = new Map<string, string>();
  const webhookAccount = new Map<string, string>();
  const inAccount = (account: string) => (record: { interview_id: string }) =>
    interviewAccount.get(record.interview_id) === account;
  const timers = new Set<NodeJS.Timeout>();
  let baseUrl = '';

  const track = <T>(promise: Promise<T>): Promise<T> => {
    pending.add(promise);
    void promise.finally(() => pending.delete(promise)).catch(() => undefined);
    return promise;
  };

  const now = (): string => formatTimestamp(new Date());

  function createInterview(body: v.InferOutput<typeof createBody>, account: string = apiKey): SandboxInterview {
    const id = randomUUID();
    interviewAccount.set(id, account);
    const interview: SandboxInterview = {
      interview_id: id,
      interview_name: body.interview_name,
      invite_url: `${baseUrl}/invite/${id}`,
      settings: {
        custom_question_list: body.custom_question_list,
        skills: [],
        interview_language: body.interview_language,
        can_change_interview_language: body.can_change_interview_language,
        is_proctoring_required: body.is_proctoring_required,
        only_coding_round: false,
        is_coding_round_required: false,
        selected_coding_language: null,
        coding_exercise_details: null,
      },
      date_created: now(),
      date_modified: now(),
      status: 'active',
    };
    state.interviews.push(interview);
    return interview;
  }

  async function deliver(webhook: SandboxWebhook, report: SandboxReport): Promise<void> {
    const record: SandboxDelivery = {
      webhook_id: webhook.webhook_id,
      url: webhook.url,
      report_id: report.report_id,
      outcome: 'dropped',
      at: now(),
    };
    state.deliveries.push(record);
    if (random() < state.faults.dropWebhookRate) return;
    try {
      const response = await fetch(webhook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'interview_report.created', data: report }),
        signal: AbortSignal.timeout(webhookTimeoutMs),
      });
      await response.arrayBuffer();
      record.outcome = response.ok ? 'delivered' : 'failed';
      record.status = response.status;
    } catch (error) {
      record.outcome = 'failed';
      record.error = errorMessage(error);
    }
  }

  function addReport(
    interview: SandboxInterview,
    completion: CompletionRequest,
    candidateId: string,
    reportId: string,
    notify: boolean,
  ): SandboxReport {
    const report = buildReport({
      interview,
      completion,
      candidateId,
      reportId,
      jobApplicantId: randomUUID(),
      now: new Date(),
    });
    state.reports.push(report);
    if (notify) {
      const account = interviewAccount.get(interview.interview_id);
      for (const webhook of state.webhooks.filter(
        (w) =>
          w.event === 'interview_report.created' &&
          w.status === 'active' &&
          webhookAccount.get(w.webhook_id) === account,
      )) {
        void track(deliver(webhook, report));
      }
    }
    return report;
  }

  function completeInterview(request: CompletionRequest, notify = true): { candidate_id: string; report_id: string } {
    const interview = state.interviews.find((i) => i.interview_id === request.interview_id);
    if (!interview) throw new Error(`interview_id: no interview ${request.interview_id}`);
    // A candidate invited through `POST /interview/invite` takes the interview as that invitation's candidate.
    const invited =
      state.invites.find((i) => i.interview_id === interview.interview_id && i.candidate_id === request.candidate_id) ??
      state.invites.find(
        (i) =>
          i.interview_id === interview.interview_id &&
          i.candidate_email_id.toLowerCase() === request.candidate_email.toLowerCase(),
      );
    const candidateId =
      invited?.candidate_id ?? addInvite(interview, request.candidate_name, request.candidate_email).candidate_id;
    const reportId = shortId('r', random);
    const delay = request.delay_ms ?? reportDelayMs;
    if (delay === 0) {
      addReport(interview, request, candidateId, reportId, notify);
    } else {
      void track(
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            addReport(interview, request, candidateId, reportId, notify);
            resolve();
          }, delay);
          timers.add(timer);
        }),
      );
    }
    return { candidate_id: candidateId, report_id: reportId };
  }

  function addInvite(interview: SandboxInterview, name: string, email: string, status = 'active'): SandboxInvite {
    const candidateId = shortId('c', random);
    const invite: SandboxInvite = {
      candidate_id: candidateId,
      interview_id: interview.interview_id,
      interview_name: interview.interview_name,
      candidate_name: name,
      candidate_email_id: email,
      invite_url: `${interview.invite_url}?cid=${candidateId}`,
      date_created: now(),
      date_modified: now(),
      status,
    };
    state.invites.push(invite);
    return invite;
  }

  /** The documented 400: no field named, whatever was wrong. The reason goes to the sandbox's own state. */
  function refuse(response: ServerResponse, issues: readonly v.BaseIssue<unknown>[]): void {
    state.refusals.push(firstIssueMessage(issues));
    envelope(response, 400, { status: false, message: INVALID_REQUEST });
  }

  function registerWebhook(
    url: string,
    event = 'interview_report.created',
    description = '',
    key: string = apiKey,
  ): SandboxWebhook {
    const account = accountOfKey(key);
    if (!account) throw new Error(`api_key: no account for that key`);
    const webhook: SandboxWebhook = {
      webhook_id: randomUUID(),
      url,
      description,
      event,
      date_created: now(),
      date_modified: now(),
      status: 'active',
    };
    state.webhooks.push(webhook);
    webhookAccount.set(webhook.webhook_id, account);
    return webhook;
  }

  const apiRoutes: Route[] = [
    {
      // `GET /interviews` (the OpenAPI's list; there is no `GET /interview`): settings flat, question time in
      // seconds, the language as its display name, `status` the text "true".
      method: 'GET',
      pattern: '/interviews',
      handle: ({ request, response, url }) => {
        const keyword = url.searchParams.get('keyword');
        const result = paginate(
          state.interviews.filter(
            (i) => inAccount(requestAccount.get(request) as string)(i) && matchesKeyword(keyword, i.interview_name),
          ),
          url,
          state.faults.maxPageSize,
        );
        if ('error' in result) return envelope(response, 400, { status: false, message: result.error });
        envelope(response, 200, {
          status: 'true',
          message: 'Interviews fetched successfully',
          data: result.page.map(interviewListItem),
        });
      },
    },
    {
      // `POST /interview/invite` (documented outside the spec's list): a link per candidate; the service e-mails
      // the candidate unless `disable_email_notification`. Not idempotent: every call makes a new invitation.
      method: 'POST',
      pattern: '/interview/invite',
      handle: async ({ request, response }) => {
        const body = await readJsonBody(request, response);
        if (body === undefined) return;
        const parsed = v.safeParse(inviteBody, body);
        const interview =
          parsed.success &&
          state.interviews.find(
            (i) => i.interview_id === parsed.output.interview_id && inAccount(requestAccount.get(request) as string)(i),
          );
        if (!parsed.success || !interview) return envelope(response, 400, { status: false, message: INVALID_REQUEST });
        const invitations = parsed.output.candidates.map((candidate) => {
          // With `candidate_id`, the same candidate's invitation is sent again, not a new one.
          const resent = state.invites.find(
            (i) => i.interview_id === interview.interview_id && i.candidate_id === parsed.output.candidate_id,
          );
          const invite = resent ?? addInvite(interview, candidate.name, candidate.email, 'invited');
          if (!parsed.output.disable_email_notification)
            state.emailsSent.push({ to: candidate.email, interview_id: interview.interview_id });
          return { candidate_id: invite.candidate_id, candidate_email: candidate.email, invite_url: invite.invite_url };
        });
        envelope(response, 200, { status: true, message: 'Invitations sent successfully', data: { invitations } });
      },
    },
    {
      method: 'POST',
      pattern: '/custom/interview',
      handle: async ({ request, response }) => {
        const body = await readJsonBody(request, response);
        if (body === undefined) return;
        const parsed = v.safeParse(createBody, body);
        if (!parsed.success) return refuse(response, parsed.issues);
        const interview = createInterview(parsed.output, requestAccount.get(request));
        envelope(response, 200, {
          status: true,
          message: 'Interview created successfully',
          data: { interview_id: interview.interview_id, invite_url: interview.invite_url },
        });
      },
    },
    {
      method: 'PUT',
      pattern: '/interview/:interviewId',
      handle: async ({ request, response, params }) => {
        const interview = state.interviews.find(
          (i) => i.interview_id === params.interviewId && inAccount(requestAccount.get(request) as string)(i),
        );
        // An unknown id is the documented 400 "Invalid request", like a bad body.
        if (!interview) return envelope(response, 400, { status: false, message: INVALID_REQUEST });
        const body = await readJsonBody(request, response);
        if (body === undefined) return;
        const parsed = v.safeParse(updateBody, body);
        if (!parsed.success) return refuse(response, parsed.issues);
        const { interview_name: name, ...settings } = parsed.output;
        if (name !== undefined) interview.interview_name = name;
        for (const [key, value] of Object.entries(settings)) {
          if (value !== undefined) (interview.settings as Record<string, unknown>)[key] = value;
        }
        interview.date_modified = now();
        envelope(response, 200, { status: true, message: 'Interview updated successfully' });
      },
    },
    {
      method: 'GET',
      pattern: '/interview/reports',
      handle: ({ request, response, url }) => {
        const filtered = state.reports.filter(
          (r) =>
            inAccount(requestAccount.get(request) as string)(r) &&
            (!url.searchParams.get('interview_id') || r.interview_id === url.searchParams.get('interview_id')) &&
            (!url.searchParams.get('candidate_id') || r.candidate_id === url.searchParams.get('candidate_id')) &&
            matchesKeyword(url.searchParams.get('keyword'), r.candidate_name, r.candidate_email_id, r.interview_name),
        );
        const result = paginate(filtered, url, state.faults.maxPageSize);
        if ('error' in result) return envelope(response, 400, { status: false, message: result.error });
        // The OpenAPI's example answers reports with a boolean `status`.
        const data = result.page.map((r) =>
          isSparse(r.report_id, state.faults.sparseReportRate) ? sparseReport(r) : r,
        );
        envelope(response, 200, { status: true, message: 'Reports fetched successfully', data });
      },
    },
    {
      method: 'GET',
      pattern: '/interview/invites',
      handle: ({ request, response, url }) => {
        const filtered = state.invites.filter(
          (i) =>
            inAccount(requestAccount.get(request) as string)(i) &&
            (!url.searchParams.get('interview_id') || i.interview_id === url.searchParams.get('interview_id')) &&
            (!url.searchParams.get('candidate_id') || i.candidate_id === url.searchParams.get('candidate_id')) &&
            matchesKeyword(url.searchParams.get('keyword'), i.candidate_name, i.candidate_email_id, i.interview_name),
        );
        const result = paginate(filtered, url, state.faults.maxPageSize);
        if ('error' in result) return envelope(response, 400, { status: false, message: result.error });
        const data = result.page.map(({ invite_url: _link, ...invite }) => invite);
        envelope(response, 200, { status: 'true', message: 'Candidate invites fetched successfully', data });
      },
    },
    {
      method: 'GET',
      pattern: '/job/:jobId/applicants',
      handle: ({ response, url, params }) => {
        const applicants = state.applicants.filter((a) => a.job_id === params.jobId);
        if (applicants.length === 0)
          return envelope(response, 404, { status: false, message: `Job ${params.jobId} not found` });
        const keyword = url.searchParams.get('keyword');
        const result = paginate(
          applicants.filter((a) => matchesKeyword(keyword, a.first_name, a.last_name, a.email_id)),
          url,
        );
        if ('error' in result) return envelope(response, 400, { status: false, message: result.error });
        const data = result.page.map(({ screening_question_answers: _omitted, ...item }) => item);
        envelope(response, 200, { status: true, message: 'Applicants fetched successfully', data });
      },
    },
    {
      method: 'GET',
      pattern: '/job/applicant/:jobApplicantId',
      handle: ({ response, params }) => {
        const applicant = state.applicants.find((a) => a.job_applicant_id === params.jobApplicantId);
        if (!applicant)
          return envelope(response, 404, { status: false, message: `Applicant ${params.jobApplicantId} not found` });
        envelope(response, 200, { status: true, message: 'Applicant fetched successfully', data: applicant });
      },
    },
    {
      method: 'GET',
      pattern: '/webhooks',
      handle: ({ request, response }) =>
        envelope(response, 200, {
          status: 'true',
          message: 'Webhooks fetched successfully',
          data: state.webhooks.filter((w) => webhookAccount.get(w.webhook_id) === requestAccount.get(request)),
        }),
    },
  ];

  const controlRoutes: Route[] = [
    { method: 'GET', pattern: '/_sandbox/state', handle: ({ response }) => sendJson(response, 200, state) },
    {
      method: 'POST',
      pattern: '/_sandbox/faults',
      handle: async ({ request, response }) => {
        const parsed = v.safeParse(faultsSchema, await readJsonBody(request, response));
        if (!parsed.success) return sendJson(response, 400, { error: firstIssueMessage(parsed.issues) });
        sendJson(response, 200, setFaults(parsed.output));
      },
    },
    {
      method: 'POST',
      pattern: '/_sandbox/webhooks',
      handle: async ({ request, response }) => {
        const parsed = v.safeParse(webhookRegistrationSchema, await readJsonBody(request, response));
        if (!parsed.success) return sendJson(response, 400, { error: firstIssueMessage(parsed.issues) });
        if (parsed.output.api_key && !accountOfKey(parsed.output.api_key))
          return sendJson(response, 400, { error: 'api_key: no account for that key' });
        sendJson(
          response,
          201,
          registerWebhook(parsed.output.url, parsed.output.event, parsed.output.description, parsed.output.api_key),
        );
      },
    },
    {
      method: 'POST',
      pattern: '/_sandbox/complete-interview',
      handle: async ({ request, response }) => {
        const parsed = v.safeParse(completionSchema, await readJsonBody(request, response));
        if (!parsed.success) return sendJson(response, 400, { error: firstIssueMessage(parsed.issues) });
        if (!state.interviews.some((i) => i.interview_id === parsed.output.interview_id)) {
          return sendJson(response, 404, { error: `interview_id: no interview ${parsed.output.interview_id}` });
        }
        sendJson(response, 202, completeInterview(parsed.output));
      },
    },
    {
      method: 'POST',
      pattern: '/_sandbox/reports',
      handle: async ({ request, response }) => {
        const parsed = v.safeParse(bulkReportsSchema, await readJsonBody(request, response));
        if (!parsed.success) return sendJson(response, 400, { error: firstIssueMessage(parsed.issues) });
        sendJson(response, 201, { created: seedReports(parsed.output.count, parsed.output.interview_id).length });
      },
    },
  ];

  function seedReports(count: number, interviewId?: string): SandboxReport[] {
    const interview =
      state.interviews.find((i) => i.interview_id === interviewId) ??
      createInterview({
        interview_name: `${SEEDED_JOB.job_title} screening`,
        custom_question_list: [
          { question: 'Walk us through a system you designed end to end.', time: 3, type: 'audio' },
          { question: 'How do you make a message consumer idempotent?', time: 2, type: 'audio' },
        ],
        interview_language: 'en',
        can_change_interview_language: false,
        is_proctoring_required: true,
      });
    const created: SandboxReport[] = [];
    for (let i = 0; i < count; i++) {
      const applicant = state.applicants[i % state.applicants.length] as SeededApplicant;
      const email = i < state.applicants.length ? applicant.email_id : `bulk.${state.reports.length}@example.com`;
      const { report_id: reportId } = completeInterview(
        {
          interview_id: interview.interview_id,
          candidate_name: `${applicant.first_name} ${applicant.last_name}`,
          candidate_email: email,
          delay_ms: 0,
        },
        false,
      );
      created.push(state.reports.find((r) => r.report_id === reportId) as SandboxReport);
    }
    return created;
  }

  function setFaults(faults: Partial<SandboxFaults>): SandboxFaults {
    state.faults = { ...state.faults, ...faults };
    return state.faults;
  }

  async function readJsonBody(request: IncomingMessage, response: ServerResponse): Promise<unknown> {
    try {
      const raw = await readBody(request);
      return JSON.parse(raw.toString('utf8'));
    } catch (error) {
      if (error instanceof BodyTooLargeError) envelope(response, 413, { status: false, message: error.message });
      else envelope(response, 400, { status: false, message: 'body: expected a JSON document' });
      return undefined;
    }
  }

  async function handleApi(context: RouteContext, route: Route): Promise<void> {
    const { request, response } = context;
    state.requests[`${request.method} ${route.pattern}`] =
      (state.requests[`${request.method} ${route.pattern}`] ?? 0) + 1;
    if (state.faults.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, state.faults.latencyMs));
    const key = request.headers['x-api-key'];
    if (typeof key !== 'string' || key === '')
      return envelope(response, 401, { status: false, message: 'API key is missing' });
    const account = accountOfKey(key);
    if (!account) return envelope(response, 401, { status: false, message: 'Invalid or expired API key' });
    requestAccount.set(request, account);
    const roll = random();
    if (roll < state.faults.rate429) {
      // The gateway's throttling answer: a bare message, no envelope.
      return sendJson(
        response,
        429,
        { message: 'Too Many Requests' },
        { 'retry-after': String(state.faults.retryAfterSeconds) },
      );
    }
    // The documented 500 is `{status: false}` with no message.
    if (roll < state.faults.rate429 + state.faults.rate500) return envelope(response, 500, { status: false });
    // A slow answer: the work is done, the answer comes after the client stopped waiting.
    if (random() < state.faults.slowRate) await new Promise((resolve) => setTimeout(resolve, state.faults.slowMs));
    if (key === limitedApiKey && route.pattern === '/interview/reports') {
      return envelope(response, 403, { status: false, message: 'This API key has no permission for reports' });
    }
    await route.handle(context);
  }

  const running = await listen((request, response) => {
    const url = new URL(request.url ?? '/', baseUrl);
    const pathname = url.pathname.replace(/\/+$/, '') || '/';
    const method = request.method ?? 'GET';
    const control = matchRoute(controlRoutes, method, pathname);
    const api = control ? undefined : matchRoute(apiRoutes, method, pathname);
    const work = control
      ? control.route.handle({ request, response, url, params: control.params })
      : api
        ? handleApi({ request, response, url, params: api.params }, api.route)
        : // The service's API Gateway answers a route it does not have with 403 and a bare message.
          sendJson(response, 403, { message: 'Missing Authentication Token' });
    Promise.resolve(work).catch((error: unknown) => {
      if (!response.headersSent) envelope(response, 500, { status: false, message: errorMessage(error) });
    });
  }, options.port ?? SANDBOX_DEFAULTS.port);
  baseUrl = running.url;
  if (options.seededReports ?? 3) seedReports(options.seededReports ?? 3);

  return {
    url: running.url,
    port: running.port,
    apiKey,
    limitedApiKey,
    state,
    setFaults,
    addAccount: (key) => void accounts.add(key),
    registerWebhook: (url, event, key) => registerWebhook(url, event, '', key),
    completeInterview: (request) => completeInterview(request),
    async whenIdle(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (pending.size > 0) {
        if (Date.now() > deadline)
          throw new Error(`sandbox still busy after ${timeoutMs} ms (${pending.size} pending)`);
        await Promise.race([Promise.allSettled([...pending]), new Promise((resolve) => setTimeout(resolve, 50))]);
      }
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await running.close();
    },
  };
}

const LANGUAGE_NAMES: Record<string, string> = {
  en: 'English',
  fr: 'French',
  de: 'German',
  he: 'Hebrew',
  hi: 'Hindi',
  pt: 'Portuguese',
  es: 'Spanish',
  tr: 'Turkish',
  'es-la': 'Spanish (Latin America)',
  ja: 'Japanese',
  sv: 'Swedish',
  ar: 'Arabic',
};

/** An interview as `GET /interviews` lists it (the OpenAPI's example): flat settings, time in seconds. */
function interviewListItem(interview: SandboxInterview) {
  const s = interview.settings;
  return {
    interview_id: interview.interview_id,
    interview_name: interview.interview_name,
    invite_url: interview.invite_url,
    skills: s.skills,
    custom_questions: s.custom_question_list.map((q) => ({ question: q.question, time: q.time * 60, type: q.type })),
    interview_language: Object.hasOwn(LANGUAGE_NAMES, s.interview_language)
      ? LANGUAGE_NAMES[s.interview_language]
      : s.interview_language,
    can_change_interview_language: s.can_change_interview_language,
    only_coding_round: s.only_coding_round,
    is_coding_round_required: s.is_coding_round_required,
    selected_coding_language: s.selected_coding_language,
    is_proctoring_required: s.is_proctoring_required,
    date_created: interview.date_created,
    date_modified: interview.date_modified,
    status: interview.status,
  };
}
