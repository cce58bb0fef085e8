import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { callAsAts, sendJson } from '../../http-kit';
import type { GreenhouseRecords } from './state';

/**
 * Greenhouse's side of the Assessment Partner API (assessment-partner facts, sections 1 and 5): Greenhouse calls
 * the partner's four URLs with the customer's key as the Basic username, sends `send_test` with the candidate
 * nested (absent values `null`, and a field the partner does not know), takes the completion PATCH only with the
 * credential it issued for it (403 with the inbound key), then calls `test_status` and checks the answer as
 * `response_error` describes, POSTing `response_error` when it is malformed.
 */
export const PARTNER_CALL_NAMES = ['list_tests', 'send_test', 'test_status', 'response_error'] as const;
export type PartnerUrls = Record<(typeof PARTNER_CALL_NAMES)[number], string>;

export interface PartnerRegistration {
  urls: PartnerUrls;
  /** The key the partner issued the customer (Greenhouse → partner). */
  key: string;
  /** The credential Greenhouse issued the partner for the completion PATCH (partner → Greenhouse). */
  completionKey: string;
}

/** A partner test sent for an application, as Greenhouse keeps it. */
export interface TakeHomeTest {
  id: number;
  application_id: number;
  partner_test_id: string;
  partner_interview_id: string | null;
  /** `sent` until a valid `complete` answer; then what `test_status` said. */
  status: 'sent' | 'complete';
  partner_status: string | null;
  partner_score: number | null;
  partner_profile_url: string | null;
  metadata: Record<string, string | number | boolean | null> | null;
  /** Completion PATCHes taken, and refused (wrong credential). */
  patches: number;
  refusedPatches: number;
  /** What Greenhouse reported back through `response_error`. */
  responseErrors: string[][];
  /** Each `test_status` pull after a PATCH, as it went: the status answered, or why none was read. */
  pulls: string[];
}

const listTestsAnswer = v.array(v.object({ partner_test_id: v.string(), partner_test_name: v.string() }));
const testStatusAnswer = v.object({
  partner_status: v.string(),
  partner_profile_url: v.nullish(v.string()),
  partner_score: v.nullish(v.number()),
  metadata: v.nullish(v.record(v.string(), v.union([v.string(), v.number(), v.boolean(), v.null()]))),
});

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

export class GreenhouseAssessments {
  public readonly tests: TakeHomeTest[] = [];
  private partner: PartnerRegistration | undefined;
  /** The `test_status` pulls Greenhouse has begun after a PATCH and not yet finished. */
  private readonly pending = new Set<Promise<void>>();

  public constructor(
    private readonly records: GreenhouseRecords,
    private readonly baseUrl: () => string,
  ) {}

  /** The partner's URLs and keys, as Greenhouse's partnerships team and the customer enter them. */
  public register(partner: PartnerRegistration): void {
    this.partner = partner;
  }

  /** What the "Edit Take Home Test" picker shows: the partner's `list_tests`, checked to be a bare array. */
  public async listTests(): Promise<{ partner_test_id: string; partner_test_name: string }[]> {
    const answer = await this.call('list_tests', 'GET');
    const parsed = v.safeParse(listTestsAnswer, answer.body);
    if (answer.status === 200 && parsed.success) return parsed.output;
    await this.reportError('list_tests', [`list_tests answered ${answer.status}, not an array of tests`]);
    throw new Error(`list_tests answered ${answer.status}`);
  }

