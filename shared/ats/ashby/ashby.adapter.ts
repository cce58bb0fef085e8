import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { type ConnectionSecrets, stageIdForJob, stageMatches } from '../../config';
import { verifyHeaderSignature } from '../signatures';
import { ashbyProfile } from './profile';
import { readPart, readWebhookBody, type AtsAdapterOptions } from '../webhook-body';
import { AtsHttpClient, basicAuth } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import { firstItems, readCursor, searchPages, validItems, writeCursor } from '../lists';
import {
  confirmAsParsed,
  type AtsMethod,
  type SetupMethod,
  type AtsAdapter,
  type AtsSetup,
  type RegisteredWebhook,
  sweepDeliveryId,
  type StageEnteredEvent,
} from '../port';
import {
  applicationInfoSchema,
  applicationListSchema,
  ashbyEnvelopeSchema,
  candidateDeleteSchema,
  candidateMergeSchema,
  candidateStageChangeSchema,
  candidateTagsSchema,
  interviewStagesSchema,
  jobInfoSchema,
  jobListSchema,
  jobSchema,
  noteResultSchema,
  notesListSchema,
  rpcEnvelopeSchema,
  tagCreatedSchema,
  tagListSchema,
  tagSchema,
  webhookInfoSchema,
} from './ashby.schemas';
import { APPLICATION_PLACE_ACTIONS, applicationChangeOf, exitOf, standingOf } from './ashby.lifecycle';

export type AshbyAdapterOptions = AtsAdapterOptions;

/** Ashby (ats-facts §3): RPC-style POSTs with Basic auth, signed webhooks, errors inside HTTP 200. */
export class AshbyAdapter implements AtsAdapter, AtsSetup {
  public readonly kind = 'ashby' as const;
  /** Tags belong to the candidate (Harvest `_tags.md`: "only candidates can be tagged"; Ashby candidate tags). */
  public readonly tagsCandidates = true;
  private readonly secrets: ConnectionSecrets;
  private readonly http: AtsHttpClient;
  private readonly stageIds = new Map<string, string>();
  private readonly tagIds = new Map<string, string>();

  public constructor(options: AshbyAdapterOptions) {
    this.secrets = options.secrets;
    this.http = AtsHttpClient.forAdapter(options, async () => basicAuth(options.secrets.atsApiKey ?? ''), {
      // Ashby refuses inside HTTP 200 (`success: false`); any other 2xx answer is an acceptance, and a read
      // still checks its `results` against its own schema.
      failureInBody: (body) => {
        const envelope = v.safeParse(rpcEnvelopeSchema, body);
        if (!envelope.success || envelope.output.success) return undefined;
        const errors = envelope.output.errors ?? envelope.output.errorInfo ?? '';
        return `success: false ${JSON.stringify(errors).slice(0, 200)}`;
      },
    });
  }

  /**
   * HMAC-SHA256 of the raw body with the secret token, in the header its profile names (docs: authenticating-webhooks).
   */
  public readonly verifyWebhook: AtsMethod<'verifyWebhook'> = (request) =>
    verifyHeaderSignature(ashbyProfile.signature, this.secrets.atsWebhookSecret, request);

