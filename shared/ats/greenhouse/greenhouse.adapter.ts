import * as v from 'valibot';
import { type Connection, type ConnectionSecrets, type StageMatcher, stageIdForJob } from '../../config';
import { HTTP_DEFAULTS, parseRetryAfter, redactUrl, sendHttpRequest } from '../../http';
import { verifyHeaderSignature } from '../signatures';
import { greenhouseProfile } from './profile';
import { AtsHttpClient, basicAuth, safeJson } from '../ats-http';
import { deliveryIdOf } from '../../validation';
import { readPart, readWebhookBody, type AtsAdapterOptions } from '../webhook-body';
import { AtsError, ATS_ERROR_CODES, atsErrorForStatus } from '../errors';
import {
  confirmAsParsed,
  type AtsMethod,
  type SetupMethod,
  type AtsAdapter,
  type AtsSetup,
  type AtsStage,
  type StageQuery,
  sweepDeliveryId,
  type CandidateDeletedEvent,
  type ExitKind,
  type StageEnteredEvent,
  type WebhookParseResult,
} from '../port';
import { firstItems, readCursor, searchPages, validItems, writeCursor } from '../lists';
import {
  applicationSchema,
  candidateAnonymizedSchema,
  candidateDeletedSchema,
  candidateMergedSchema,
  candidateStageChangeSchema,
  greenhouseEnvelopeSchema,
  candidateSchema,
  emailAddressSchema,
  jobInterviewStageSchema,
  jobSchema,
  tagSchema,
  appliedTagSchema,
  applicationStageSchema,
  noteCreatedSchema,
  noteSchema,
  tokenResponseSchema,
} from './greenhouse.schemas';
import { errorCode, errorMessage, httpStatus } from '../../errors';
import { APPLICATION_CHANGES, readApplicationChange, standingOf } from './greenhouse.lifecycle';

export const GREENHOUSE_DEFAULT_AUTH_URL = 'https://auth.greenhouse.io/token';
/** Tokens are refreshed this long before Greenhouse says they expire. */
const TOKEN_REFRESH_MARGIN_MS = 60_000;
/** A v3 id filter takes at most 50 ids (/docs/list-endpoints). */
const MAX_FILTER_IDS = 50;
/**
 * An application still open: v3 records show `in_process` (the filter's own word is `active`); rejected, hired,
 * converted and the rest are left alone by the sweep.
 */
const OPEN_APPLICATION_STATUSES: ReadonlySet<string> = new Set(['in_process', 'active']);

export interface GreenhouseAdapterOptions extends AtsAdapterOptions {
  now?: () => number;
}

type ApplicationRow = v.InferOutput<typeof applicationSchema>;

const idText = (value: string | number | null | undefined): string | undefined =>
  value === null || value === undefined ? undefined : String(value);

/** Greenhouse on Harvest v3 (ats-facts §1): OAuth client credentials, notes, stage moves, signed webhooks. */
export class GreenhouseAdapter implements AtsAdapter, AtsSetup {
  public readonly kind = 'greenhouse' as const;
  /** Tags belong to the candidate (Harvest `_tags.md`: "only candidates can be tagged"; Ashby candidate tags). */
  public readonly tagsCandidates = true;
  private readonly connection: Connection;
  private readonly secrets: ConnectionSecrets;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly now: () => number;
  private token: { value: string; refreshAt: number } | undefined;
  private tokenRequest: Promise<string> | undefined;
  private readonly http: AtsHttpClient;
  /** Stage names per job change rarely; one lookup per job per warm function. */
  private readonly stageIds = new Map<string, string>();
  private readonly tagIds = new Map<string, string>();

