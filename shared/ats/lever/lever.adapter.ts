import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { type Connection, type ConnectionSecrets, stageIdForJob } from '../../config';
import type { AtsAdapterOptions } from '../webhook-body';
import { digestMatches, hmacSha256 } from '../../http';
import { AtsHttpClient, basicAuth } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import type {
  AtsMethod,
  SetupMethod,
  ApplicationRef,
  ApplicationStanding,
  AtsAdapter,
  AtsSetup,
  RegisteredWebhook,
  StageEnteredEvent,
} from '../port';
import {
  leverSignedFieldsSchema,
  noteCreatedSchema,
  noteSchema,
  notesPageSchema,
  listedOpportunitySchema,
  opportunityListSchema,
  opportunityPageSchema,
  opportunitySchema,
  stagesSchema,
  userSchema,
  webhookCreatedSchema,
  webhookSchema,
  webhooksPageSchema,
} from './lever.schemas';
import { describeFirstIssue } from '../../validation';
import { searchPages, validItems } from '../lists';
import { sweepDeliveryId } from '../port';
import { errorCode } from '../../errors';
import { LEVER_WEBHOOK_EVENTS, parseLeverWebhook } from './lever.webhooks';

export type LeverAdapterOptions = AtsAdapterOptions;

type Opportunity = v.InferOutput<typeof opportunitySchema>['data'];

const stageIdOf = (stage: string | { id: string }): string => (typeof stage === 'string' ? stage : stage.id);

/**
 * An opportunity's place in the pipeline as one read shows it. Lever archives every opportunity that leaves, rejected
 * or withdrawn or hired ("Opportunities exit your pipeline by being archived for one of two reasons: rejected ... or
 * hired", ats-routes.json); the read names the archive reason by id only, and telling hired from not takes
 * `GET /v1/archive_reasons`, a second call: so every exit is 'archived', with the reason's id.
 */
function standingOf(opportunity: Opportunity, knownStageNames: ReadonlyMap<string, string>): ApplicationStanding {
  if (opportunity.archived)
    return { active: false, exit: 'archived', reason: opportunity.archived.reason ?? undefined };
  const stageId = stageIdOf(opportunity.stage);
  const stageName = typeof opportunity.stage === 'string' ? knownStageNames.get(stageId) : opportunity.stage.text;
  return { active: true, stageId, stageName };
}

/**
 * Lever (ats-facts §2). Its webhook signs only `token + triggeredAt`, never the body, so the body is treated
 * as a hint: the opportunity is re-read and the connector acts on what the API says.
 */
/**
 * Lever's `next` token may come back percent-encoded already: it is passed on as given (ats-facts, Corrections
 * 2026-11b), only a character that would end the parameter (`&`, `#`, a space, `+`) encoded.
 */
const asGivenToken = (token: string): string => token.replace(/[^A-Za-z0-9%._~=/-]/g, encodeURIComponent);

export class LeverAdapter implements AtsAdapter, AtsSetup {
  public readonly kind = 'lever' as const;
  private readonly connection: Connection;
  private readonly secrets: ConnectionSecrets;
  private readonly http: AtsHttpClient;
  private stageNames: Map<string, string> | undefined;

  public constructor(options: LeverAdapterOptions) {
    this.connection = options.connection;
    this.secrets = options.secrets;
    this.http = AtsHttpClient.forAdapter(options, async () => basicAuth(options.secrets.atsApiKey ?? ''));
  }