  public readonly parseWebhook: AtsMethod<'parseWebhook'> = (request) => {
    const envelope = readWebhookBody(request.rawBody, ashbyEnvelopeSchema);
    if (!envelope.ok) return envelope.result;
    const { action } = envelope.value;
    if (action === 'ping') return { kind: 'ping' };
    const deliveryOf = (key: string) =>
      envelope.value.webhookActionId ?? `derived:${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
    // Privacy signals: the candidate is gone (deleted) or merged into another record; either way, forgotten.
    const gone =
      action === 'candidateDelete'
        ? readPart(envelope.value.data, candidateDeleteSchema, 'data')
        : action === 'candidateMerge'
          ? readPart(envelope.value.data, candidateMergeSchema, 'data')
          : undefined;
    if (gone) {
      if (!gone.ok) return gone.result;
      const atsCandidateId = 'candidate' in gone.value ? gone.value.candidate.id : gone.value.deletedCandidate.id;
      const deliveryId = deliveryOf(`${action}|${atsCandidateId}`);
      return { kind: 'candidate-deleted', event: { deliveryId, atsCandidateId, atsApplicationIds: [] } };
    }
    if (!APPLICATION_PLACE_ACTIONS.includes(action))
      return { kind: 'ignored', reason: `action ${action} is not handled` };
    // An exit (a move into an Archived-type stage, a hire) or its undo, never a stage entry.
    const changed = applicationChangeOf(action, envelope.value.data, envelope.value.webhookActionId);
    if (changed) return changed;
    // A stage move also fires applicationUpdate (docs: related-webhooks); candidateStageChange carries the entry.
    const parsed = readPart(envelope.value.data, candidateStageChangeSchema, 'data');
    if (!parsed.ok) return parsed.result;
    const { application } = parsed.value;
    if (application.status && application.status !== 'Active')
      return { kind: 'ignored', reason: `application is ${application.status}` };
    // `webhookActionId` is at the top level of every delivery ("Common Payload Data"); without one, a retry of
    // one delivery repeats application, stage and updatedAt, so together they name it.
    const deliveryId = deliveryOf(
      `${application.id}|${application.currentInterviewStage.id}|${application.updatedAt ?? ''}`,
    );
    return {
      kind: 'stage-entered',
      event: {
        deliveryId,
        atsJobId: application.job.id,
        jobName: application.job.title ?? undefined,
        atsApplicationId: application.id,
        atsCandidateId: application.candidate.id,
        stage: { id: application.currentInterviewStage.id, name: application.currentInterviewStage.title ?? undefined },
        candidate: {
          name: application.candidate.name ?? undefined,
          email: application.candidate.primaryEmailAddress?.value,
        },
      },
    };
  };

  public readonly confirmStageEntered: AtsMethod<'confirmStageEntered'> = (event) => {
    return confirmAsParsed(event);
  };

  /** `candidate.createNote`: the note is on the candidate. */
  public readonly postNote: AtsMethod<'postNote'> = async (target, note, signal) => {
    const created = await this.http.write(
      {
        method: 'POST',
        path: '/candidate.createNote',
        body: {
          candidateId: target.atsCandidateId,
          note: `${note.body}\n\n[${note.marker}]`,
          sendNotifications: false,
        },
        signal,
      },
      noteResultSchema,
    );
    return { noteId: created?.results.id };
  };

  /**
   * `candidate.listNotes`, every page (`cursor` while `moreDataAvailable`). Which field holds a note's text is
   * unconfirmed (`content` here), so the marker is looked for in the whole note: a renamed field cannot hide it.
   */
  public readonly findNote: AtsMethod<'findNote'> = async (target, marker, signal) => {
    return searchPages(
      async (cursor) => {
        const page = await this.http.request(
          {
            method: 'POST',
            path: '/candidate.listNotes',
            body: { candidateId: target.atsCandidateId, ...(cursor ? { cursor } : {}) },
            signal,
            readOnly: true,
          },
          notesListSchema,
        );
        return { page: page.results, next: page.moreDataAvailable ? (page.nextCursor ?? undefined) : undefined };
      },
      (notes) => {
        for (const note of notes) {
          const id = (note as { id?: unknown } | null)?.id;
          if (typeof id === 'string' && JSON.stringify(note).includes(marker)) return { noteId: id };
        }
        return undefined;
      },
      `notes of candidate ${target.atsCandidateId}`,
    );
  };

  /**
   * `application.changeStage {applicationId, interviewStageId}`; stage names resolve in the application's interview
   * plan.
   */
  public readonly moveToStage: AtsMethod<'moveToStage'> = async (target, stage, signal) => {
    const application = await this.applicationInfo(target.atsApplicationId, signal);
    const current = application.currentInterviewStage;
    // Archived (rejected, withdrawn) or hired: never moved, whatever stage the rule names.
    const exit = exitOf(application);
    if (exit) return { moved: false, stageId: current.id, exit };
    const stageId =
      stageIdForJob(stage, target.atsJobId) ??
      stage.id ??
      (await this.stageIdByName(current.interviewPlanId ?? '', stage.name as string, signal));
    if (current.id === stageId) return { moved: false, stageId };
    await this.http.write(
      {
        method: 'POST',
        path: '/application.changeStage',
        body: { applicationId: target.atsApplicationId, interviewStageId: stageId },
        signal,
      },
      v.unknown(),
    );
    return { moved: true, stageId };
  };

  /** `application.info {applicationId}`: `status`, `archiveReason{text, reasonType}`, `currentInterviewStage`. */
  public readonly readStanding: AtsMethod<'readStanding'> = async (target, signal) => {
    return standingOf(await this.applicationInfo(target.atsApplicationId, signal));
  };

  /** `assessment.update` (ASPEC): an ordered assessment's progress, result or cancellation; needs `candidatesWrite`. */
  public readonly updateAssessment: AtsMethod<'updateAssessment'> = async (update, signal) => {
    await this.http.write({ method: 'POST', path: '/assessment.update', body: update, signal }, v.unknown());
  };

  /**
   * The stage change (also a rejection or withdrawal: a move into an Archived-type stage), a hire, an update (an
   * unarchive), and the privacy signals (ats-facts, Corrections 2026-11). `webhook.create` takes one type per webhook.
   */
  public readonly webhookEvents = [
    'candidateStageChange',
    'candidateHire',
    'applicationUpdate',
    'candidateDelete',
    'candidateMerge',
  ] as const;

  public readonly probeAccess: SetupMethod<'probeAccess'> = async (signal) => {
    await this.rpc('/job.list', { limit: 1 }, jobListSchema, signal);
    return 'POST /job.list';
  };

  /** Ashby writes a note as the API key's own user: there is no configured user to check. */
  public readonly probeUser: SetupMethod<'probeUser'> = () => {
    return Promise.resolve({
      ok: false as const,
      checkable: false,
      reason: "Ashby writes notes as the API key's own user (atsUserId is not used)",
    });
  };

  /**
   * Ashby's API key permissions (ats-facts, Corrections 2026-11b; Ashby OpenAPI): reads probed with one item of
   * `job.list` and `candidateTag.list`; writes and the webhook permission (`apiKeysWrite`) have no harmless probe.
   */
  public readonly requiredPermissions: SetupMethod<'requiredPermissions'> = (features) => {
    const read = (path: string, body: unknown) => (signal?: AbortSignal) => this.rpc(path, body, v.unknown(), signal);
    return [
      { permission: 'jobsRead', feature: 'interview names and the sweep', probe: read('/job.list', { limit: 1 }) },
      { permission: 'candidatesRead', feature: 'stage changes and the sweep' },
      { permission: 'candidatesWrite', feature: 'the invite and report notes, stage moves, status tags' },
      { permission: 'interviewsRead', feature: 'stages by name' },
      { permission: 'apiKeysWrite', feature: 'webhook registration (npm run doctor -- --register-webhooks)' },
      ...(features.statusTags
        ? [
            {
              permission: 'hiringProcessMetadataRead',
              feature: 'status tags',
              probe: read('/candidateTag.list', { limit: 1 }),
            },
            { permission: 'hiringProcessMetadataWrite', feature: 'status tags (a missing tag created)' },
          ]
        : []),
    ];
  };

  /**
   * The open jobs, up to `limit`: `job.list {status: ["Open"]}` by `nextCursor` while `moreDataAvailable` (job.list
   * returns open, closed and archived jobs otherwise: ats-facts, Corrections 2026-11b).
   */
  public readonly listJobs: SetupMethod<'listJobs'> = async (limit, signal) => {
    return firstItems(
      async (cursor) => {
        const body = { status: ['Open'], limit: Math.min(100, Math.max(1, limit)), ...(cursor ? { cursor } : {}) };
        const page = await this.rpc('/job.list', body, jobListSchema, signal);
        return {
          page: validItems(page.results, jobSchema),
          next: page.moreDataAvailable ? (page.nextCursor ?? undefined) : undefined,
        };
      },
      limit,
      (j) => ({ id: j.id, name: j.title ?? j.id }),
      'open jobs',
    );
  };

  /** A job's stages are those of its interview plan (`job.info`, then `interviewStage.list`). */
  public readonly listStages: SetupMethod<'listStages'> = async (jobId, signal) => {
    if (jobId === undefined) return [];
    const job = (await this.rpc('/job.info', { id: jobId }, jobInfoSchema, signal)).results;
    const planId = job.defaultInterviewPlanId ?? job.interviewPlanIds[0];
    if (!planId) return [];
    const stages = await this.rpc('/interviewStage.list', { interviewPlanId: planId }, interviewStagesSchema, signal);
    return stages.results.map((s) => ({ id: s.id, name: s.title }));
  };

  public readonly readApplication: SetupMethod<'readApplication'> = async (applicationId, signal) => {
    const { application } = v.parse(candidateStageChangeSchema, {
      application: (await this.rpc('/application.info', { applicationId }, rpcEnvelopeSchema, signal)).results,
    });
    return {
      atsApplicationId: application.id,
      atsCandidateId: application.candidate.id,
      atsJobId: application.job.id,
      jobName: application.job.title ?? undefined,
      stage: { id: application.currentInterviewStage.id, name: application.currentInterviewStage.title ?? undefined },
      hasEmail: Boolean(application.candidate.primaryEmailAddress?.value),
    };
  };

  /**
   * Ashby has no `webhook.list` (ats-facts §3): each webhook the connector registered is read by the id recorded
   * then (`webhook.info`). One Ashby no longer has is left out.
   */
  public readonly listWebhooks: SetupMethod<'listWebhooks'> = async (knownIds, signal) => {
    const found: RegisteredWebhook[] = [];
    for (const webhookId of new Set(Object.values(knownIds))) {
      try {
        const info = (await this.rpc('/webhook.info', { webhookId }, webhookInfoSchema, signal)).results;
        found.push({ id: info.id, event: info.webhookType, url: info.requestUrl, enabled: info.enabled ?? undefined });
      } catch (error) {
        if (!(error instanceof AtsError) || error.retryable) throw error;
      }
    }
    return found;
  };

  /** `webhook.create {webhookType, requestUrl, secretToken}`: Ashby signs with the secret the connector chose. */
  public readonly createWebhook: SetupMethod<'createWebhook'> = async (input, signal) => {
    const created = await this.http.write(
      {
        method: 'POST',
        path: '/webhook.create',
        body: { webhookType: input.event, requestUrl: input.url, secretToken: input.secret },
        signal,
      },
      webhookInfoSchema,
    );
    if (!created)
      throw new AtsError(
        ATS_ERROR_CODES.malformedResponse,
        `Ashby created the ${input.event} webhook but its answer has no id: find it in Admin > Integrations > Webhooks`,
      );
    return { id: created.results.id };
  };

  /**
   * `application.list {status: "Active", jobId?, limit, cursor}` (Ashby's reference, applicationList; cursor pages
   * while `moreDataAvailable`), job by job for a trigger's jobs; Ashby has no stage filter, so the page is matched
   * against the stage here, as a webhook would be.
   */
  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'> = async (query, cursor, signal) => {
    const position = readCursor(cursor, { job: 0, after: '' });
    const jobId = query.jobs === 'all' ? undefined : query.jobs[position.job];
    const page = await this.rpc(
      '/application.list',
      {
        status: 'Active',
        limit: 100,
        ...(jobId ? { jobId } : {}),
        ...(position.after ? { cursor: position.after } : {}),
      },
      applicationListSchema,
      signal,
    );
    const events: StageEnteredEvent[] = [];
    for (const item of page.results) {
      const parsed = v.safeParse(candidateStageChangeSchema, { application: item });
      if (!parsed.success) continue;
      const a = parsed.output.application;
      const stage = { id: a.currentInterviewStage.id, name: a.currentInterviewStage.title ?? undefined };
      if (stageMatches(query.stage, stage, a.job.id) !== 'yes') continue;
      events.push({
        deliveryId: sweepDeliveryId(a.id, stage.id),
        atsJobId: a.job.id,
        jobName: a.job.title ?? undefined,
        atsApplicationId: a.id,
        atsCandidateId: a.candidate.id,
        stage,
        candidate: { name: a.candidate.name ?? undefined, email: a.candidate.primaryEmailAddress?.value },
      });
    }
    let next: string | undefined;
    if (page.moreDataAvailable && page.nextCursor) next = writeCursor({ job: position.job, after: page.nextCursor });
    else if (query.jobs !== 'all' && position.job + 1 < query.jobs.length)
      next = writeCursor({ job: position.job + 1, after: '' });
    return { events, next };
  };

  /**
   * The status as a candidate tag (Ashby's reference: candidateTag.list, candidateTag.create, candidate.addTag,
   * candidate.removeTag, candidate.info): the tag is found or created by its title, added, and the other status
   * tags the candidate has are removed (only removed, with no tag). Adding a tag the candidate has changes nothing.
   */
  public readonly setStatusTag: AtsMethod<'setStatusTag'> = async (target, tag, others, signal) => {
    const candidateId = target.atsCandidateId;
    // The candidate's own tags, so only the status tags it carries are removed.
    const held = (await this.rpc('/candidate.info', { id: candidateId }, candidateTagsSchema, signal)).results.tags;
    for (const old of held.filter((t) => others.includes(t.title)))
      await this.http.write(
        {
          method: 'POST',
          path: '/candidate.removeTag',
          body: { candidateId, tagId: old.id },
          signal,
          idempotent: true,
        },
        v.unknown(),
      );
    // No tag: the status is only taken off (a candidate who left, where the connection shows none for them).
    const tagId = tag === undefined ? undefined : await this.tagId(tag, true, signal);
    if (!tagId || held.some((t) => t.id === tagId)) return;
    await this.http.write(
      { method: 'POST', path: '/candidate.addTag', body: { candidateId, tagId }, signal, idempotent: true },
      v.unknown(),
    );
  };

  /**
   * A candidate tag's id by its title, the list read (every page, until the title is found) once per warm function;
   * created when asked for one and not found.
   */
  private async tagId(title: string, create: boolean, signal?: AbortSignal): Promise<string | undefined> {
    const list = () =>
      searchPages(
        async (cursor) => {
          const body = { limit: 100, ...(cursor ? { cursor } : {}) };
          const page = await this.rpc('/candidateTag.list', body, tagListSchema, signal);
          return { page: page.results, next: page.moreDataAvailable ? (page.nextCursor ?? undefined) : undefined };
        },
        (tags) => {
          for (const t of validItems(tags, tagSchema)) this.tagIds.set(t.title, t.id);
          return this.tagIds.has(title) ? true : undefined;
        },
        'Ashby candidateTag.list',
      );
    if (!this.tagIds.has(title)) await list();
    if (this.tagIds.has(title) || !create) return this.tagIds.get(title);
    const created = await this.http.write(
      { method: 'POST', path: '/candidateTag.create', body: { title }, signal },
      tagCreatedSchema,
    );
    // A 2xx whose body has no id is still a tag created: it is read back by its title.
    if (created) this.tagIds.set(title, created.results.id);
    else await list();
    const id = this.tagIds.get(title);
    if (!id) throw new AtsError(ATS_ERROR_CODES.malformedResponse, `Ashby has no tag "${title}" after creating it`);
    return id;
  }

  private async applicationInfo(applicationId: string, signal?: AbortSignal) {
    return (await this.rpc('/application.info', { applicationId }, applicationInfoSchema, signal)).results;
  }

  private rpc<T>(path: string, body: unknown, schema: v.GenericSchema<unknown, T>, signal?: AbortSignal): Promise<T> {
    return this.http.request({ method: 'POST', path, body, signal, readOnly: true }, schema);
  }

  private async stageIdByName(interviewPlanId: string, name: string, signal?: AbortSignal): Promise<string> {
    const cached = this.stageIds.get(`${interviewPlanId}#${name}`);
    if (cached) return cached;
    const stages = await this.http.request(
      {
        method: 'POST',
        path: '/interviewStage.list',
        body: { interviewPlanId },
        signal,
        readOnly: true,
      },
      interviewStagesSchema,
    );
    for (const s of stages.results) this.stageIds.set(`${interviewPlanId}#${s.title}`, s.id);
    const match = stages.results.find((s) => s.title === name);
    if (!match)
      throw new AtsError(
        ATS_ERROR_CODES.invalidRequest,
        `interview plan ${interviewPlanId} has no stage named "${name}"`,
      );
    return match.id;
  }
}
