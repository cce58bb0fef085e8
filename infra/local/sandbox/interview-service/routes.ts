import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { BodyTooLargeError, json, readBody, route, sendJson, type Route } from '../http-kit';
import {
  bulkReportsSchema,
  completionSchema,
  envelope,
  faultsSchema,
  INVALID_REQUEST,
  matchesKeyword,
  paginate,
  reportFileControlSchema,
  requestAccount,
  webhookRegistrationSchema,
} from './control';
import { now, type ServiceRecords } from './records';
import { isSparse, sparseReport } from './report.factory';
import type { SandboxInterview, SandboxInvite, SandboxState } from './types';
import { createBody, firstIssueMessage, inviteBody, updateBody } from './validation';

/** What a report and an invitation share: the fields their lists filter on. */
type CandidateRecord = Pick<
  SandboxInvite,
  'interview_id' | 'candidate_id' | 'candidate_name' | 'candidate_email_id' | 'interview_name'
>;

/** The service's API (interview-service-api.md) as a table of routes over its records, per the caller's account. */
export function serviceApiRoutes(records: ServiceRecords): Route[] {
  const { state } = records;
  const accountOf = (request: IncomingMessage) => requestAccount.get(request) as string;
  /** Reports or invitations of the caller's account, by `interview_id`, `candidate_id` and `keyword`. */
  const candidatesOf = <T extends CandidateRecord>(all: T[], request: IncomingMessage, url: URL): T[] => {
    const asked = (name: string) => url.searchParams.get(name);
    return all.filter(
      (r) =>
        records.inAccount(accountOf(request))(r) &&
        (!asked('interview_id') || r.interview_id === asked('interview_id')) &&
        (!asked('candidate_id') || r.candidate_id === asked('candidate_id')) &&
        matchesKeyword(asked('keyword'), r.candidate_name, r.candidate_email_id, r.interview_name),
    );
  };
  return [
    {
      // `GET /interviews` (the OpenAPI's list; there is no `GET /interview`): settings flat, question time in
      // seconds, the language as its display name, `status` the text "true".
      method: 'GET',
      pattern: '/interviews',
      handle: ({ request, response, url }) => {
        const keyword = url.searchParams.get('keyword');
        const result = paginate(
          state.interviews.filter(
            (i) => records.inAccount(accountOf(request))(i) && matchesKeyword(keyword, i.interview_name),
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
        const parsed = await apiBody(inviteBody, request, response);
        if (parsed === undefined) return;
        const interview =
          parsed.success &&
          state.interviews.find(
            (i) => i.interview_id === parsed.output.interview_id && records.inAccount(accountOf(request))(i),
          );
        if (!parsed.success || !interview) return envelope(response, 400, { status: false, message: INVALID_REQUEST });
        const invitations = parsed.output.candidates.map((candidate) => {
          // With `candidate_id`, the same candidate's invitation is sent again, not a new one.
          const resent = state.invites.find(
            (i) => i.interview_id === interview.interview_id && i.candidate_id === parsed.output.candidate_id,
          );
          const invite = resent ?? records.addInvite(interview, candidate.name, candidate.email, 'invited');
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
        const parsed = await apiBody(createBody, request, response);
        if (parsed === undefined) return;
        if (!parsed.success) return refuse(state, response, parsed.issues);
        const interview = records.createInterview(parsed.output, accountOf(request));
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
          (i) => i.interview_id === params.interviewId && records.inAccount(accountOf(request))(i),
        );
        // An unknown id is the documented 400 "Invalid request", like a bad body.
        if (!interview) return envelope(response, 400, { status: false, message: INVALID_REQUEST });
        const parsed = await apiBody(updateBody, request, response);
        if (parsed === undefined) return;
        if (!parsed.success) return refuse(state, response, parsed.issues);
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
        const result = paginate(candidatesOf(state.reports, request, url), url, state.faults.maxPageSize);
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
        const result = paginate(candidatesOf(state.invites, request, url), url, state.faults.maxPageSize);
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
          data: records.webhooksOf(requestAccount.get(request)),
        }),
    },
  ];
}

/** The sandbox's own routes (`/_sandbox/…`): its state, faults, webhooks, and a candidate completing an interview. */
export function serviceControlRoutes(records: ServiceRecords): Route[] {
  const { state } = records;
  return [
    json('GET /_sandbox/state', () => state),
    posted('/_sandbox/faults', faultsSchema, (body, response) => sendJson(response, 200, records.setFaults(body))),
    posted('/_sandbox/webhooks', webhookRegistrationSchema, (body, response) => {
      if (body.api_key && !records.accountOfKey(body.api_key))
        return sendJson(response, 400, { error: 'api_key: no account for that key' });
      sendJson(response, 201, records.registerWebhook(body.url, body.event, body.description, body.api_key));
    }),
    posted('/_sandbox/complete-interview', completionSchema, (body, response) => {
      if (!state.interviews.some((i) => i.interview_id === body.interview_id))
        return sendJson(response, 404, { error: `interview_id: no interview ${body.interview_id}` });
      sendJson(response, 202, records.completeInterview(body));
    }),
    posted('/_sandbox/reports', bulkReportsSchema, (body, response) =>
      sendJson(response, 201, { created: records.seedReports(body.count, body.interview_id).length }),
    ),
    posted('/_sandbox/report-file', reportFileControlSchema, ({ report_id, ...file }, response) => {
      const served = records.setReportFile(report_id, file);
      if (!served) return sendJson(response, 404, { error: `report_id: no report ${report_id}` });
      sendJson(response, 200, { report_id, ...file, ...served });
    }),
  ];
}

/** The documented 400: no field named, whatever was wrong. The reason goes to the sandbox's own state. */
function refuse(state: SandboxState, response: ServerResponse, issues: readonly v.BaseIssue<unknown>[]): void {
  state.refusals.push(firstIssueMessage(issues));
  envelope(response, 400, { status: false, message: INVALID_REQUEST });
}

/** A control route that takes a JSON body of `schema` (a 400 naming the field when it is not). */
function posted<S extends v.GenericSchema>(
  pattern: string,
  schema: S,
  answer: (body: v.InferOutput<S>, response: ServerResponse) => void,
): Route {
  return route(`POST ${pattern}`, async ({ request, response }) => {
    const body = await controlBody(schema, request, response);
    if (body !== undefined) answer(body, response);
  });
}

/** A control route's JSON body as `schema`; else a 400 naming the field (unless one was sent) and undefined. */
async function controlBody<S extends v.GenericSchema>(
  schema: S,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<v.InferOutput<S> | undefined> {
  const parsed = v.safeParse(schema, await readJsonBody(request, response));
  if (parsed.success) return parsed.output;
  if (!response.headersSent) sendJson(response, 400, { error: firstIssueMessage(parsed.issues) });
  return undefined;
}

/** The API's JSON body checked by `schema`; undefined once a body that is no JSON document was answered. */
async function apiBody<S extends v.GenericSchema>(schema: S, request: IncomingMessage, response: ServerResponse) {
  const body = await readJsonBody(request, response);
  return body === undefined ? undefined : v.safeParse(schema, body);
}

export async function readJsonBody(request: IncomingMessage, response: ServerResponse): Promise<unknown> {
  try {
    const raw = await readBody(request);
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    if (error instanceof BodyTooLargeError) envelope(response, 413, { status: false, message: error.message });
    else envelope(response, 400, { status: false, message: 'body: expected a JSON document' });
    return undefined;
  }
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
