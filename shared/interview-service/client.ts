import * as v from 'valibot';
import { readReportFile } from './report-file';
import { HTTP_DEFAULTS, defaultRetryPolicy, parseRetryAfter, redactUrl, sendHttpRequest, withRetry } from '../http';
import type { HttpResponse, RetryHooks, RetryPolicy } from '../http';
import { API_KEY_HEADER, DOCUMENTED_LANGUAGES, PAGINATION } from './constants';
import {
  ForbiddenError,
  type InterviewServiceError,
  InvalidRequestError,
  MalformedResponseError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UnavailableError,
  WrongBaseUrlError,
  describeIssues,
} from './errors';
import { listAll, type ListAllOptions } from './list-all';
import {
  bareEnvelopeSchema,
  candidateInviteSchema,
  createdInterviewSchema,
  createInterviewInputSchema,
  interviewReportSchema,
  interviewSummarySchema,
  invitationsSchema,
  jobApplicantDetailSchema,
  jobApplicantListItemSchema,
  listQuerySchema,
  updateInterviewInputSchema,
  webhookSchema,
} from './schemas';
import type { CandidateInvite, InterviewSummary, JobApplicant, JobApplicantDetail, ListQuery, Webhook } from './types';
import { errorMessage } from '../errors';
import type { CallOptions, InterviewService, ServiceMethod } from './port';

export interface WarningLogger {
  warn(message: string, attributes?: Record<string, unknown>): void;
}

export interface InterviewServiceClientOptions {
  /** e.g. `https://api.example-interviews.com`; one client per connection, since each has its own key. */
  baseUrl: string;
  apiKey: string;
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Language codes beyond the spec's 12 that this connection opts into (the live service accepts more). */
  extraLanguages?: readonly string[];
  logger?: WarningLogger;
  fetch?: typeof fetch;
  sleep?: RetryHooks['sleep'];
  random?: RetryHooks['random'];
  onRetry?: RetryHooks['onRetry'];
  /** A list item that did not parse and was skipped; by default a warning through `logger`. */
  onSkippedItem?: (event: SkippedItem) => void;
}

export interface SkippedItem {
  where: string;
  index: number;
  field: string;
}

export type { CallOptions } from './port';

interface RequestSpec<T> {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Schema of `data`; undefined when the response carries none (update). */
  data?: v.GenericSchema<unknown, T>;
  /**
   * For lists: the schema of one item. Each item is parsed on its own; one that does not parse is skipped and
   * reported (`onSkippedItem`), never a reason to refuse the page.
   */
  item?: v.GenericSchema<unknown, unknown>;
  signal?: AbortSignal | undefined;
}

const noopLogger: WarningLogger = { warn: () => undefined };

/** The typed client of the interview service's eight endpoints (interview-service-api.md §4). */
export class InterviewServiceClient implements InterviewService {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;
  private readonly policy: RetryPolicy;
  private readonly hooks: Omit<RetryHooks, 'signal'>;
  private readonly fetchImpl: typeof fetch;
  private readonly logger: WarningLogger;
  private readonly extraLanguages: readonly string[];
  private readonly onSkippedItem: (event: SkippedItem) => void;
  private readonly createSchema: ReturnType<typeof createInterviewInputSchema>;
  private readonly updateSchema: ReturnType<typeof updateInterviewInputSchema>;

  public constructor(options: InterviewServiceClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? HTTP_DEFAULTS.timeoutMs;
    this.policy = { ...defaultRetryPolicy, ...options.retry };
    this.hooks = { sleep: options.sleep, random: options.random, onRetry: options.onRetry };
    this.fetchImpl = options.fetch ?? fetch;
    this.logger = options.logger ?? noopLogger;
    this.extraLanguages = options.extraLanguages ?? [];
    this.onSkippedItem =
      options.onSkippedItem ??
      ((event) => this.logger.warn('interview service: a list item that does not parse was skipped', { ...event }));
    this.createSchema = createInterviewInputSchema(this.extraLanguages);
    this.updateSchema = updateInterviewInputSchema(this.extraLanguages);
  }

