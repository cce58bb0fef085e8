import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { sendJson } from '../../http-kit';
import { basicAuth } from '../../../../../shared/ats/ats-http';
import { PartnerClient, type KitCandidate, type KitContext } from '../ats-sandbox-kit';
import type { GreenhouseRecords } from './state';

export const PARTNER_CALL_NAMES = ['list_tests', 'send_test', 'test_status', 'response_error'] as const;
export type PartnerUrls = Record<(typeof PARTNER_CALL_NAMES)[number], string>;
/** `key` the partner issued the customer; `completionKey` Greenhouse issued the partner for the completion PATCH. */
type PartnerRegistration = { urls: PartnerUrls; key: string; completionKey: string };
type Metadata = Record<string, string | number | boolean | null>;
/**
 * A partner test sent for an application, as Greenhouse keeps it: `sent` until a valid `complete` answer, then what
 * `test_status` said; the completion PATCHes taken and refused (a wrong credential); what Greenhouse reported back
 * through `response_error`; each `test_status` pull after a PATCH, as it went.
 */
const takeHomeTest = (id: number, application_id: number, partner_test_id: string) => ({
  ...{ id, application_id, partner_test_id, partner_interview_id: null as string | null },
  ...{ status: 'sent' as 'sent' | 'complete', partner_status: null as string | null },
  ...{ partner_score: null as number | null, partner_profile_url: null as string | null },
  ...{ metadata: null as Metadata | null, patches: 0, refusedPatches: 0 },
  ...{ responseErrors: [] as string[][], pulls: [] as string[] },
});
export type TakeHomeTest = ReturnType<typeof takeHomeTest>;
/** The candidate as `send_test` nests it: absent values `null`, and a field the partner does not know. */
const sentCandidate = (c: KitCandidate, applicationId: number) => ({
  ...{ first_name: c.firstName, last_name: c.lastName, preferred_name: null, resume_url: null, phone_number: null },
  email: c.email || null,
  greenhouse_profile_url: `https://app.greenhouse.io/people/${c.id}?application_id=${applicationId}`,
  pronouns: null,
});
const listTestsAnswer = v.array(v.object({ partner_test_id: v.string(), partner_test_name: v.string() }));
const testStatusAnswer = v.object({
  partner_status: v.string(),
  partner_profile_url: v.nullish(v.string()),
  partner_score: v.nullish(v.number()),
  metadata: v.nullish(v.record(v.string(), v.union([v.string(), v.number(), v.boolean(), v.null()]))),
});

/**
 * Greenhouse's side of the Assessment Partner API (assessment-partner facts, 1 and 5): it calls the partner's URLs
 * with the customer's key as Basic username, takes the completion PATCH only with the credential it issued, then
 * checks `test_status` as `response_error` describes, POSTing `response_error` when it is malformed.
 */
export class GreenhouseAssessments extends PartnerClient<PartnerRegistration> {
  public readonly tests: TakeHomeTest[] = [];
  /** The `test_status` pulls Greenhouse has begun after a PATCH and not yet finished. */
  private readonly pending = new Set<Promise<void>>();

  public constructor(
    private readonly kit: () => KitContext,
    private readonly records: GreenhouseRecords,
  ) {
    super();
  }

  /** What the "Edit Take Home Test" picker shows: the partner's `list_tests`, checked to be a bare array. */
  public async listTests(): Promise<{ partner_test_id: string; partner_test_name: string }[]> {
    const answer = await this.partnerCall('list_tests', 'GET');
    const parsed = v.safeParse(listTestsAnswer, answer.body);
    if (answer.status === 200 && parsed.success) return parsed.output;
    await this.reportError('list_tests', [`list_tests answered ${answer.status}, not an array of tests`]);
    throw new Error(`list_tests answered ${answer.status}`);
  }

  /** "Send Test": the same take-home test (and url) on a second click; `newTest`, a new one (a resend after expiry). */
  public async sendTest(input: { application_id: number | string; partner_test_id: string; newTest?: boolean }) {
    const [kit, partner_test_id] = [this.kit(), input.partner_test_id];
    const application = kit.application(String(input.application_id));
    if (!application) throw new Error(`application_id: no application ${input.application_id}`);
    const applicationId = Number(application.id);
    const same = (t: TakeHomeTest) => t.application_id === applicationId && t.partner_test_id === partner_test_id;
    const fresh = () => takeHomeTest(Number(this.records.newId()), applicationId, partner_test_id);
    const test = (!input.newTest && this.tests.findLast(same)) || fresh();
    if (!this.tests.includes(test)) this.tests.push(test);
    const answer = await this.partnerCall('send_test', 'POST', {
      ...{ partner_test_id, candidate: sentCandidate(kit.parties(application).candidate, applicationId) },
      sent_by: 'recruiter@demo.example.com',
      url: `${kit.files.origin}/integrations/testing_partners/take_home_tests/${test.id}`,
    });
    const id = (answer.body as { partner_interview_id?: unknown } | undefined)?.partner_interview_id;
    if (answer.status !== 200 || typeof id !== 'string')
      throw new Error(`send_test answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    test.partner_interview_id = id;
    return test;
  }

  /** The completion PATCH: 204 with the completion credential, then `test_status`; 403 with the inbound key. */
  public async patchCompleted(request: IncomingMessage, response: ServerResponse, id: number): Promise<void> {
    const test = this.tests.find((t) => t.id === id);
    if (!test) return sendJson(response, 404, { errors: ['no such take home test'] });
    const auth = request.headers.authorization;
    if (!this.partner || auth !== basicAuth(this.partner.completionKey)) {
      const inbound = this.partner && auth === basicAuth(this.partner.key);
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
    const timeout = () => new Promise((r) => setTimeout(r, until - Date.now()).unref());
    while (this.pending.size > 0 && Date.now() < until)
      await Promise.race([Promise.allSettled(this.pending), timeout()]);
  }

  /** `test_status`, checked as `response_error` describes; a malformed answer is reported back. */
  private async pullStatus(test: TakeHomeTest): Promise<void> {
    const query = `?partner_interview_id=${encodeURIComponent(test.partner_interview_id ?? '')}`;
    const answer = await this.partnerCall('test_status', 'GET', undefined, query);
    const parsed = v.safeParse(testStatusAnswer, answer.body);
    test.pulls.push(`${answer.status} ${parsed.success ? parsed.output.partner_status : 'unreadable'}`);
    const status = answer.status === 200 && parsed.success ? parsed.output : undefined;
    const errors = !status
      ? [`test_status answered ${answer.status} unreadably`]
      : status.partner_status === 'complete' && !status.partner_profile_url
        ? ["partner_status is 'complete' but partner_profile url is missing"]
        : [];
    if (!status || errors.length) {
      test.responseErrors.push(errors);
      return this.reportError('test_status', errors, test);
    }
    const { partner_status, partner_score = null, partner_profile_url = null, metadata = null } = status;
    test.partner_status = partner_status;
    if (partner_status === 'complete')
      Object.assign(test, { status: 'complete', partner_score, partner_profile_url, metadata });
  }

  private async reportError(api_call: string, errors: string[], test?: TakeHomeTest): Promise<void> {
    const [partner_test_id, partner_interview_id] = [test?.partner_test_id ?? null, test?.partner_interview_id ?? null];
    const body = { api_call, errors, partner_test_id, partner_interview_id };
    await this.partnerCall('response_error', 'POST', body).catch(() => undefined);
  }

  private partnerCall(name: keyof PartnerUrls, method: string, body?: unknown, query = '') {
    return this.call((partner) => partner.urls[name] + query, method, body);
  }
}
