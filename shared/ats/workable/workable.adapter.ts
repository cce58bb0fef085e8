import * as v from 'valibot';
import { type Connection, type ConnectionSecrets, type StageMatcher, stageIdForJob } from '../../config';
import type { AtsAdapterOptions } from '../webhook-body';
import { verifyHeaderSignature } from '../signatures';
import { workableProfile } from './profile';
import { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import {
  confirmAsParsed,
  type AtsMethod,
  type ApplicationRef,
  type SetupMethod,
  type AtsAdapter,
  type AtsJob,
  type AtsSetup,
  type RegisteredWebhook,
  sweepDeliveryId,
  type StageEnteredEvent,
} from '../port';
import { firstItems, readCursor, searchPages, validItems, writeCursor } from '../lists';
import {
  activitiesSchema,
  activitySchema,
  candidateSchema,
  candidateTagsSchema,
  candidateViewSchema,
  jobCandidatesSchema,
  listedCandidateSchema,
  jobSchema,
  jobsSchema,
  jobStageSchema,
  jobStagesSchema,
  memberSchema,
  membersSchema,
  subscriptionCreatedSchema,
  subscriptionSchema,
  subscriptionsSchema,
} from './workable.schemas';
import { standingOfCandidate, type WorkableJobStage } from './workable.standing';
import { parseCandidateMoved } from './workable.webhook';

export type WorkableAdapterOptions = AtsAdapterOptions;

/**
 * Workable SPI v3 (ats-facts §4): bearer token, 10 requests per 10 s, writes attributed to a member. A stage has
 * two names: webhooks and candidate reads give its display name ("AI Interview"), moves and the job's stage list
 * its slug ("ai-interview"). Triggers and rules may use either; each call gets the one it needs.
 */
/** "All jobs" in a sweep: every published job, up to 20 pages of 100 (the lists' page cap). */
const MAX_SWEPT_JOBS = 2_000;

export class WorkableAdapter implements AtsAdapter, AtsSetup {
  public readonly kind = 'workable' as const;
  private readonly connection: Connection;
  private readonly secrets: ConnectionSecrets;
  private readonly http: AtsHttpClient;
  /** Per job: the stages as `{slug, name, kind}`, read once per warm function. */
  private readonly jobStages = new Map<string, WorkableJobStage[]>();
  /** Some trigger names its stage by slug: a stage-entered event then needs the slug of the stage it names. */
  private readonly triggersBySlug: boolean;
  private sweepJobs: Promise<AtsJob[]> | undefined;

  public constructor(options: WorkableAdapterOptions) {
    this.connection = options.connection;
    this.secrets = options.secrets;
    this.triggersBySlug = options.connection.triggers.some((t) => t.stage.id !== undefined || t.stage.idsByJob);
    this.http = AtsHttpClient.forAdapter(options, async () => `Bearer ${options.secrets.atsApiKey ?? ''}`);
  }

  /**
   * HMAC-SHA256 of the raw body with the account token or the OAuth app secret, in its profile's header. Workable
   * does not state the encoding and neither has been confirmed against a live account: hex and base64 are
   * both accepted, each compared in constant time.
   */
  public readonly verifyWebhook: AtsMethod<'verifyWebhook'> = (request) =>
    verifyHeaderSignature(workableProfile.signature, this.secrets.atsWebhookSecret, request);

  /** Read only after `verifyWebhook`; see workable.webhook.ts for what each `candidate_moved` becomes. */
  public readonly parseWebhook: AtsMethod<'parseWebhook'> = (request) => parseCandidateMoved(request.rawBody);

  /**
   * The webhook is signed over its whole body, so what it says stands; where a trigger names its stage by slug
   * (`id` or `idsByJob`), the slug of the stage the webhook names is looked up in the job's stage list.
   */
  public readonly confirmStageEntered: AtsMethod<'confirmStageEntered'> = async (event, signal) => {
    if (!this.triggersBySlug || event.stage.id !== undefined || !event.atsJobId || event.stage.name === undefined)
      return confirmAsParsed(event);
    const name = event.stage.name;
    const stage = (await this.stagesOf(event.atsJobId, signal)).find((s) => s.name === name);
    return confirmAsParsed({ ...event, stage: { id: stage?.slug, name } });
  };

  /**
   * `POST /spi/v3/candidates/{id}/comments {member_id, comment: {body}}` (reference: comment-on-candidate), which
   * answers 201 with an empty body: a comment written, with no id to keep.
   */
  public readonly postNote: AtsMethod<'postNote'> = async (target, note, signal) => {
    const body = { member_id: this.connection.atsUserId, comment: { body: `${note.body}\n\n[${note.marker}]` } };
    const created = await this.http.write(
      {
        method: 'POST',
        path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}/comments`,
        body,
        signal,
      },
      v.object({ id: v.string() }),
    );
    return { noteId: created?.id };
  };

  /**
   * Workable has no comment list: comments are the candidate's activities with `action: "comment"`
   * (reference: candidate-activities), paged by `paging.next`.
   */
  public readonly findNote: AtsMethod<'findNote'> = async (target, marker, signal) => {
    const first = `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}/activities?limit=100`;
    return searchPages(
      async (next) => {
        const page = await this.http.request({ method: 'GET', path: next ?? first, signal }, activitiesSchema);
        return { page: validItems(page.activities, activitySchema), next: page.paging?.next ?? undefined };
      },
      (activities) => {
        const found = activities.find((a) => a.action === 'comment' && a.body?.includes(marker));
        return found ? { noteId: String(found.id) } : undefined;
      },
      `activities of candidate ${target.atsCandidateId}`,
    );
  };

  /**
   * `POST /spi/v3/candidates/{id}/move {member_id, target_stage}` with the stage's slug (reference: move-candidate).
   * The candidate read names its stage, so "already there" compares names; a candidate it shows disqualified or
   * hired is left where they are.
   */
  public readonly moveToStage: AtsMethod<'moveToStage'> = async (target, stage, signal) => {
    const wanted = await this.resolveStage(stage, target.atsJobId, signal);
    const { candidate } = await this.readCandidate(target, signal);
    const stages = await this.stagesOf(target.atsJobId, signal);
    const standing = standingOfCandidate(candidate, stages);
    if (!standing.active) {
      const stageId = stages.find((s) => s.name === candidate.stage)?.slug ?? '';
      return { moved: false, stageId, exit: standing.exit };
    }
    if (candidate.stage === wanted.name) return { moved: false, stageId: wanted.slug };
    await this.http.write(
      {
        method: 'POST',
        path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}/move`,
        body: { member_id: this.connection.atsUserId, target_stage: wanted.slug },
        signal,
      },
      v.unknown(),
    );
    return { moved: true, stageId: wanted.slug };
  };

  /**
   * `GET /spi/v3/candidates/{id}` (reference: job-candidates-show; the lifecycle's pre-reminder read): one read, no
   * stage list; the stage's slug is given only where this job's stages are already held.
   */
  public readonly readStanding: AtsMethod<'readStanding'> = async (target, signal) => {
    const { candidate } = await this.readCandidate(target, signal);
    return standingOfCandidate(candidate, this.jobStages.get(target.atsJobId));
  };

  /**
   * One subscription for `candidate_moved` on every job and stage (reference: webhook-subscriptions): no `args`, so
   * moves out of a stage, disqualifications and hires reach the connector too (Workable has no event of their own).
   */
  public readonly webhookEvents = ['candidate_moved'] as const;

  /**
   * Workable token scopes (reference: /docs/tag-candidate, webhook-subscriptions): `r_jobs` and `r_candidates`
   * probed with one item of each list; `w_candidates` (comments, moves, tags) has no harmless probe.
   */
  public readonly requiredPermissions: SetupMethod<'requiredPermissions'> = (features) => {
    const read = (path: string) => (signal?: AbortSignal) =>
      this.http.request({ method: 'GET', path, signal }, v.unknown());
    return [
      { permission: 'r_jobs', feature: 'jobs, stages and the sweep', probe: read('/spi/v3/jobs?limit=1') },
      {
        permission: 'r_candidates',
        feature: 'stage changes, the sweep and webhook subscriptions',
        probe: read('/spi/v3/candidates?limit=1'),
      },
      {
        permission: 'w_candidates',
        feature: features.statusTags ? 'the invite and report comments, moves, status tags' : 'comments and moves',
      },
    ];
  };

  public readonly probeAccess: SetupMethod<'probeAccess'> = async (signal) => {
    await this.http.request({ method: 'GET', path: '/spi/v3/jobs?limit=1', signal }, jobsSchema);
    return 'GET /spi/v3/jobs';
  };

  /**
   * `GET /members?status=all`, every page by `paging.next` (the list is 50 active members a page by default:
   * reference: members): comments and moves are made as `member_id`, who must be an active member.
   */
  public readonly probeUser: SetupMethod<'probeUser'> = async (signal) => {
    const member = await searchPages(
      async (next) => {
        const path = next ?? '/spi/v3/members?status=all&limit=100';
        const page = await this.http.request({ method: 'GET', path, signal }, membersSchema);
        return { page: validItems(page.members, memberSchema), next: page.paging?.next ?? undefined };
      },
      (page) => page.find((m) => m.id === this.connection.atsUserId),
      'members',
    );
    if (!member)
      return { ok: false as const, reason: `Workable has no member ${this.connection.atsUserId}`, checkable: true };
    if (member.active === false)
      return { ok: false as const, reason: `member ${this.connection.atsUserId} is not active`, checkable: true };
    return { ok: true as const, what: `Workable member ${this.connection.atsUserId}` };
  };

  /**
   * The account's published jobs, up to `limit`: `GET /jobs?state=published&limit=100`, each page by its
   * `paging.next`. Workable lists jobs oldest first in every state unless `state` says (reference: jobs; ats-facts,
   * Corrections 2026-11b), so a first page alone would miss the newest open ones.
   */
  public readonly listJobs: SetupMethod<'listJobs'> = async (limit, signal) => {
    return firstItems(
      async (next) => {
        const path = next ?? `/spi/v3/jobs?state=published&limit=${Math.min(100, Math.max(1, limit))}`;
        const page = await this.http.request({ method: 'GET', path, signal }, jobsSchema);
        return { page: validItems(page.jobs, jobSchema), next: page.paging?.next ?? undefined };
      },
      limit,
      (j) => ({ id: j.shortcode, name: j.title ?? j.shortcode }),
      'published jobs',
    );
  };

  /** A stage's id is its slug (what a move takes); its name is what the UI and the webhooks show. */
  public readonly listStages: SetupMethod<'listStages'> = async (jobId, signal) => {
    if (jobId === undefined) return [];
    return (await this.stagesOf(jobId, signal)).map((s) => ({ id: s.slug, name: s.name }));
  };

  public readonly readApplication: SetupMethod<'readApplication'> = async (applicationId, signal) => {
    const { candidate } = await this.http.request(
      { method: 'GET', path: `/spi/v3/candidates/${encodeURIComponent(applicationId)}`, signal },
      candidateViewSchema,
    );
    const slug = (await this.stagesOf(candidate.job.shortcode, signal)).find((s) => s.name === candidate.stage)?.slug;
    return {
      atsApplicationId: candidate.id,
      atsCandidateId: candidate.id,
      atsJobId: candidate.job.shortcode,
      jobName: candidate.job.title ?? undefined,
      stage: { id: slug, name: candidate.stage },
      hasEmail: Boolean(candidate.email),
    };
  };

  public readonly listWebhooks: SetupMethod<'listWebhooks'> = async (_knownIds, signal) => {
    const list = await this.http.request({ method: 'GET', path: '/spi/v3/subscriptions', signal }, subscriptionsSchema);
    return validItems(list.subscriptions, subscriptionSchema).map(
      (s): RegisteredWebhook => ({
        id: String(s.id),
        event: s.event,
        url: s.target,
        enabled: s.status ? s.status === 'active' : undefined,
      }),
    );
  };

  /**
   * `POST /subscriptions {target, event}` (no `args`: every job and stage). Workable signs its deliveries with the
   * account's API token (reference: webhooks), so that token becomes the connection's webhook secret.
   */
  public readonly createWebhook: SetupMethod<'createWebhook'> = async (input, signal) => {
    const created = await this.http.write(
      { method: 'POST', path: '/spi/v3/subscriptions', body: { target: input.url, event: input.event }, signal },
      subscriptionCreatedSchema,
    );
    return { id: created ? String(created.id) : '?', issuedSecret: this.secrets.atsApiKey };
  };

  /**
   * `GET /candidates?shortcode=<job>&stage=<slug>&limit=100` (reference: job-candidates-index), job by job (a
   * trigger's jobs, or every published job for "all"), each list by its `paging.next`. A job without the stage is
   * skipped; disqualified candidates are left out.
   */
  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'> = async (query, cursor, signal) => {
    const position = readCursor(cursor, { job: 0, next: '' });
    // The job's title names its interview, as the webhook's `job.title` does. Read at the start of each pass (a job
    // published since is swept), and kept while the pass goes on, so its place in the list holds.
    if (!cursor) this.sweepJobs = undefined;
    this.sweepJobs ??= this.listJobs(MAX_SWEPT_JOBS, signal).catch((error: unknown) => {
      this.sweepJobs = undefined;
      throw error;
    });
    const listed = await this.sweepJobs;
    const jobs = query.jobs === 'all' ? listed.map((j) => j.id) : [...query.jobs];
    const shortcode = jobs[position.job];
    const events: StageEnteredEvent[] = [];
    let pageNext: string | undefined;
    if (shortcode !== undefined) {
      const stage = await this.resolveStage(query.stage, shortcode, signal).catch((error: unknown) => {
        if (error instanceof AtsError && error.code === ATS_ERROR_CODES.invalidRequest) return undefined;
        throw error;
      });
      if (stage) {
        const first = `/spi/v3/candidates?${new URLSearchParams({ shortcode, stage: stage.slug, limit: '100' })}`;
        const page = await this.http.request(
          { method: 'GET', path: position.next || first, signal },
          jobCandidatesSchema,
        );
        pageNext = page.paging?.next ?? undefined;
        for (const candidate of validItems(page.candidates, listedCandidateSchema)) {
          if (candidate.disqualified) continue;
          events.push({
            deliveryId: sweepDeliveryId(candidate.id, stage.slug),
            atsJobId: shortcode,
            jobName: listed.find((j) => j.id === shortcode)?.name,
            atsApplicationId: candidate.id,
            atsCandidateId: candidate.id,
            stage: { id: stage.slug, name: stage.name },
            candidate: { name: candidate.name ?? undefined, email: candidate.email ?? undefined },
          });
        }
      }
    }
    let next: string | undefined;
    if (pageNext) next = writeCursor({ job: position.job, next: pageNext });
    else if (position.job + 1 < jobs.length) next = writeCursor({ job: position.job + 1, next: '' });
    return { events, next };
  };

  /**
   * The status as a candidate tag: `PUT /candidates/{id}/tags {tags}` replaces the candidate's tags (reference:
   * candidate-tags), so the current ones are read first and only the status tags change; unchanged, nothing is sent.
   */
  public readonly setStatusTag: AtsMethod<'setStatusTag'> = async (target, tag, others, signal) => {
    const path = `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}`;
    const current = (await this.http.request({ method: 'GET', path, signal }, candidateTagsSchema)).candidate.tags;
    const kept = current.filter((t) => t !== tag && !others.includes(t));
    // No tag: the others removed only (a candidate who left shows no status).
    const next = tag === undefined ? kept : [...kept, tag];
    const tagShown = tag === undefined || current.includes(tag);
    if (tagShown && current.every((t) => !others.includes(t))) return;
    await this.http.write(
      { method: 'PUT', path: `${path}/tags`, body: { tags: next }, signal, idempotent: true },
      v.unknown(),
    );
  };

  /** A configured stage (slug per job, slug, or name) as both the slug and the name of the job's stage. */
  public async resolveStage(
    stage: StageMatcher,
    shortcode: string,
    signal?: AbortSignal,
  ): Promise<{ slug: string; name: string }> {
    const slug = stageIdForJob(stage, shortcode) ?? stage.id;
    const stages = await this.stagesOf(shortcode, signal);
    const found = stages.find((s) => (slug === undefined ? s.name === stage.name : s.slug === slug));
    if (!found)
      throw new AtsError(
        ATS_ERROR_CODES.invalidRequest,
        `job ${shortcode} has no stage ${slug === undefined ? `named "${stage.name}"` : `with slug ${slug}`}`,
      );
    return found;
  }

  /** `GET /spi/v3/candidates/{id}`: the candidate's stage by name, and whether they were disqualified or hired. */
  private readCandidate(target: ApplicationRef, signal?: AbortSignal) {
    return this.http.request(
      { method: 'GET', path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}`, signal },
      candidateSchema,
    );
  }

  private async stagesOf(shortcode: string, signal?: AbortSignal): Promise<WorkableJobStage[]> {
    const cached = this.jobStages.get(shortcode);
    if (cached) return cached;
    const list = await this.http.request(
      { method: 'GET', path: `/spi/v3/jobs/${encodeURIComponent(shortcode)}/stages`, signal },
      jobStagesSchema,
    );
    const stages = validItems(list.stages, jobStageSchema);
    this.jobStages.set(shortcode, stages);
    return stages;
  }
}
