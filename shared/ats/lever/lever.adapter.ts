import * as v from 'valibot';
import { stageIdForJob } from '../../config';
import type { AtsAdapterOptions } from '../webhook-body';
import { AtsHttpClient, basicAuth } from '../ats-http';
import { ATS_ERROR_CODES } from '../errors';
import { AtsAdapterBase } from '../adapter-base';
import { movedOnSince, type AtsMethod, type ApplicationRef, type AtsAdapter } from '../port';
import { noteCreatedSchema, noteSchema, opportunityListSchema } from './lever.schemas';
import { searchPages } from '../lists';
import { errorCode } from '../../errors';
import { LeverFiles } from './lever.files';
import { LeverReads, type Opportunity, postedApplicationOf, stageIdOf, standingOf } from './lever.reads';
import { LeverSweep } from './lever.sweep';
import { LEVER_WEBHOOK_EVENTS, parseLeverWebhook, verifyLeverWebhook } from './lever.webhooks';

export type LeverAdapterOptions = AtsAdapterOptions;

/**
 * Lever (ats-facts §2). Its webhook signs only `token + triggeredAt`, never the body, so the body is treated
 * as a hint: the opportunity is re-read and the connector acts on what the API says. The webhook's reading is
 * lever.webhooks.ts, the shared reads lever.reads.ts, the sweep lever.sweep.ts, the doctor's probes and webhook
 * registration lever.setup.ts.
 */
export class LeverAdapter extends AtsAdapterBase<LeverReads> implements AtsAdapter {
  public readonly kind = 'lever' as const;
  private readonly files: LeverFiles;

  public constructor(options: LeverAdapterOptions) {
    const http = AtsHttpClient.forAdapter(options, async () => basicAuth(options.secrets.atsApiKey ?? ''));
    const reads = new LeverReads(http);
    super(options, { http, reads, sweep: new LeverSweep(reads) });
    this.files = new LeverFiles(http, reads, options.connection);
  }

  /** Lever signs `token + triggeredAt` with each webhook's own token (lever.webhooks.ts). */
  public readonly verifyWebhook: AtsMethod<'verifyWebhook'> = (request, now) =>
    verifyLeverWebhook(request, now, {
      secrets: this.secrets,
      freshnessMinutes: this.connection.webhookFreshnessMinutes,
    });

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
      opportunity = await this.reads.readOpportunity(event.atsApplicationId, 'applications', signal);
    } catch (error) {
      if (errorCode(error) === ATS_ERROR_CODES.notFound)
        return { confirmed: false, reason: 'the opportunity does not exist' };
      throw error;
    }
    const stageId = stageIdOf(opportunity.stage);
    if (stageId !== event.stage.id)
      return { confirmed: false, reason: `the API shows stage ${stageId}, not ${event.stage.id ?? '?'}` };
    if (opportunity.archived) return { confirmed: false, reason: 'the opportunity is archived' };
    const application = postedApplicationOf(opportunity);
    if (!application) return { confirmed: false, reason: 'the opportunity has no posting' };
    return {
      confirmed: true,
      event: {
        ...event,
        atsJobId: application.posting,
        atsCandidateId: opportunity.contact ?? event.atsCandidateId,
        stage: { id: stageId, name: (await this.reads.stages(signal)).get(stageId) },
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
      this.reads.pager.pages(this.reads.list(path, signal), noteSchema),
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
      stage.id ??
      stageIdForJob(stage, target.atsJobId) ??
      (await this.reads.stageIdByName(stage.name as string, signal));
    const opportunity = await this.reads.readOpportunity(target.atsApplicationId, undefined, signal);
    // An archived opportunity has left the pipeline: it is never moved, whatever stage it was archived in.
    const standing = standingOf(opportunity, this.knownStageNames());
    const current = stageIdOf(opportunity.stage);
    if (!standing.active) return { moved: false, stageId: current, exit: standing.exit };
    if (current === stageId) return { moved: false, stageId };
    const movedOn = movedOnSince(target, { id: current, name: this.knownStageNames().get(current) }, stageId);
    if (movedOn) return movedOn;
    const path = this.opportunityPath(target, 'stage');
    await this.http.write({ method: 'PUT', path, body: { stage: stageId }, signal }, v.unknown());
    return { moved: true, stageId };
  };

  /**
   * `GET /v1/opportunities/{id}` (the pre-reminder read of ats-routes.md's lifecycle table): `archived` null is in the
   * pipeline, in `stage`; otherwise archived, with the archive reason's id.
   */
  public readonly readStanding: AtsMethod<'readStanding'> = async (target, signal) =>
    standingOf(await this.reads.readOpportunity(target.atsApplicationId, undefined, signal), this.knownStageNames());

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
          ordered: true,
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
        ordered: true,
      },
      v.unknown(),
    );
  };

  public readonly findFile: AtsMethod<'findFile'> = (target, name, signal) => this.files.findFile(target, name, signal);

  public readonly attachFile: AtsMethod<'attachFile'> = (target, file, signal) =>
    this.files.attachFile(target, file, signal);

  knownStageNames(): ReadonlyMap<string, string> {
    return this.reads.knownStageNames();
  }

  /** One webhook per event, each with its own signature token (ats-facts, Corrections 2026-11). */
  public readonly webhookEvents = LEVER_WEBHOOK_EVENTS;

  /** An opportunity's sub-resource, written as the configured user (`perform_as`). */
  private opportunityPath(target: ApplicationRef, resource: 'notes' | 'stage'): string {
    const opportunity = encodeURIComponent(target.atsApplicationId);
    return `/v1/opportunities/${opportunity}/${resource}?perform_as=${encodeURIComponent(this.connection.atsUserId)}`;
  }
}