  /**
   * A recruiter's "Send Test" (or the stage's auto-send rule): `send_test` for the application. `newTest`: a new
   * take-home test of the same partner test (a resend after the first expired), with its own completion url.
   */
  public async sendTest(input: {
    application_id: number;
    partner_test_id: string;
    newTest?: boolean;
  }): Promise<TakeHomeTest> {
    const application = this.records.application(input.application_id);
    const candidate = this.records.candidateOf(application);
    // One take-home test per application and partner test: a second click sends the same test (and its url) again.
    const test = input.newTest
      ? this.newTest(application.id, input.partner_test_id)
      : this.testFor(application.id, input.partner_test_id);
    const answer = await this.call('send_test', 'POST', {
      partner_test_id: input.partner_test_id,
      candidate: {
        first_name: candidate.first_name,
        last_name: candidate.last_name,
        preferred_name: null,
        resume_url: null,
        phone_number: null,
        email: candidate.email_addresses[0]?.value ?? null,
        greenhouse_profile_url: `https://app.greenhouse.io/people/${candidate.id}?application_id=${application.id}`,
        // Greenhouse may add properties at any time.
        pronouns: null,
      },
      sent_by: 'recruiter@demo.example.com',
      url: `${this.baseUrl()}/integrations/testing_partners/take_home_tests/${test.id}`,
    });
    const id = (answer.body as { partner_interview_id?: unknown } | undefined)?.partner_interview_id;
    if (answer.status !== 200 || typeof id !== 'string')
      throw new Error(`send_test answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    test.partner_interview_id = id;
    return test;
  }

  /** The application's take-home test of `partnerTestId`, made on its first send. */
  private testFor(applicationId: number, partnerTestId: string): TakeHomeTest {
    const existing = this.tests.findLast(
      (t) => t.application_id === applicationId && t.partner_test_id === partnerTestId,
    );
    return existing ?? this.newTest(applicationId, partnerTestId);
  }

  /** A new take-home test of the application: its own id, so its own completion url. */
  private newTest(applicationId: number, partnerTestId: string): TakeHomeTest {
    const test: TakeHomeTest = {
      id: this.records.newId(),
      application_id: applicationId,
      partner_test_id: partnerTestId,
      partner_interview_id: null,
      status: 'sent',
      partner_status: null,
      partner_score: null,
      partner_profile_url: null,
      metadata: null,
      patches: 0,
      refusedPatches: 0,
      responseErrors: [],
      pulls: [],
    };
    this.tests.push(test);
    return test;
  }

  /**
   * `PATCH /integrations/testing_partners/take_home_tests/:id`: taken (204) with the completion credential, then
   * `test_status` is called; 403 with the inbound key (as partners who reused it were answered); 401 otherwise.
   */
  public async patchCompleted(request: IncomingMessage, response: ServerResponse, id: number): Promise<void> {
    const test = this.tests.find((t) => t.id === id);
    if (!test) return sendJson(response, 404, { errors: ['no such take home test'] });
    const auth = request.headers.authorization;
    if (!this.partner || auth !== basic(this.partner.completionKey)) {
      const inbound = this.partner && auth === basic(this.partner.key);
      if (inbound) test.refusedPatches++;
      return sendJson(response, inbound ? 403 : 401, { errors: [inbound ? 'Forbidden' : 'Unauthorized'] });
    }
    test.patches++;
    response.writeHead(204).end();
    // Greenhouse then pulls the status, as it does after every PATCH.
    const pull = this.pullStatus(test)
      .catch((error: Error) => void test.pulls.push(`no answer: ${error.message}`))
      .finally(() => this.pending.delete(pull));
    this.pending.add(pull);
  }

  /** Waits (at most `timeoutMs`) for the pulls begun after PATCHes to finish: what Greenhouse shows then is final. */
  public async settled(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.pending.size > 0 && Date.now() < until)
      await Promise.race([
        Promise.allSettled([...this.pending]),
        new Promise((r) => setTimeout(r, until - Date.now()).unref()),
      ]);
  }

  /** `test_status`, checked as `response_error` describes; a malformed answer is reported back. */
  public async pullStatus(test: TakeHomeTest): Promise<void> {
    const query = `?partner_interview_id=${encodeURIComponent(test.partner_interview_id ?? '')}`;
    const answer = await this.call('test_status', 'GET', undefined, query);
    const parsed = v.safeParse(testStatusAnswer, answer.body);
    const errors: string[] = [];
    test.pulls.push(`${answer.status} ${parsed.success ? parsed.output.partner_status : 'unreadable'}`);
    if (answer.status !== 200 || !parsed.success) errors.push(`test_status answered ${answer.status} unreadably`);
    else if (parsed.output.partner_status === 'complete' && !parsed.output.partner_profile_url)
      errors.push("partner_status is 'complete' but partner_profile url is missing");
    if (errors.length || !parsed.success) {
      test.responseErrors.push(errors);
      return this.reportError('test_status', errors, test);
    }
    const status = parsed.output;
    test.partner_status = status.partner_status;
    if (status.partner_status !== 'complete') return;
    Object.assign(test, {
      status: 'complete',
      partner_score: status.partner_score ?? null,
      partner_profile_url: status.partner_profile_url ?? null,
      metadata: status.metadata ?? null,
    });
  }

  private async reportError(apiCall: string, errors: string[], test?: TakeHomeTest): Promise<void> {
    await this.call('response_error', 'POST', {
      api_call: apiCall,
      errors,
      partner_test_id: test?.partner_test_id ?? null,
      partner_interview_id: test?.partner_interview_id ?? null,
    }).catch(() => undefined);
  }

  private call(name: keyof PartnerUrls, method: string, body?: unknown, query = '') {
    if (!this.partner) throw new Error('no assessment partner is registered');
    return callAsAts(this.partner.urls[name] + query, { method, key: this.partner.key, body });
  }
}