  /**
   * HMAC-SHA256 of `token + triggeredAt` with the webhook's signature token, hex (embloy's verifier, citing
   * Lever's docs). Each Lever webhook (one per event type) has its own token: the body's `event` chooses it. A
   * `triggeredAt` outside the freshness window is stale; what was signed is the replay key.
   */
  public readonly verifyWebhook: AtsMethod<'verifyWebhook'> = (request, now) => {
    let document: unknown;
    try {
      document = JSON.parse(request.rawBody.toString('utf8'));
    } catch {
      return { valid: false, reason: 'no signed fields: body is not JSON' };
    }
    const fields = v.safeParse(leverSignedFieldsSchema, document);
    if (!fields.success)
      return {
        valid: false,
        reason: `no signed fields: ${describeFirstIssue(fields.issues, { fallbackField: 'body' }).field} missing`,
      };
    const { event, token, triggeredAt, signature } = fields.output;
    const secret = this.signatureToken(event);
    if (!secret) return { valid: false, reason: `the connection has no signature token for ${event} webhooks` };
    if (!digestMatches(hmacSha256(secret, `${token}${triggeredAt}`), signature, 'hex'))
      return { valid: false, reason: 'signature does not match' };
    const windowMs = this.connection.webhookFreshnessMinutes * 60_000;
    if (Math.abs(now - Number(triggeredAt)) > windowMs)
      return {
        valid: false,
        reason: `stale: triggeredAt is outside the ${this.connection.webhookFreshnessMinutes}-minute window`,
      };
    // The replay key is what was signed, hashed to a bounded key: no other (token, triggeredAt) signs the same.
    const signed = createHash('sha256').update(`${token}${triggeredAt}`).digest('hex');
    return { valid: true, replayKey: `lever-signed:${signed}`, replayTtlSeconds: Math.ceil((2 * windowMs) / 1000) };
  };

  /** The token of the webhook for `event`, else the connection's one token. */
  private signatureToken(event: string): string | undefined {
    const perEvent = this.secrets.atsWebhookSecrets;
    return (perEvent && Object.hasOwn(perEvent, event) ? perEvent[event] : undefined) ?? this.secrets.atsWebhookSecret;
  }

  public readonly parseWebhook: AtsMethod<'parseWebhook'> = (request) => parseLeverWebhook(request);

  /**
   * `candidateDeleted` is signed over `token + triggeredAt` only, so its ids are a claim: a purge happens only when
   * Lever's API no longer has the opportunities it names (404), or, when it names none, the contact has no
   * opportunity left (`GET /v1/opportunities?contact_id=`).
   */
  public readonly confirmCandidateDeleted: AtsMethod<'confirmCandidateDeleted'> = async (event, signal) => {
    for (const opportunityId of event.atsApplicationIds) {
      try {
        await this.http.request(
          { method: 'GET', path: `/v1/opportunities/${encodeURIComponent(opportunityId)}`, signal },
          v.unknown(),
        );
        return { confirmed: false, reason: 'Lever still has the opportunity' };
      } catch (error) {
        if (errorCode(error) !== ATS_ERROR_CODES.notFound) throw error;
      }
    }
    if (event.atsApplicationIds.length) return { confirmed: true };
    const left = await this.http.request(
      {
        method: 'GET',
        path: `/v1/opportunities?contact_id=${encodeURIComponent(event.atsCandidateId)}&limit=1`,
        signal,
      },
      opportunityListSchema,
    );
    return left.data.length ? { confirmed: false, reason: 'Lever still has the contact' } : { confirmed: true };
  };

  /** The opportunity as the API has it: its stage must be the one the webhook claims. */
  public readonly confirmStageEntered: AtsMethod<'confirmStageEntered'> = async (event, signal) => {
    let opportunity: Opportunity;
    try {
      opportunity = await this.readOpportunity(event.atsApplicationId, 'applications', signal);
    } catch (error) {
      if (errorCode(error) === ATS_ERROR_CODES.notFound)
        return { confirmed: false, reason: 'the opportunity does not exist' };
      throw error;
    }
    const stageId = stageIdOf(opportunity.stage);
    if (stageId !== event.stage.id)
      return { confirmed: false, reason: `the API shows stage ${stageId}, not ${event.stage.id ?? '?'}` };
    if (opportunity.archived) return { confirmed: false, reason: 'the opportunity is archived' };
    const application = opportunity.applications.find(
      (a): a is { id: string; posting: string } => typeof a !== 'string' && Boolean(a.posting),
    );
    if (!application) return { confirmed: false, reason: 'the opportunity has no posting' };
    return {
      confirmed: true,
      event: {
        ...event,
        atsJobId: application.posting,
        atsCandidateId: opportunity.contact ?? event.atsCandidateId,
        stage: { id: stageId, name: (await this.stages(signal)).get(stageId) },
        candidate: { name: opportunity.name ?? undefined, email: opportunity.emails[0] },
      },
    };
  };