  public constructor(options: GreenhouseAdapterOptions) {
    this.connection = options.connection;
    this.secrets = options.secrets;
    this.fetchImpl = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? HTTP_DEFAULTS.timeoutMs;
    this.now = options.now ?? Date.now;
    this.http = AtsHttpClient.forAdapter(
      options,
      async (refresh) => `Bearer ${await this.accessToken(undefined, refresh)}`,
      { fetch: this.fetchImpl, timeoutMs: this.timeoutMs, now: this.now },
    );
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

  public readonly parseWebhook: AtsMethod<'parseWebhook'> = (request) => {
    const read = readWebhookBody(request.rawBody, greenhouseEnvelopeSchema);
    if (!read.ok) return read.result;
    const envelope = read.value;
    if (envelope.action === 'ping') return { kind: 'ping' };
    const deliveryId = deliveryIdOf(
      request.headers[greenhouseProfile.signature.deliveryHeader.toLowerCase()],
      request.rawBody,
    );
    const privacy = readPrivacySignal(envelope.action, envelope.payload);
    if (privacy)
      return privacy.ok ? { kind: 'candidate-deleted', event: { deliveryId, ...privacy.value } } : privacy.result;
    const changed = readApplicationChange(envelope.action, envelope.payload, deliveryId);
    if (changed) return changed;
    if (envelope.action !== 'candidate_stage_change')
      return { kind: 'ignored', reason: `action ${envelope.action} is not handled` };
    const parsed = readPart(envelope.payload, candidateStageChangeSchema, 'payload');
    if (!parsed.ok) return parsed.result;
    const application = parsed.value.application;
    const job = application.jobs?.[0];
    if (application.prospect || !job) return { kind: 'ignored', reason: 'a prospect without a job' };
    // A rejected or hired application is out of the process whatever stage it shows: never a stage entry (its own
    // reject_candidate / hire_candidate webhook says it left).
    if (application.status && application.status !== 'active')
      return { kind: 'ignored', reason: `application is ${application.status}` };
    const candidate = application.candidate;
    const email =
      candidate.email_addresses?.find((e) => e.type === 'personal')?.value ?? candidate.email_addresses?.[0]?.value;
    return {
      kind: 'stage-entered',
      event: {
        deliveryId,
        atsJobId: String(job.id),
        jobName: job.name ?? undefined,
        atsApplicationId: String(application.id),
        atsCandidateId: String(candidate.id),
        stage: { id: idText(application.current_stage?.id), name: application.current_stage?.name ?? undefined },
        candidate: { name: [candidate.first_name, candidate.last_name].filter(Boolean).join(' '), email },
      },
    };
  };

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
      this.listPage(first, noteSchema, signal),
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
      const application = await this.applicationRow(target.atsApplicationId, signal);
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
      const again = await this.applicationRow(target.atsApplicationId, signal);
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
    return standingOf(await this.applicationRow(target.atsApplicationId, signal));
  };

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
    await this.accessToken(signal, true);
    return { ok: true as const, what: `Greenhouse issues a token for user ${this.connection.atsUserId}` };
  };

  /** The open jobs, up to `limit`: `GET /v3/jobs?status=open` (v3 lists closed and draft ones too), every page. */
  public readonly listJobs: SetupMethod<'listJobs'> = async (limit, signal) => {
    return firstItems(
      this.listPage(`/v3/jobs?status=open&per_page=${Math.min(500, Math.max(1, limit))}`, jobSchema, signal),
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
      this.listPage(first, jobInterviewStageSchema, signal),
      (page) => void stages.push(...page.map((s) => ({ id: String(s.id), name: s.name }))),
      `stages of job ${jobId}`,
    );
    return stages;
  };

  /** `GET /v3/applications?ids=`, then its job's name and whether its candidate has an e-mail address. */
  public readonly readApplication: SetupMethod<'readApplication'> = async (applicationId, signal) => {
    const application = await this.applicationRow(applicationId, signal);
    const jobId = idText(application.job_id) ?? '';
    const candidateId = idText(application.candidate_id) ?? '';
    const { jobs, candidates } = await this.partiesOf([application], signal);
    return {
      atsApplicationId: applicationId,
      atsCandidateId: candidateId,
      atsJobId: jobId,
      jobName: jobs[0]?.name ?? undefined,
      stage: { id: idText(application.job_interview_stage_id), name: application.stage_name ?? undefined },
      hasEmail: (candidates[0]?.email_addresses.length ?? 0) > 0,
    };
  };

  /**
   * The applications in the trigger's stage now, found as Harvest v3 documents it (ats-facts, Corrections 2026-11b):
   * the stage's `job_interview_stage_id`s (configured, or resolved by name over the trigger's jobs or every open
   * job with `GET /v3/job_interview_stages?job_ids=`), then `GET /v3/application_stages?job_interview_stage_ids=
   * <≤50>&current=true`, 50 rows a page by the `Link` header, then the rows' applications, candidates and jobs by
   * the plural id filters (/docs/list-endpoints). The place over the chunks of stage ids and their pages is the
   * connector's own cursor, so the stage is resolved once per pass.
   */
  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'> = async (query, cursor, signal) => {
    const position = cursor
      ? readCursor(cursor, { ids: [] as string[], chunk: 0, next: '' })
      : { ids: await this.stageIdsOf(query, signal), chunk: 0, next: '' };
    const chunk = position.ids.slice(position.chunk * MAX_FILTER_IDS, (position.chunk + 1) * MAX_FILTER_IDS);
    if (!chunk.length) return { events: [], next: undefined };
    const first = `/v3/application_stages?${new URLSearchParams({
      job_interview_stage_ids: chunk.join(','),
      current: 'true',
      per_page: '50',
    }).toString()}`;
    const page = await this.http.page({ method: 'GET', path: position.next || first, signal }, v.array(v.unknown()));
    const rows = validItems(page.body, applicationStageSchema).filter((r) => !r.exited_at);
    const stageOf = new Map(rows.map((r) => [idText(r.application_id), idText(r.job_interview_stage_id)]));
    const applicationIds = [...stageOf.keys()].filter((id): id is string => Boolean(id));
    const read = applicationIds.length
      ? await this.idsRead(
          `/v3/applications?ids=${applicationIds.map(encodeURIComponent).join(',')}`,
          applicationSchema,
          signal,
        )
      : [];
    // Only open applications of the trigger's jobs: a rejected or hired one left in the stage is not invited.
    const applications = read.filter(
      (a) =>
        (!a.status || OPEN_APPLICATION_STATUSES.has(a.status)) &&
        (query.jobs === 'all' || query.jobs.includes(idText(a.job_id) ?? '')),
    );
    const { jobs, candidates } = await this.partiesOf(applications, signal);
    const events: StageEnteredEvent[] = applications.map((a) => {
      const candidate = candidates.find((c) => String(c.id) === idText(a.candidate_id));
      const stageId = stageOf.get(String(a.id)) ?? idText(a.job_interview_stage_id);
      const name = [candidate?.first_name, candidate?.last_name].filter(Boolean).join(' ');
      return {
        deliveryId: sweepDeliveryId(String(a.id), stageId),
        atsJobId: idText(a.job_id),
        jobName: jobs.find((j) => String(j.id) === idText(a.job_id))?.name ?? undefined,
        atsApplicationId: String(a.id),
        atsCandidateId: idText(a.candidate_id) ?? '',
        stage: { id: stageId, name: a.stage_name ?? undefined },
        candidate: {
          name: name || undefined,
          email: validItems(candidate?.email_addresses ?? [], emailAddressSchema)[0]?.value,
        },
      };
    });
    const next = page.next
      ? { ...position, next: page.next }
      : (position.chunk + 1) * MAX_FILTER_IDS < position.ids.length
        ? { ids: position.ids, chunk: position.chunk + 1, next: '' }
        : undefined;
    return { events, next: next && writeCursor(next) };
  };

  /**
   * The `job_interview_stage_id`s a stage matcher names: the configured ids, or those of the stages with its exact
   * name among the trigger's jobs (every open job for `all`: `GET /v3/jobs?status=open`, every page).
   */
  private async stageIdsOf(query: StageQuery, signal?: AbortSignal): Promise<string[]> {
    const configured = [...Object.values(query.stage.idsByJob ?? {}), ...(query.stage.id ? [query.stage.id] : [])];
    if (configured.length || query.stage.name === undefined) return [...new Set(configured)];
    let jobIds = query.jobs === 'all' ? [] : [...query.jobs];
    if (query.jobs === 'all')
      await searchPages(
        this.listPage('/v3/jobs?status=open&per_page=500', jobSchema, signal),
        (page) => void jobIds.push(...page.map((j) => String(j.id))),
        'open jobs',
      );
    jobIds = [...new Set(jobIds)];
    const ids: string[] = [];
    for (let start = 0; start < jobIds.length; start += MAX_FILTER_IDS) {
      const jobs = jobIds
        .slice(start, start + MAX_FILTER_IDS)
        .map(encodeURIComponent)
        .join(',');
      await searchPages(
        this.listPage(`/v3/job_interview_stages?job_ids=${jobs}&per_page=500`, jobInterviewStageSchema, signal),
        (page) => void ids.push(...page.filter((s) => s.name === query.stage.name).map((s) => String(s.id))),
        'stages of the jobs',
      );
    }
    return [...new Set(ids)];
  }

  /**
   * The status as a candidate tag, by Harvest v3's two tag resources (ats-facts, Corrections 2026-11b;
   * harvestdocs /reference/get_v3-applied-candidate-tags): the rows of tags applied to the candidate
   * (`GET /v3/applied_candidate_tags?candidate_ids=`); a row of another status is removed by the row's own id
   * (`DELETE /v3/applied_candidate_tags/{id}`), and the status applied (`POST /v3/applied_candidate_tags
   * {candidate_id, candidate_tag_id}`) unless a row has it. Tag ids come from the organisation's tags
   * (`GET /v3/candidate_tags`, every page, once per warm function and again only for a tag it has not seen;
   * `POST {name}` only for a name not listed, as
   * whether Greenhouse answers an existing name with that tag is undocumented). Never a `/v1/` route: Harvest v1
   * is out of service and refuses a v3 token.
   */
  public readonly setStatusTag: AtsMethod<'setStatusTag'> = async (target, tag, others, signal) => {
    const candidateId = Number(target.atsCandidateId) || target.atsCandidateId;
    const rows = await this.appliedTags(target.atsCandidateId, signal);
    // The catalogue is listed again only when the candidate holds a tag this function has not seen (another
    // function may have created it since), or the status's own tag is not known yet: once a call (and once more
    // after a create another function won).
    const known = new Set(this.tagIds.values());
    const listed = rows.some((r) => !known.has(String(r.candidate_tag_id)));
    if (listed) await this.listTags(signal);
    const otherIds = new Set(others.map((name) => this.tagIds.get(name)).filter((id) => id !== undefined));
    for (const row of rows.filter((r) => otherIds.has(String(r.candidate_tag_id)))) {
      try {
        await this.http.write(
          { method: 'DELETE', path: `/v3/applied_candidate_tags/${encodeURIComponent(String(row.id))}`, signal },
          v.unknown(),
        );
      } catch (error) {
        // Removed already (a retry after a lost answer): what was asked for holds.
        if (errorCode(error) !== ATS_ERROR_CODES.notFound) throw error;
      }
    }
    // No status to show (a candidate who left, where the connection shows none): the others removed, nothing added.
    if (tag === undefined) return;
    const tagId = await this.candidateTagId(tag, listed, signal);
    if (rows.some((r) => String(r.candidate_tag_id) === tagId)) return;
    try {
      await this.http.write(
        {
          method: 'POST',
          path: '/v3/applied_candidate_tags',
          body: { candidate_id: candidateId, candidate_tag_id: Number(tagId) || tagId },
          signal,
        },
        v.unknown(),
      );
    } catch (error) {
      // A refusal after an earlier attempt whose answer was lost: applied, if the candidate's rows say so.
      if (httpStatus(error) !== 422) throw error;
      const again = await this.appliedTags(target.atsCandidateId, signal);
      if (!again.some((r) => String(r.candidate_tag_id) === tagId)) throw error;
    }
  };

  /** The rows of tags applied to a candidate, every page. */
  private async appliedTags(candidateId: string, signal?: AbortSignal) {
    const rows: v.InferOutput<typeof appliedTagSchema>[] = [];
    await searchPages(
      this.listPage(
        `/v3/applied_candidate_tags?candidate_ids=${encodeURIComponent(candidateId)}&per_page=500`,
        appliedTagSchema,
        signal,
      ),
      (page) => void rows.push(...page),
      `tags of candidate ${candidateId}`,
    );
    return rows;
  }

  /** The organisation's tags (`GET /v3/candidate_tags`, every page), into this function's map of names to ids. */
  private async listTags(signal?: AbortSignal): Promise<void> {
    const listed = new Map<string, string>();
    await searchPages(
      this.listPage('/v3/candidate_tags?per_page=500', tagSchema, signal),
      (page) => {
        for (const t of page) listed.set(t.name, String(t.id));
        return undefined;
      },
      'candidate tags',
    );
    // Swapped in whole: a call running beside this one never reads a map half filled.
    this.tagIds.clear();
    for (const [name, id] of listed) this.tagIds.set(name, id);
  }

  /**
   * A status tag's id by its name: from the list (read again when the name is unknown, unless `listed` just now), or
   * created when the list has no such tag.
   */
  private async candidateTagId(name: string, listed: boolean, signal?: AbortSignal): Promise<string> {
    if (!this.tagIds.has(name) && !listed) await this.listTags(signal);
    const known = this.tagIds.get(name);
    if (known !== undefined) return known;
    try {
      const created = await this.http.write(
        { method: 'POST', path: '/v3/candidate_tags', body: { name }, signal },
        tagSchema,
      );
      if (created) {
        this.tagIds.set(name, String(created.id));
        return String(created.id);
      }
    } catch (error) {
      // Another worker created it since the list was read (or an earlier attempt did, its answer lost): the list,
      // read again, has it.
      if (httpStatus(error) !== 422) throw error;
    }
    await this.listTags(signal);
    const found = this.tagIds.get(name);
    if (found === undefined) throw new AtsError(ATS_ERROR_CODES.malformedResponse, `no candidate tag "${name}"`);
    return found;
  }

  /** The applications' candidates and jobs, one read each by the plural id filters (at most 50 ids a read). */
  private async partiesOf(applications: readonly v.InferOutput<typeof applicationSchema>[], signal?: AbortSignal) {
    const ids = (values: (string | number | null | undefined)[]) =>
      [...new Set(values.map(idText).filter((x): x is string => Boolean(x)))].map(encodeURIComponent).join(',');
    const candidateIds = ids(applications.map((a) => a.candidate_id));
    const jobIds = ids(applications.map((a) => a.job_id));
    const [candidates, jobs] = await Promise.all([
      candidateIds ? this.idsRead(`/v3/candidates?ids=${candidateIds}`, candidateSchema, signal) : [],
      jobIds ? this.idsRead(`/v3/jobs?ids=${jobIds}`, jobSchema, signal) : [],
    ]);
    return { candidates, jobs };
  }

  private async idsRead<T>(path: string, item: v.GenericSchema<unknown, T>, signal?: AbortSignal): Promise<T[]> {
    return validItems(await this.http.request({ method: 'GET', path, signal }, v.array(v.unknown())), item);
  }

  /** `GET /v3/applications?ids=` (a list, even of one; no `/v3/applications/{id}` is documented): one application. */
  private async applicationRow(applicationId: string, signal?: AbortSignal): Promise<ApplicationRow> {
    const list = await this.http.request(
      { method: 'GET', path: `/v3/applications?ids=${encodeURIComponent(applicationId)}`, signal },
      v.array(v.unknown()),
    );
    const application = validItems(list, applicationSchema).find((a) => String(a.id) === applicationId);
    if (!application) throw new AtsError(ATS_ERROR_CODES.notFound, `Greenhouse has no application ${applicationId}`);
    return application;
  }

  /** Stage names are per job: `GET /v3/job_interview_stages?job_ids=`, every page, cached per warm function. */
  private async stageIdByName(jobId: string, name: string, signal?: AbortSignal): Promise<string> {
    const cached = this.stageIds.get(`${jobId}#${name}`);
    if (cached) return cached;
    const first = `/v3/job_interview_stages?job_ids=${encodeURIComponent(jobId)}&per_page=500`;
    const found = await searchPages(
      this.listPage(first, jobInterviewStageSchema, signal, true),
      (stages) => {
        for (const stage of stages) this.stageIds.set(`${jobId}#${stage.name}`, String(stage.id));
        return stages.find((s) => s.name === name);
      },
      `stages of job ${jobId}`,
    );
    if (!found) throw new AtsError(ATS_ERROR_CODES.invalidRequest, `job ${jobId} has no stage named "${name}"`);
    return String(found.id);
  }

  /**
   * One page of a v3 list (a bare array, the items read one by one): `first` for the first page, then the URL the
   * `Link` header named.
   */
  private listPage<T>(
    first: string,
    item: v.GenericSchema<unknown, T>,
    signal: AbortSignal | undefined,
    cacheFill = false,
  ) {
    return async (next: string | undefined) => {
      const request = { method: 'GET' as const, path: next ?? first, signal, cacheFill };
      const page = await this.http.page(request, v.array(v.unknown()));
      return { page: validItems(page.body, item), next: page.next };
    };
  }

  /**
   * The access token, asked for once for the calls that need one at the same moment: one token in use at a time,
   * so the calls share one rate-limit window however the ATS counts them (the sandbox counts them per token).
   */
  private accessToken(signal?: AbortSignal, force = false): Promise<string> {
    if (!force && this.token && this.token.refreshAt > this.now()) return Promise.resolve(this.token.value);
    this.tokenRequest ??= this.requestToken(signal).finally(() => {
      this.tokenRequest = undefined;
    });
    return this.tokenRequest;
  }

  private async requestToken(signal?: AbortSignal): Promise<string> {
    const { atsClientId, atsClientSecret } = this.secrets;
    if (!atsClientId || !atsClientSecret)
      throw new AtsError(
        ATS_ERROR_CODES.unauthorized,
        `connection ${this.connection.id}: atsClientId and atsClientSecret are required for Greenhouse`,
      );
    const url = this.connection.atsAuthUrl ?? GREENHOUSE_DEFAULT_AUTH_URL;
    const response = await sendHttpRequest(
      {
        url,
        method: 'POST',
        headers: {
          authorization: basicAuth(atsClientId, atsClientSecret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', sub: this.connection.atsUserId }).toString(),
        timeoutMs: this.timeoutMs,
        signal,
      },
      this.fetchImpl,
    ).catch((error: unknown) => {
      throw new AtsError(ATS_ERROR_CODES.unavailable, `token request failed: ${errorMessage(error)}`, {
        cause: error,
      });
    });
    if (response.status !== 200)
      throw atsErrorForStatus(
        { status: response.status, retryAfterMs: parseRetryAfter(response.headers) },
        `POST ${redactUrl(url)}`,
        '',
      );
    const token = v.safeParse(tokenResponseSchema, safeJson(response.bodyText));
    if (!token.success) throw new AtsError(ATS_ERROR_CODES.malformedResponse, 'token response has no access_token');
    this.token = { value: token.output.access_token, refreshAt: this.refreshTime(token.output) };
    return this.token.value;
  }

  /** Greenhouse says when a token ends (`expires_at`); it is renewed a minute before. */
  private refreshTime(token: v.InferOutput<typeof tokenResponseSchema>): number {
    const expiresAt = token.expires_at === undefined ? Number.NaN : Date.parse(token.expires_at);
    const ends = Number.isFinite(expiresAt) ? expiresAt : this.now() + (token.expires_in ?? 3600) * 1000;
    return Math.max(this.now(), ends - TOKEN_REFRESH_MARGIN_MS);
  }
}

type PrivacySignal =
  | { ok: true; value: Omit<CandidateDeletedEvent, 'deliveryId'> }
  | { ok: false; result: WebhookParseResult };

/**
 * The webhooks after which Greenhouse no longer holds a candidate's data as it was: deleted, merged into another
 * record (sent instead of `delete_candidate` when both are configured), or anonymised. Each is a purge.
 */
function readPrivacySignal(action: string, payload: unknown): PrivacySignal | undefined {
  if (action === 'delete_candidate') {
    const read = readPart(payload, candidateDeletedSchema, 'payload');
    if (!read.ok) return read;
    const { person } = read.value;
    return {
      ok: true,
      value: {
        atsCandidateId: String(person.id),
        atsApplicationIds: (person.deleted_application_ids ?? []).map(String),
      },
    };
  }
  if (action === 'merge_candidate') {
    const read = readPart(payload, candidateMergedSchema, 'payload');
    // The applications moved to the record that stays: only the merged-away candidate's records go.
    return read.ok
      ? { ok: true, value: { atsCandidateId: String(read.value.person.id), atsApplicationIds: [] } }
      : read;
  }
  if (action === 'candidate_anonymized') {
    const read = readPart(payload, candidateAnonymizedSchema, 'payload');
    return read.ok
      ? { ok: true, value: { atsCandidateId: String(read.value.candidate_id), atsApplicationIds: [] } }
      : read;
  }
  return undefined;
}
