import * as v from 'valibot';
import { json, type Route } from '../../http-kit';
import { PartnerClient, type KitApplication, type KitContext } from '../ats-sandbox-kit';
import { Refusal } from '../edge';

const ASHBY = 'https://app.ashbyhq.com';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
type Result = { identifier: string; label: string; type: string; value: string | number | boolean };
/** An assessment activity on an application, as Ashby shows it under the stage: `Started` once the partner says so. */
const activity = (assessment_id: string, applicationId: string, assessmentTypeId: string) => ({
  ...{ assessment_id, applicationId, assessmentTypeId, updates: 0, metadata: [] as unknown[] },
  status: 'Requested' as 'Requested' | 'Started' | 'Completed' | 'Cancelled',
  ...{ result: null as Result | null, profileUrl: null as string | null, cancelledReason: null as string | null },
});
type AshbyAssessment = ReturnType<typeof activity>;

const ITEM_TYPES = ['numeric_score', 'numeric_duration_minutes', 'url', 'string', 'boolean_success'] as const;
const item = v.object({
  identifier: v.pipe(v.string(), v.nonEmpty()),
  label: v.pipe(v.string(), v.nonEmpty()),
  description: v.optional(v.string()),
  type: v.picklist(ITEM_TYPES),
  value: v.union([v.string(), v.number(), v.boolean()]),
});
const updateBody = v.object({
  assessment_id: v.pipe(v.string(), v.nonEmpty()),
  timestamp: v.pipe(v.number(), v.integer()),
  assessment_status: v.optional(item),
  assessment_profile_url: v.optional(item),
  assessment_result: v.optional(item),
  cancelled_reason: v.optional(item),
  metadata: v.optional(v.array(item)),
});
type Update = v.InferOutput<typeof updateBody>;
/** Ashby answers HTTP 200 with `success` either way, the errors inside the body. */
export const fail = (error: unknown) => ({ success: false, errors: [error] });

/** `assessment.start` with the fields it requires. */
function startBody(kit: KitContext, application: KitApplication, assessment_type_id: string) {
  const { candidate: c, job } = kit.parties(application);
  const candidate = { ashby_id: c.id, first_name: c.firstName, last_name: c.lastName, email: c.email };
  return {
    ...{ assessment_type_id, candidate: { ...candidate, ashby_profile_url: `${ASHBY}/candidates/${c.id}` } },
    application: { ashby_id: application.id, status: 'Active' },
    job: { ashby_id: job.id, name: job.name, ashby_job_url: `${ASHBY}/jobs/${job.id}`, hiringTeam: [] },
  };
}

/** Why Ashby refuses a well-formed update, if it does. */
function refusal(update: Update): string | undefined {
  if (!update.cancelled_reason && !update.assessment_status)
    return 'invalid_input: assessment_status is required unless cancelled_reason is set';
  if (update.assessment_result && update.assessment_profile_url?.type !== 'url')
    return 'invalid_input: assessment_profile_url (of type url) is required with assessment_result';
  const ids = (update.metadata ?? []).map((m) => m.identifier);
  if (new Set(ids).size !== ids.length) return 'invalid_input: metadata identifiers must be unique';
  return undefined;
}

/** The activity after an accepted update: cancelled, completed with its result, or started. */
function applyUpdate(found: AshbyAssessment, update: Update): void {
  found.updates++;
  found.metadata = update.metadata ?? found.metadata;
  if (update.cancelled_reason) {
    Object.assign(found, { status: 'Cancelled', cancelledReason: String(update.cancelled_reason.value) });
  } else if (update.assessment_result) {
    const profileUrl = String(update.assessment_profile_url?.value);
    Object.assign(found, { status: 'Completed', result: update.assessment_result, profileUrl });
  } else if (update.assessment_status?.value === 'Started') found.status = 'Started';
}

/**
 * Ashby's side of Ashby Assessments (assessment-partner facts, 2 and 5): it calls the partner's `assessment.*` with
 * the partner's key as Basic username; `assessment.update` takes the customer's key with `candidatesWrite` (else 403).
 */
export class AshbyAssessments extends PartnerClient<{ baseUrl: string; key: string }> {
  public readonly assessments: AshbyAssessment[] = [];
  /** Whether the customer's API key carries `candidatesWrite` (an admin can take it away). */
  public candidatesWrite = true;
  /** Stages whose assessment activity has "Automate on Stage Entry" on, with the assessment type it starts. */
  public readonly automated = new Map<string, string>();
  private kit: KitContext | undefined;

  /** A candidate entered a stage: its automated assessment starts, as a recruiter's "Start Assessment" would. */
  public async stageEntered(applicationId: string, stageName: string): Promise<void> {
    const assessmentTypeId = this.automated.get(stageName);
    if (assessmentTypeId && this.partner) await this.start({ applicationId, assessmentTypeId });
  }

  public async list(): Promise<{ assessment_type_id: string; name: string }[]> {
    const answer = await this.rpc('assessment.list', {});
    const results = (answer.body as { results?: { assessment_type_id: string; name: string }[] }).results;
    if (answer.status !== 200 || !Array.isArray(results)) throw new Error(`assessment.list answered ${answer.status}`);
    return results;
  }

  /** "Start Assessment" (or "Automate on Stage Entry"): 200 makes the activity; 409 and 422 go to the recruiter. */
  public async start(input: { applicationId: string; assessmentTypeId: string }) {
    const application = this.kit?.application(input.applicationId);
    if (!this.kit || !application) throw new Error(`no application ${input.applicationId}`);
    const answer = await this.rpc('assessment.start', startBody(this.kit, application, input.assessmentTypeId));
    const body = answer.body as { results?: { assessment_id?: unknown }; message?: string } | undefined;
    const id = body?.results?.assessment_id;
    if (answer.status !== 200 || typeof id !== 'string') return { status: answer.status, message: body?.message };
    // Ashby's assessment OpenAPI types `assessment_id` `format: uuid`: anything else is no activity.
    if (!UUID.test(id)) return { status: 502, message: `assessment_id ${id} is not a uuid` };
    if (!this.assessments.some((a) => a.assessment_id === id))
      this.assessments.push(activity(id, application.id, input.assessmentTypeId));
    return { status: 200, assessment_id: id };
  }

  /** A recruiter cancels the activity: `assessment.cancel`. */
  public async cancel(assessmentId: string): Promise<number> {
    const answer = await this.rpc('assessment.cancel', { assessment_id: assessmentId });
    const found = this.assessments.find((a) => a.assessment_id === assessmentId);
    if (answer.status === 200 && found) found.status = 'Cancelled';
    return answer.status;
  }

  /** `POST /assessment.update` on Ashby's API, with its rules, over the sandbox's records. */
  public route(kit: KitContext): Route {
    this.kit = kit;
    return json('POST /assessment.update', async ({ request }) => {
      if (!this.candidatesWrite) throw new Refusal(403, fail('missing_endpoint_permission'));
      const parsed = v.safeParse(updateBody, await kit.json(request));
      if (!parsed.success) return fail(`invalid_input: ${parsed.issues[0]?.message ?? 'body'}`);
      const found = this.assessments.find((a) => a.assessment_id === parsed.output.assessment_id);
      if (!found) return fail('assessment_not_found');
      const problem = refusal(parsed.output);
      if (problem) return fail(problem);
      applyUpdate(found, parsed.output);
      return { success: true, results: {} };
    });
  }

  private rpc(name: string, body: unknown) {
    return this.call((partner) => `${partner.baseUrl}/${name}`, 'POST', body);
  }
}
