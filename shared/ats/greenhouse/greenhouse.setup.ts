import * as v from 'valibot';
import type { Connection } from '../../config';
import type { SetupPart } from '../adapter-base';
import type { AtsHttpClient } from '../ats-http';
import { firstItems, searchPages } from '../lists';
import type { AtsStage, SetupMethod } from '../port';
import { type GreenhouseReads, idText } from './greenhouse.reads';
import { jobInterviewStageSchema, jobSchema } from './greenhouse.schemas';
import type { GreenhouseToken } from './greenhouse.token';
import { GreenhouseAdapter } from './greenhouse.adapter';

/**
 * What the doctor needs of Greenhouse: the scopes and their probes, a token for the configured user, the open jobs and
 * their stages, and one application. No webhooks: Greenhouse has no webhook API for a customer's own connection.
 */
export class GreenhouseSetup implements SetupPart {
  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: GreenhouseReads,
    private readonly token: GreenhouseToken,
    private readonly connection: Connection,
  ) {}

  /**
   * Harvest v3 scopes (ats-facts, Corrections 2026-11b; harvestdocs /docs/authentication): reads are probed with one
   * item of each list; writes have no harmless probe.
   */
  public readonly requiredPermissions: SetupMethod<'requiredPermissions'> = (features) => {
    // A list scope, probed with one item of its list (`harvest:<resource>:list`, `GET /v3/<resource>`).
    const listed = (resource: string, feature: string) => ({
      permission: `harvest:${resource}:list`,
      feature,
      probe: (signal?: AbortSignal) =>
        this.http.request({ method: 'GET', path: `/v3/${resource}?per_page=1`, signal }, v.array(v.unknown())),
    });
    return [
      listed('applications', 'stage changes and the sweep'),
      listed('candidates', 'invitations (the candidate’s e-mail)'),
      listed('jobs', 'interview names and the sweep'),
      listed('job_interview_stages', 'stages by name'),
      listed('application_stages', 'the sweep'),
      listed('notes', 'notes found again after a retry'),
      { permission: 'harvest:notes:create', feature: 'the invite and report notes' },
      { permission: 'harvest:applications:move', feature: 'stage moves (writeBack.advance)' },
      ...(features.reportFile
        ? [
            listed('attachments', 'the report file found again after a retry'),
            { permission: 'harvest:attachments:create', feature: 'the report file (writeBack.attachReport)' },
          ]
        : []),
      ...(features.statusTags
        ? [
            listed('candidate_tags', 'status tags'),
            listed('applied_candidate_tags', 'status tags'),
            { permission: 'harvest:candidate_tags:create', feature: 'status tags' },
            { permission: 'harvest:applied_candidate_tags:create', feature: 'status tags' },
            { permission: 'harvest:applied_candidate_tags:destroy', feature: 'status tags' },
          ]
        : []),
    ];
  };

  /** A token for the configured user (`sub`), then one application read. */
  public readonly probeAccess: SetupMethod<'probeAccess'> = async (signal) => {
    await this.http.request({ method: 'GET', path: '/v3/applications?per_page=1', signal }, v.array(v.unknown()));
    return 'a token for the configured user, and GET /v3/applications';
  };

  /** The token is issued for `sub` (the configured user): Greenhouse refuses one for a user it does not have. */
  public readonly probeUser: SetupMethod<'probeUser'> = async (signal) => {
    await this.token.accessToken(signal, true);
    return { ok: true as const, what: `Greenhouse issues a token for user ${this.connection.atsUserId}` };
  };

  /** The open jobs, up to `limit`: `GET /v3/jobs?status=open` (v3 lists closed and draft ones too), every page. */
  public readonly listJobs: SetupMethod<'listJobs'> = async (limit, signal) => {
    return firstItems(
      this.reads.listPage(`/v3/jobs?status=open&per_page=${Math.min(500, Math.max(1, limit))}`, jobSchema, signal),
      limit,
      (j) => ({ id: String(j.id), name: j.name ?? `Job ${j.id}` }),
      'open jobs',
    );
  };

  public readonly listStages: SetupMethod<'listStages'> = async (jobId, signal) => {
    if (jobId === undefined) return [];
    const first = `/v3/job_interview_stages?job_ids=${encodeURIComponent(jobId)}&per_page=500`;
    const stages: AtsStage[] = [];
    await searchPages(
      this.reads.listPage(first, jobInterviewStageSchema, signal),
      (page) => void stages.push(...page.map((s) => ({ id: String(s.id), name: s.name }))),
      `stages of job ${jobId}`,
    );
    return stages;
  };

  /** `GET /v3/applications?ids=`, then its job's name and whether its candidate has an e-mail address. */
  public readonly readApplication: SetupMethod<'readApplication'> = async (applicationId, signal) => {
    const application = await this.reads.applicationRow(applicationId, signal);
    const jobId = idText(application.job_id) ?? '';
    const candidateId = idText(application.candidate_id) ?? '';
    const { jobs, candidates } = await this.reads.partiesOf([application], signal);
    return {
      atsApplicationId: applicationId,
      atsCandidateId: candidateId,
      atsJobId: jobId,
      jobName: jobs[0]?.name ?? undefined,
      stage: { id: idText(application.job_interview_stage_id), name: application.stage_name ?? undefined },
      hasEmail: (candidates[0]?.email_addresses.length ?? 0) > 0,
    };
  };
}

/** The Greenhouse adapter with the doctor's part (../setup-adapter.ts). */
export class GreenhouseSetupAdapter extends GreenhouseAdapter {
  public readonly setup = new GreenhouseSetup(this.http, this.reads, this.token, this.connection);
}