  /** `POST /v1/opportunities/{id}/notes?perform_as=` (NangoHQ create-note; Pipedream add-note). */
  public readonly postNote: AtsMethod<'postNote'> = async (target, note, signal) => {
    const path = this.opportunityPath(target, 'notes');
    const created = await this.http.write(
      {
        method: 'POST',
        path,
        body: {
          value: `${note.body}\n\n[${note.marker}]`,
          secret: this.connection.writeBack.note.visibility !== 'public',
        },
        signal,
      },
      noteCreatedSchema,
    );
    return { noteId: created?.data.noteId ?? created?.data.id };
  };

  /** The opportunity's notes, every page (`offset=<next>` while `hasNext`); the text is in `fields[].value`. */
  public readonly findNote: AtsMethod<'findNote'> = async (target, marker, signal) => {
    const path = `/v1/opportunities/${encodeURIComponent(target.atsApplicationId)}/notes?limit=100`;
    return searchPages(
      async (offset) => {
        const page = await this.http.request(
          { method: 'GET', path: offset ? `${path}&offset=${asGivenToken(offset)}` : path, signal },
          notesPageSchema,
        );
        return { page: validItems(page.data, noteSchema), next: page.hasNext ? (page.next ?? undefined) : undefined };
      },
      (notes) => {
        const found = notes.find((n) => n.fields.some((f) => typeof f.value === 'string' && f.value.includes(marker)));
        return found ? { noteId: found.id } : undefined;
      },
      `notes of opportunity ${target.atsApplicationId}`,
    );
  };

  /** `PUT /v1/opportunities/{id}/stage?perform_as=` with `{stage}`; Lever's stage ids are global. */
  public readonly moveToStage: AtsMethod<'moveToStage'> = async (target, stage, signal) => {
    const stageId =
      stage.id ?? stageIdForJob(stage, target.atsJobId) ?? (await this.stageIdByName(stage.name as string, signal));
    const opportunity = await this.readOpportunity(target.atsApplicationId, undefined, signal);
    // An archived opportunity has left the pipeline: it is never moved, whatever stage it was archived in.
    const standing = standingOf(opportunity, this.knownStageNames());
    if (!standing.active) return { moved: false, stageId: stageIdOf(opportunity.stage), exit: standing.exit };
    if (stageIdOf(opportunity.stage) === stageId) return { moved: false, stageId };
    const path = this.opportunityPath(target, 'stage');
    await this.http.write({ method: 'PUT', path, body: { stage: stageId }, signal }, v.unknown());
    return { moved: true, stageId };
  };

  /**
   * `GET /v1/opportunities/{id}` (the pre-reminder read of ats-routes.md's lifecycle table): `archived` null is in the
   * pipeline, in `stage`; otherwise archived, with the archive reason's id.
   */
  public readonly readStanding: AtsMethod<'readStanding'> = async (target, signal) =>
    standingOf(await this.readOpportunity(target.atsApplicationId, undefined, signal), this.knownStageNames());

  /** `POST /v1/opportunities/{id}/addLinks` (links live on the contact; NangoHQ update-opportunity-links). */
  public readonly attachReportLink: AtsMethod<'attachReportLink'> = async (target, url, signal) => {
    await this.http.write(
      {
        method: 'POST',
        path: `/v1/opportunities/${encodeURIComponent(target.atsApplicationId)}/addLinks`,
        body: { links: [url] },
        signal,
      },
      v.unknown(),
    );
  };

  /** One webhook per event, each with its own signature token (ats-facts, Corrections 2026-11). */
  public readonly webhookEvents = LEVER_WEBHOOK_EVENTS;

  public readonly probeAccess: SetupMethod<'probeAccess'> = async (signal) => {
    await this.http.request({ method: 'GET', path: '/v1/opportunities?limit=1', signal }, opportunityListSchema);
    return 'GET /v1/opportunities';
  };

  /** `GET /v1/users/{id}`: notes and moves are made `perform_as` this user, who must exist and be active. */
  public readonly probeUser: SetupMethod<'probeUser'> = async (signal) => {
    try {
      const user = await this.http.request(
        { method: 'GET', path: `/v1/users/${encodeURIComponent(this.connection.atsUserId)}`, signal },
        userSchema,
      );
      if (user.data.deactivatedAt)
        return {
          ok: false as const,
          reason: `Lever user ${this.connection.atsUserId} is deactivated`,
          checkable: true,
        };
      return {
        ok: true as const,
        what: `Lever user ${this.connection.atsUserId} (${user.data.accessRole ?? 'role ?'})`,
      };
    } catch (error) {
      if (errorCode(error) !== ATS_ERROR_CODES.notFound) throw error;
      return { ok: false as const, reason: `Lever has no user ${this.connection.atsUserId}`, checkable: true };
    }
  };