  /** `GET /interviews` (the OpenAPI's list; `GET /interview` is not a route): `keyword` narrows by name. */
  public async listInterviews(query: ListQuery = {}, options: CallOptions = {}): Promise<InterviewSummary[]> {
    return this.checkedList('/interviews', interviewSummarySchema, query, options);
  }

  /**
   * `POST /interview/invite`: one candidate's own link and `candidate_id` (documented outside the spec's list).
   * Not idempotent (inviting twice makes two sessions) and so sent exactly once, never retried here: after an
   * error with `mayHaveSucceeded`, look with `findInvitation` before inviting again.
   */
  public readonly inviteCandidate: ServiceMethod<'inviteCandidate'> = async (input, options = {}) => {
    const result = await this.request({
      method: 'POST',
      path: '/interview/invite',
      body: {
        interview_id: this.checkId('interviewId', input.interviewId),
        candidates: [{ name: input.name, email: input.email }],
        ...(input.jobApplicationId ? { job_application_id: input.jobApplicationId } : {}),
        ...(input.candidateId ? { candidate_id: input.candidateId } : {}),
        disable_email_notification: input.disableEmailNotification,
      },
      data: invitationsSchema,
      signal: options.signal,
    });
    const [invitation] = result.invitations;
    if (!invitation)
      throw new MalformedResponseError('POST /interview/invite: the answer holds no invitation', {
        field: 'data.invitations',
      });
    return invitation;
  };

  /** The invitation of `email` to the interview, if the service has one (`GET /interview/invites?keyword=`). */
  public readonly findInvitation: ServiceMethod<'findInvitation'> = async (interviewId, email, options = {}) => {
    const wanted = email.trim().toLowerCase();
    const invites = await listAll(
      (page, limit) => this.listInvites({ interview_id: interviewId, keyword: email, page, limit }, options),
      { idOf: (invite) => `${invite.interview_id}#${invite.candidate_id}` },
    );
    // Filtered by the interview (the spec's filter) and checked here: another interview's is never taken for it.
    return invites.find(
      (invite) => invite.interview_id === interviewId && invite.candidate_email_id?.trim().toLowerCase() === wanted,
    );
  };

  /**
   * `POST /custom/interview`, sent exactly once. The service has no idempotency: a retried create makes a
   * second interview that nothing can delete. So this method never retries, and an error with
   * `mayHaveSucceeded` (timeout, network error, 5xx) means the interview may exist. The caller must then
   * look before creating again: `findInterviewsByName` with the unique name it chose, adopting a match.
   */
  public readonly createInterview: ServiceMethod<'createInterview'> = async (input, options = {}) => {
    const body = this.validateInput(this.createSchema, input);
    this.warnOnExtraLanguage(body.interview_language);
    return this.request({
      method: 'POST',
      path: '/custom/interview',
      body,
      data: createdInterviewSchema,
      signal: options.signal,
    });
  };

  /** `PUT /interview/{id}`: absent fields stay as they are; repeating the same update is harmless. */
  public readonly updateInterview: ServiceMethod<'updateInterview'> = async (interviewId, input, options = {}) => {
    const body = this.validateInput(this.updateSchema, input);
    this.warnOnExtraLanguage(body.interview_language);
    await this.request({
      method: 'PUT',
      path: `/interview/${encodeURIComponent(this.checkId('interviewId', interviewId))}`,
      body,
      signal: options.signal,
    });
  };

  public readonly listReports: ServiceMethod<'listReports'> = async (query = {}, options = {}) => {
    return this.checkedList('/interview/reports', interviewReportSchema, query, options);
  };

  public async listInvites(query: ListQuery = {}, options: CallOptions = {}): Promise<CandidateInvite[]> {
    return this.checkedList('/interview/invites', candidateInviteSchema, query, options);
  }

