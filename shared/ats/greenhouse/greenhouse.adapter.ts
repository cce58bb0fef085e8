import * as v from 'valibot';
import { type Connection, type ConnectionSecrets, type StageMatcher, stageIdForJob } from '../../config';
import { httpStatus } from '../../errors';
import { HTTP_DEFAULTS } from '../../http';
import { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import { firstItems, searchPages } from '../lists';
import {
  confirmAsParsed,
  type AtsAdapter,
  type AtsMethod,
  type AtsSetup,
  type AtsStage,
  type ExitKind,
  type SetupMethod,
} from '../port';
import { verifyHeaderSignature } from '../signatures';
import type { AtsAdapterOptions } from '../webhook-body';
import { APPLICATION_CHANGES, standingOf } from './greenhouse.lifecycle';
import { type ApplicationRow, GreenhouseReads, idText } from './greenhouse.reads';
import { jobInterviewStageSchema, jobSchema, noteCreatedSchema, noteSchema } from './greenhouse.schemas';
import { GreenhouseSweep } from './greenhouse.sweep';
import { GreenhouseTags } from './greenhouse.tags';
import { GreenhouseToken } from './greenhouse.token';
import { parseGreenhouseWebhook } from './greenhouse.webhooks';
import { greenhouseProfile } from './profile';

export { GREENHOUSE_DEFAULT_AUTH_URL } from './greenhouse.token';

export interface GreenhouseAdapterOptions extends AtsAdapterOptions {
  now?: () => number;
}

/**
 * Greenhouse on Harvest v3 (ats-facts §1): OAuth client credentials (greenhouse.token.ts), notes, stage moves, signed
 * webhooks (greenhouse.webhooks.ts), the sweep (greenhouse.sweep.ts) and status tags (greenhouse.tags.ts).
 */
export class GreenhouseAdapter implements AtsAdapter, AtsSetup {
  public readonly kind = 'greenhouse' as const;
  /** Tags belong to the candidate (Harvest `_tags.md`: "only candidates can be tagged"; Ashby candidate tags). */
  public readonly tagsCandidates = true;
  private readonly connection: Connection;
  private readonly secrets: ConnectionSecrets;
  private readonly token: GreenhouseToken;
  private readonly http: AtsHttpClient;
  private readonly reads: GreenhouseReads;
  private readonly sweep: GreenhouseSweep;
  private readonly tags: GreenhouseTags;
  /** Stage names per job change rarely; one lookup per job per warm function. */
  private readonly stageIds = new Map<string, string>();

  public constructor(options: GreenhouseAdapterOptions) {
    this.connection = options.connection;
    this.secrets = options.secrets;
    const fetchImpl = options.fetch ?? fetch;
    const timeoutMs = options.timeoutMs ?? HTTP_DEFAULTS.timeoutMs;
    const now = options.now ?? Date.now;
    const { connection, secrets } = options;
    this.token = new GreenhouseToken({ connection, secrets, fetch: fetchImpl, timeoutMs, now });
    this.http = AtsHttpClient.forAdapter(
      options,
      async (refresh) => `Bearer ${await this.token.accessToken(undefined, refresh)}`,
      { fetch: fetchImpl, timeoutMs, now },
    );
    this.reads = new GreenhouseReads(this.http);
    this.sweep = new GreenhouseSweep(this.reads);
    this.tags = new GreenhouseTags(this.http, this.reads);
  }

  /**
   * `Signature: sha256 <hex>`: HMAC-SHA256 of the raw body with the webhook's secret key. Greenhouse
   * unicode-escapes its JSON before signing, so only the bytes as received verify (webhooks/_introduction.md).
   */
  public readonly verifyWebhook: AtsMethod<'verifyWebhook'> = (request) =>
    verifyHeaderSignature(greenhouseProfile.signature, this.secrets.atsWebhookSecret, request);

  /** The whole body is signed and carries the job and the candidate: nothing to re-read. */
  public readonly confirmStageEntered: AtsMethod<'confirmStageEntered'> = (event) => {
    return confirmAsParsed(event);
  };

  public readonly parseWebhook: AtsMethod<'parseWebhook'> = (request) => parseGreenhouseWebhook(request);

  /**
   * `POST /v3/notes` ({candidate_id, application_id, body, note_type, visibility, user_id}); a note is on the
   * candidate. A 2xx is a note written, whatever the answer carries.
   */
  public readonly postNote: AtsMethod<'postNote'> = async (target, note, signal) => {
    const body = {
      candidate_id: Number(target.atsCandidateId) || target.atsCandidateId,
      application_id: Number(target.atsApplicationId) || target.atsApplicationId,
      body: `${note.body}\n\n[${note.marker}]`,
      note_type: 'NOTE',
      visibility: this.connection.writeBack.note.visibility,
      user_id: Number(this.connection.atsUserId) || this.connection.atsUserId,
    };
    const created = await this.http.write({ method: 'POST', path: '/v3/notes', body, signal }, noteCreatedSchema);
    return { noteId: idText(created?.id) };
  };

  /**
   * `GET /v3/notes?candidate_ids=` (v3 filters are plural id lists), every page: the next one is only in the
   * `Link` header, and a cursor request carries no other parameter (/docs/pagination).
   */
  public readonly findNote: AtsMethod<'findNote'> = async (target, marker, signal) => {
    const first = `/v3/notes?candidate_ids=${encodeURIComponent(target.atsCandidateId)}&per_page=500`;
    return searchPages(
      this.reads.listPage(first, noteSchema, signal),
      (notes) => {
        const found = notes.find((n) => n.body?.includes(marker));
        return found ? { noteId: String(found.id) } : undefined;
      },
      `notes of candidate ${target.atsCandidateId}`,
    );
  };

  /**
   * `POST /v3/applications/{id}/move {from_stage_id, to_stage_id}` answers 204. `from_stage_id` must be the
   * application's current `job_interview_stage_id` (422 otherwise), so it is read from the application just
   * before the move, never taken from the webhook: a retried move sees the application already in the target
   * stage and stops. The same read shows a rejected or hired application, which is never moved (Harvest moves
   * only active applications, `_applications.md`): answered unmoved with its exit, without the move call.
   */
  public readonly moveToStage: AtsMethod<'moveToStage'> = async (target, stage, signal) => {
    const stageId = await this.resolveStageId(stage, target.atsJobId, signal);
    const unmovedIfLeft = (application: ApplicationRow) => {
      const standing = standingOf(application);
      const current = idText(application.job_interview_stage_id) ?? '';
      return standing.active ? undefined : { moved: false, stageId: current, exit: standing.exit };
    };
    const move = async (): Promise<{ moved: boolean; stageId: string; exit?: ExitKind }> => {
      const application = await this.reads.applicationRow(target.atsApplicationId, signal);
      const left = unmovedIfLeft(application);
      if (left) return left;
      const current = idText(application.job_interview_stage_id);
      if (current === stageId) return { moved: false, stageId };
      await this.http.write(
        {
          method: 'POST',
          path: `/v3/applications/${encodeURIComponent(target.atsApplicationId)}/move`,
          body: { from_stage_id: Number(current) || current, to_stage_id: Number(stageId) || stageId },
          signal,
        },
        v.unknown(),
      );
      return { moved: true, stageId };
    };
    try {
      return await move();
    } catch (error) {
      // The application moved between the read and the move (a recruiter, or an earlier attempt whose answer
      // was lost), or was rejected or hired meanwhile: read it once more; out of the process it is unmoved with its
      // exit, in the target stage it is done, elsewhere the refusal stands.
      if (httpStatus(error) !== 422) throw error;
      const again = await this.reads.applicationRow(target.atsApplicationId, signal);
      const left = unmovedIfLeft(again);
      if (left) return left;
      if (idText(again.job_interview_stage_id) === stageId) return { moved: false, stageId };
      throw error;
    }
  };

  /**
   * The pre-reminder read of the lifecycle table (ats-routes.md, 2026-11c): `GET /v3/applications?ids=<id>`, its
   * `status` (`rejected`, `hired`, else still in process) and `job_interview_stage_id` (harvestdocs
   * /reference/get_v3-applications).
   */
  public readonly readStanding: AtsMethod<'readStanding'> = async (target, signal) => {
    return standingOf(await this.reads.applicationRow(target.atsApplicationId, signal));
  };

  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'> = (query, cursor, signal) =>
    this.sweep.listApplicationsInStage(query, cursor, signal);

  public readonly setStatusTag: AtsMethod<'setStatusTag'> = (target, tag, others, signal) =>
    this.tags.setStatusTag(target, tag, others, signal);

  /** A stage in v3's `job_interview_stage_id` namespace: per job (`idsByJob`), a global id, or by exact name. */
  public async resolveStageId(stage: StageMatcher, jobId: string, signal?: AbortSignal): Promise<string> {
    const known = stageIdForJob(stage, jobId) ?? stage.id;
    if (known !== undefined) return known;
    if (stage.name === undefined)
      throw new AtsError(ATS_ERROR_CODES.invalidRequest, `no stage is configured for job ${jobId} (idsByJob or name)`);
    return this.stageIdByName(jobId, stage.name, signal);
  }

  /**
   * Greenhouse has no webhook API for a customer's own connection: the customer creates them in Dev Center (ats-facts
   * §1.1; `/v3/webhooks` is partners-only, Corrections 2026-11b). The stage change, a candidate leaving or coming back
   * (webhooks/_candidate_events.md), and the privacy signals.
   */
  public readonly webhookEvents: readonly string[] = [
    'candidate_stage_change',
    ...Object.keys(APPLICATION_CHANGES),
    'delete_candidate',
    'merge_candidate',
    'candidate_anonymized',
  ];

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

  /** Stage names are per job: `GET /v3/job_interview_stages?job_ids=`, every page, cached per warm function. */
  private async stageIdByName(jobId: string, name: string, signal?: AbortSignal): Promise<string> {
    const cached = this.stageIds.get(`${jobId}#${name}`);
    if (cached) return cached;
    const first = `/v3/job_interview_stages?job_ids=${encodeURIComponent(jobId)}&per_page=500`;
    const found = await searchPages(
      this.reads.listPage(first, jobInterviewStageSchema, signal),
      (stages) => {
        for (const stage of stages) this.stageIds.set(`${jobId}#${stage.name}`, String(stage.id));
        return stages.find((s) => s.name === name);
      },
      `stages of job ${jobId}`,
    );
    if (!found) throw new AtsError(ATS_ERROR_CODES.invalidRequest, `job ${jobId} has no stage named "${name}"`);
    return String(found.id);
  }
}