  /** Lever's stages are global: there is no job to check them for. */
  /**
   * Lever keys are granted per endpoint family when issued: reads probed with one item of each list; writes and
   * `webhooks:write` have no harmless probe.
   */
  public readonly requiredPermissions: SetupMethod<'requiredPermissions'> = (features) => {
    const read = (path: string) => (signal?: AbortSignal) =>
      this.http.request({ method: 'GET', path, signal }, v.unknown());
    return [
      {
        permission: 'opportunities:read',
        feature: 'stage changes and the sweep',
        probe: read('/v1/opportunities?limit=1'),
      },
      { permission: 'stages:read', feature: 'stages by name', probe: read('/v1/stages') },
      { permission: 'notes:write', feature: 'the invite and report notes' },
      { permission: 'opportunities:write', feature: 'stage moves, the report link' },
      { permission: 'webhooks:read', feature: 'the webhook check', probe: read('/v1/webhooks') },
      { permission: 'webhooks:write', feature: 'webhook registration (npm run doctor -- --register-webhooks)' },
      ...(features.statusTags ? [{ permission: 'tags:write', feature: 'status tags' }] : []),
    ];
  };

  public readonly listJobs: SetupMethod<'listJobs'> = () => {
    return Promise.resolve([]);
  };

  public readonly listStages: SetupMethod<'listStages'> = async (_jobId, signal) => {
    return [...(await this.stages(signal))].map(([id, name]) => ({ id, name }));
  };

  public readonly readApplication: SetupMethod<'readApplication'> = async (applicationId, signal) => {
    const opportunity = await this.readOpportunity(applicationId, 'applications', signal);
    const stageId = stageIdOf(opportunity.stage);
    const posting = opportunity.applications.find(
      (a): a is { id: string; posting: string } => typeof a !== 'string' && Boolean(a.posting),
    );
    return {
      atsApplicationId: applicationId,
      atsCandidateId: opportunity.contact ?? applicationId,
      atsJobId: posting?.posting ?? '',
      stage: { id: stageId, name: (await this.stages(signal)).get(stageId) },
      hasEmail: opportunity.emails.length > 0,
    };
  };

  /** `GET /v1/webhooks` (help.lever.co 4402565460237): every page. */
  public readonly listWebhooks: SetupMethod<'listWebhooks'> = async (_knownIds, signal) => {
    const found: RegisteredWebhook[] = [];
    await searchPages(
      async (offset) => {
        const path = `/v1/webhooks?limit=100${offset ? `&offset=${asGivenToken(offset)}` : ''}`;
        const page = await this.http.request({ method: 'GET', path, signal }, webhooksPageSchema);
        return {
          page: validItems(page.data, webhookSchema),
          next: page.hasNext ? (page.next ?? undefined) : undefined,
        };
      },
      (page) =>
        void found.push(
          ...page.map((w) => ({ id: w.id, event: w.event, url: w.url, enabled: w.enabled ?? undefined })),
        ),
      'webhooks',
    );
    return found;
  };

  /** `POST /v1/webhooks {event, url}` → 201 with the webhook's own `configuration.signatureToken`. */
  public readonly createWebhook: SetupMethod<'createWebhook'> = async (input, signal) => {
    const created = await this.http.write(
      { method: 'POST', path: '/v1/webhooks', body: { event: input.event, url: input.url }, signal },
      webhookCreatedSchema,
    );
    if (!created)
      throw new AtsError(
        ATS_ERROR_CODES.malformedResponse,
        `Lever created the ${input.event} webhook but its answer has no signature token: copy it from Settings`,
      );
    return { id: created.data.id, issuedSecret: created.data.configuration.signatureToken };
  };