  /** The spec does not name this endpoint's query parameters; the service's list convention is assumed. */
  public async listJobApplicants(
    jobId: string,
    query: Pick<ListQuery, 'page' | 'limit' | 'keyword'> = {},
    options: CallOptions = {},
  ): Promise<JobApplicant[]> {
    const path = `/job/${encodeURIComponent(this.checkId('jobId', jobId))}/applicants`;
    return this.checkedList(path, jobApplicantListItemSchema, query, options);
  }

  public async getJobApplicant(jobApplicantId: string, options: CallOptions = {}): Promise<JobApplicantDetail> {
    const path = `/job/applicant/${encodeURIComponent(this.checkId('jobApplicantId', jobApplicantId))}`;
    return this.request({ method: 'GET', path, data: jobApplicantDetailSchema, signal: options.signal });
  }

  public async listWebhooks(options: CallOptions = {}): Promise<Webhook[]> {
    return this.requestList({ path: '/webhooks', item: webhookSchema, signal: options.signal });
  }

  /** Interviews whose name is exactly `name`: how a caller finds a create whose answer was lost. */
  public readonly findInterviewsByName: ServiceMethod<'findInterviewsByName'> = async (name, options = {}) => {
    const all = await listAll((page, limit) => this.listInterviews({ page, limit, keyword: name }, options), {
      idOf: (interview) => interview.interview_id,
    });
    return all.filter((interview) => interview.interview_name === name);
  };

  /** Every report matching `query`: small pages (each carries a transcript) until an empty one, by id once. */
  public readonly readReportFile: ServiceMethod<'readReportFile'> = (url, options) =>
    readReportFile(url, { ...options, timeoutMs: this.timeoutMs, fetch: this.fetchImpl });

  public readonly listAllReports: ServiceMethod<'listAllReports'> = async (query = {}, options = {}) => {
    return listAll((page, limit) => this.listReports({ ...query, page, limit }, options), {
      pageSize: PAGINATION.reportPageSize,
      ...options,
      idOf: (report) => report.report_id,
    });
  };

  public async listAllInvites(
    query: Omit<ListQuery, 'page' | 'limit'> = {},
    options: CallOptions & ListAllOptions = {},
  ): Promise<CandidateInvite[]> {
    return listAll((page, limit) => this.listInvites({ ...query, page, limit }, options), {
      ...options,
      idOf: (invite) => invite.candidate_id,
    });
  }

  /** A GET of a list, parsed item by item: a malformed item is skipped and reported, the page is kept. */
  /** A list endpoint with the caller's query, checked before it is sent. */
  private checkedList<T>(path: string, item: v.GenericSchema<unknown, T>, query: ListQuery, options: CallOptions) {
    return this.requestList({ path, query: this.checkQuery(query), item, signal: options.signal });
  }

  private async requestList<T>(spec: {
    path: string;
    query?: Record<string, string | number | undefined>;
    item: v.GenericSchema<unknown, T>;
    signal?: AbortSignal | undefined;
  }): Promise<T[]> {
    const where = `GET ${spec.path}`;
    const items = await this.request({
      method: 'GET',
      path: spec.path,
      query: spec.query,
      data: v.array(v.unknown()),
      signal: spec.signal,
    });
    const kept: T[] = [];
    items.forEach((entry, index) => {
      const parsed = v.safeParse(spec.item, entry);
      if (parsed.success) kept.push(parsed.output);
      else {
        // The field's path and valibot's message only: an item may hold a candidate's name or e-mail.
        const { field } = describeIssues(parsed.issues, `data[${index}]`);
        this.onSkippedItem({ where, index, field });
      }
    });
    return kept;
  }

