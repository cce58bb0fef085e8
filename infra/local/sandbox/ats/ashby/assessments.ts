import type { ServerResponse } from 'node:http';
import * as v from 'valibot';
import { callAsAts, sendJson, type Route } from '../../http-kit';
import type { KitContext } from '../ats-sandbox-kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * Ashby's side of Ashby Assessments (assessment-partner facts, sections 2 and 5): Ashby calls the partner's
 * `assessment.list`, `assessment.start` and `assessment.cancel` at the base URL the partner gave it, with the
 * partner's key as the Basic username, and serves `assessment.update` to the partner under the customer's API key,
 * which needs `candidatesWrite` (403 `missing_endpoint_permission` without it).
 */
export interface AshbyPartnerRegistration {
  baseUrl: string;
  key: string;
}

/** An assessment activity on an application, as Ashby shows it under the stage. */
export interface AshbyAssessment {
  assessment_id: string;
  applicationId: string;
  assessmentTypeId: string;
  /** `Started` once the partner says so; `Completed` once a result came; `Cancelled` by either side. */
  status: 'Requested' | 'Started' | 'Completed' | 'Cancelled';
  result: { identifier: string; label: string; type: string; value: string | number | boolean } | null;
  profileUrl: string | null;
  cancelledReason: string | null;
  metadata: unknown[];
  updates: number;
}

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

/** The activity after an accepted update: cancelled, completed with its result, or started. */
function applyUpdate(found: AshbyAssessment, update: v.InferOutput<typeof updateBody>): void {
  found.updates++;
  found.metadata = update.metadata ?? found.metadata;
  if (update.cancelled_reason) {
    Object.assign(found, { status: 'Cancelled', cancelledReason: String(update.cancelled_reason.value) });
  } else if (update.assessment_result) {
    const profileUrl = String(update.assessment_profile_url?.value);
    Object.assign(found, { status: 'Completed', result: update.assessment_result, profileUrl });
  } else if (update.assessment_status?.value === 'Started') found.status = 'Started';
}

const failed = (response: ServerResponse, error: string, status = 200) =>
  sendJson(response, status, { success: false, errors: [error] });

export class AshbyAssessments {
  public readonly assessments: AshbyAssessment[] = [];
  /** Whether the customer's API key carries `candidatesWrite` (an admin can take it away). */
  public candidatesWrite = true;
  private partner: AshbyPartnerRegistration | undefined;
  private kit: KitContext | undefined;

  public attach(kit: KitContext): void {
    this.kit = kit;
  }

  public register(partner: AshbyPartnerRegistration): void {
    this.partner = partner;
  }

  /** Stages whose assessment activity has "Automate on Stage Entry" on, with the assessment type it starts. */
  public readonly automated = new Map<string, string>();

  /** A candidate entered a stage: its automated assessment starts, as a recruiter's "Start Assessment" would. */
  public async stageEntered(applicationId: string, stageName: string): Promise<void> {
    const assessmentTypeId = this.automated.get(stageName);
    if (assessmentTypeId && this.partner) await this.start({ applicationId, assessmentTypeId });
  }

  public async list(): Promise<{ assessment_type_id: string; name: string }[]> {
    const answer = await this.call('assessment.list', {});
    const results = (answer.body as { results?: { assessment_type_id: string; name: string }[] }).results;
    if (answer.status !== 200 || !Array.isArray(results)) throw new Error(`assessment.list answered ${answer.status}`);
    return results;
  }

  /**
   * "Start Assessment" on the application (or "Automate on Stage Entry"): `assessment.start` with the required
   * fields. 200 makes the activity; 409 and 422 are shown to the recruiter (answered as `{status, message}`).
   */
  public async start(input: { applicationId: string; assessmentTypeId: string }) {
    const kit = this.need(this.kit);
    const application = kit.application(input.applicationId);
    if (!application) throw new Error(`no application ${input.applicationId}`);
    const { candidate, job } = kit.parties(application);
    const answer = await this.call('assessment.start', {
      assessment_type_id: input.assessmentTypeId,
      candidate: {
        ashby_id: candidate.id,
        first_name: candidate.firstName,
        last_name: candidate.lastName,
        email: candidate.email,
        ashby_profile_url: `https://app.ashbyhq.com/candidates/${candidate.id}`,
      },
      application: { ashby_id: application.id, status: 'Active' },
      job: {
        ashby_id: job.id,
        name: job.name,
        ashby_job_url: `https://app.ashbyhq.com/jobs/${job.id}`,
        hiringTeam: [],
      },
    });
    const id = (answer.body as { results?: { assessment_id?: unknown } } | undefined)?.results?.assessment_id;
    if (answer.status !== 200 || typeof id !== 'string')
      return { status: answer.status, message: (answer.body as { message?: string } | undefined)?.message };
    // Ashby's assessment OpenAPI types `assessment_id` `format: uuid`: anything else is no activity.
    if (!UUID.test(id)) return { status: 502, message: `assessment_id ${id} is not a uuid` };
    if (!this.assessments.some((a) => a.assessment_id === id))
      this.assessments.push({
        assessment_id: id,
        applicationId: application.id,
        assessmentTypeId: input.assessmentTypeId,
        status: 'Requested',
        result: null,
        profileUrl: null,
        cancelledReason: null,
        metadata: [],
        updates: 0,
      });
    return { status: 200, assessment_id: id };
  }

  /** A recruiter cancels the activity: `assessment.cancel`. */
  public async cancel(assessmentId: string): Promise<number> {
    const answer = await this.call('assessment.cancel', { assessment_id: assessmentId });
    const found = this.assessments.find((a) => a.assessment_id === assessmentId);
    if (answer.status === 200 && found) found.status = 'Cancelled';
    return answer.status;
  }

  /** `POST /assessment.update` on Ashby's API, with its rules. */
  public route(): Route {
    return {
      method: 'POST',
      pattern: '/assessment.update',
      handle: async ({ request, response }) => {
        if (!this.candidatesWrite) return failed(response, 'missing_endpoint_permission', 403);
        const parsed = v.safeParse(updateBody, await this.need(this.kit).json(request));
        if (!parsed.success) return failed(response, `invalid_input: ${parsed.issues[0]?.message ?? 'body'}`);
        const update = parsed.output;
        const found = this.assessments.find((a) => a.assessment_id === update.assessment_id);
        if (!found) return failed(response, 'assessment_not_found');
        const problem = this.refusal(update);
        if (problem) return failed(response, problem);
        applyUpdate(found, update);
        sendJson(response, 200, { success: true, results: {} });
      },
    };
  }

  private refusal(update: v.InferOutput<typeof updateBody>): string | undefined {
    if (!update.cancelled_reason && !update.assessment_status)
      return 'invalid_input: assessment_status is required unless cancelled_reason is set';
    if (update.assessment_result && update.assessment_profile_url?.type !== 'url')
      return 'invalid_input: assessment_profile_url (of type url) is required with assessment_result';
    const ids = (update.metadata ?? []).map((m) => m.identifier);
    if (new Set(ids).size !== ids.length) return 'invalid_input: metadata identifiers must be unique';
    return undefined;
  }

  private need<T>(value: T | undefined): T {
    if (value === undefined) throw new Error('Ashby assessments are not set up');
    return value;
  }

  private call(name: string, body: unknown) {
    const partner = this.need(this.partner);
    return callAsAts(`${partner.baseUrl}/${name}`, { method: 'POST', key: partner.key, body });
  }
}