  /**
   * `GET /v1/opportunities?stage_id=&posting_id=&archived=false` (Lever's opportunities list filters by stage;
   * Pipedream and activepieces list with it), 100 a page by `offset=<next>` while `hasNext`. Ids only, as Lever's
   * webhook: the worker reads each opportunity before acting (`confirmStageEntered`). Archived ones are left out.
   */
  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'> = async (query, cursor, signal) => {
    const stageId = query.stage.id ?? (await this.stageIdByName(query.stage.name as string, signal));
    // The trigger's postings (`posting_id`, repeatable) and open opportunities only (`archived=false`: unspecified,
    // Lever lists both): ats-facts, Corrections 2026-11b.
    const params = new URLSearchParams({ stage_id: stageId, archived: 'false', limit: '100' });
    if (query.jobs !== 'all') for (const posting of query.jobs) params.append('posting_id', posting);
    const path = `/v1/opportunities?${params.toString()}`;
    const page = await this.http.request(
      { method: 'GET', path: cursor ? `${path}&offset=${asGivenToken(cursor)}` : path, signal },
      opportunityPageSchema,
    );
    const events: StageEnteredEvent[] = validItems(page.data, listedOpportunitySchema)
      .filter((o) => !o.archived)
      .map((o) => ({
        deliveryId: sweepDeliveryId(o.id, stageId),
        atsApplicationId: o.id,
        atsCandidateId: o.contact ?? o.id,
        stage: { id: stageId },
        candidate: {},
      }));
    return { events, next: page.hasNext ? (page.next ?? undefined) : undefined };
  };

  /**
   * The status as an opportunity tag: `POST /opportunities/{id}/addTags` and `/removeTags` `{tags}` (Lever's
   * documented assessment pattern "updates tags", hire.lever.co/developer/usecases; NangoHQ and Pipedream tag
   * actions). Adding a tag the opportunity has is a no-op, so a retry adds nothing. No `tag`: only the removal.
   */
  public readonly setStatusTag: AtsMethod<'setStatusTag'> = async (target, tag, others, signal) => {
    const opportunity = encodeURIComponent(target.atsApplicationId);
    const as = `perform_as=${encodeURIComponent(this.connection.atsUserId)}`;
    if (others.length)
      await this.http.write(
        {
          method: 'POST',
          path: `/v1/opportunities/${opportunity}/removeTags?${as}`,
          body: { tags: others },
          signal,
          idempotent: true,
        },
        v.unknown(),
      );
    if (tag === undefined) return;
    await this.http.write(
      {
        method: 'POST',
        path: `/v1/opportunities/${opportunity}/addTags?${as}`,
        body: { tags: [tag] },
        signal,
        idempotent: true,
      },
      v.unknown(),
    );
  };

  /**
   * `GET /v1/opportunities/{id}` (`?expand=applications` where the posting is needed): the one read of an opportunity
   * behind the stage check, the move, the standing and the doctor's view.
   */
  private async readOpportunity(id: string, expand: 'applications' | undefined, signal?: AbortSignal) {
    const path = `/v1/opportunities/${encodeURIComponent(id)}${expand ? `?expand=${expand}` : ''}`;
    return (await this.http.request({ method: 'GET', path, signal }, opportunitySchema)).data;
  }

  /** An opportunity's sub-resource, written as the configured user (`perform_as`). */
  private opportunityPath(target: ApplicationRef, resource: 'notes' | 'stage'): string {
    const opportunity = encodeURIComponent(target.atsApplicationId);
    return `/v1/opportunities/${opportunity}/${resource}?perform_as=${encodeURIComponent(this.connection.atsUserId)}`;
  }

  knownStageNames(): ReadonlyMap<string, string> {
    return this.stageNames ?? new Map();
  }

  private async stages(signal?: AbortSignal): Promise<Map<string, string>> {
    if (!this.stageNames) {
      const stages = await this.http.request({ method: 'GET', path: '/v1/stages', signal }, stagesSchema);
      this.stageNames = new Map(stages.data.map((s) => [s.id, s.text]));
    }
    return this.stageNames;
  }

  private async stageIdByName(name: string, signal?: AbortSignal): Promise<string> {
    const match = [...(await this.stages(signal))].find(([, text]) => text === name);
    if (!match) throw new AtsError(ATS_ERROR_CODES.invalidRequest, `Lever has no stage named "${name}"`);
    return match[0];
  }
}