  private validateInput<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
    const result = v.safeParse(schema, input);
    if (result.success) return result.output;
    const { field, message } = describeIssues(result.issues);
    throw new InvalidRequestError(`refused before sending: ${message}`, { field });
  }

  private checkQuery(query: ListQuery): Record<string, string | number | undefined> {
    return this.validateInput(listQuerySchema, query);
  }

  private checkId(field: string, value: string): string {
    if (typeof value !== 'string' || value.trim() === '') {
      throw new InvalidRequestError(`refused before sending: ${field} must be a non-empty string`, { field });
    }
    return value;
  }

  private warnOnExtraLanguage(language: string | undefined): void {
    if (language !== undefined && !(DOCUMENTED_LANGUAGES as readonly string[]).includes(language)) {
      this.logger.warn('interview_language is outside the 36 documented codes; the connection opted into it', {
        interview_language: language,
      });
    }
  }

  private async request<T>(spec: RequestSpec<T>): Promise<T> {
    const url = new URL(this.baseUrl + spec.path);
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { [API_KEY_HEADER]: this.apiKey, accept: 'application/json' };
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    const send = async (): Promise<T> => {
      let response: HttpResponse;
      try {
        response = await sendHttpRequest(
          {
            url: url.toString(),
            method: spec.method,
            headers,
            body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
            timeoutMs: this.timeoutMs,
            signal: spec.signal,
          },
          this.fetchImpl,
        );
      } catch (error) {
        throw this.transportFailure(error, spec.method);
      }
      return this.readResponse(response, spec);
    };
    if (spec.method === 'POST') return send();
    return withRetry(send, this.policy, { ...this.hooks, signal: spec.signal });
  }

  /**
   * No answer in time (a timeout, a lost connection, or the worker's own deadline aborting the call) is never a
   * verdict: the work stays retryable, and a write may have happened. The retry loop itself stops at once when
   * the caller's signal has fired (its wait rejects), so an aborted call is not tried again in this invocation.
   */
  private transportFailure(error: unknown, method: string): InterviewServiceError {
    return new UnavailableError(errorMessage(error), { cause: error, mayHaveSucceeded: method !== 'GET' });
  }

  private readResponse<T>(response: HttpResponse, spec: RequestSpec<T>): T {
    const where = `${spec.method} ${redactUrl(this.baseUrl + spec.path)}`;
    const json = tryParseJson(response.bodyText);
    const envelope = v.safeParse(bareEnvelopeSchema, json);
    const serviceMessage = envelope.success ? envelope.output.message : response.bodyText.slice(0, 200);
    const context = { status: response.status };
    if (response.status === 401) throw new UnauthorizedError(serviceMessage || 'missing or invalid API key', context);
    // The service answers a refused key (an expired one too) with its envelope; the gateway in front of it answers
    // a route it does not have with a bare {message}: that is a wrong base URL, not a key without permission.
    if (response.status === 403 && !envelope.success) throw new WrongBaseUrlError(where, serviceMessage, context);
    if (response.status === 403) throw new ForbiddenError(serviceMessage || 'forbidden', context);
    if (response.status === 404) throw new NotFoundError(`${where}: ${serviceMessage || 'not found'}`, context);
    if (response.status === 429) {
      throw new RateLimitedError(`${where}: rate limited`, {
        ...context,
        retryAfterMs: parseRetryAfter(response.headers),
      });
    }
    if (response.status >= 500) {
      throw new UnavailableError(`${where}: service answered ${response.status}`, {
        ...context,
        mayHaveSucceeded: spec.method !== 'GET',
      });
    }
    if (response.status < 200 || response.status >= 300) {
      // The documented 400 is {status: false, message: "Invalid request"} for any bad body or unknown id.
      throw new InvalidRequestError(
        `${where}: the service refused the request (${response.status} ${serviceMessage || 'no message'}); ` +
          'it names no field: check the ids and the interview settings sent',
        context,
      );
    }
    if (!envelope.success) {
      const { field, message } = describeIssues(envelope.issues);
      throw new MalformedResponseError(`${where}: response is not the {status, message, data} envelope: ${message}`, {
        ...context,
        field,
      });
    }
    if (!envelope.output.status)
      throw new InvalidRequestError(`${where}: ${serviceMessage || 'status false'}`, context);
    if (!spec.data) return undefined as T;
    const data = v.safeParse(spec.data, envelope.output.data);
    if (!data.success) {
      const { field, message } = describeIssues(data.issues, 'data');
      throw new MalformedResponseError(`${where}: malformed response: ${message}`, { ...context, field });
    }
    return data.output;
  }
}

function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
