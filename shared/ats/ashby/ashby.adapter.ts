import * as v from 'valibot';
import { stageIdForJob } from '../../config';
import { verifyHeaderSignature } from '../signatures';
import { ashbyProfile } from './profile';
import type { AtsAdapterOptions } from '../webhook-body';
import { AtsHttpClient, basicAuth } from '../ats-http';
import { searchPages } from '../lists';
import { AtsAdapterBase } from '../adapter-base';
import { confirmAsParsed, movedOnSince, type AtsMethod, type AtsAdapter } from '../port';
import { noteResultSchema, rpcEnvelopeSchema } from './ashby.schemas';
import { exitOf, standingOf } from './ashby.lifecycle';
import { AshbyFiles } from './ashby.files';
import { AshbyReads } from './ashby.reads';
import { AshbySweep } from './ashby.sweep';
import { AshbyTags } from './ashby.tags';
import { ASHBY_WEBHOOK_EVENTS, parseAshbyWebhook } from './ashby.webhooks';

export type AshbyAdapterOptions = AtsAdapterOptions;

/**
 * Ashby (ats-facts §3): RPC-style POSTs with Basic auth, signed webhooks (ashby.webhooks.ts), errors inside HTTP 200;
 * the sweep (ashby.sweep.ts), status tags (ashby.tags.ts) and the doctor's probes and webhooks (ashby.setup.ts).
 */
export class AshbyAdapter extends AtsAdapterBase<AshbyReads> implements AtsAdapter {
  public readonly kind = 'ashby' as const;
  /** Tags belong to the candidate (Harvest `_tags.md`: "only candidates can be tagged"; Ashby candidate tags). */
  public readonly tagsCandidates = true;
  private readonly tags: AshbyTags;
  private readonly files: AshbyFiles;

  public constructor(options: AshbyAdapterOptions) {
    const http = AtsHttpClient.forAdapter(options, async () => basicAuth(options.secrets.atsApiKey ?? ''), {
      // Ashby refuses inside HTTP 200 (`success: false`); any other 2xx answer is an acceptance, and a read
      // still checks its `results` against its own schema.
      failureInBody: (body) => {
        const envelope = v.safeParse(rpcEnvelopeSchema, body);
        if (!envelope.success || envelope.output.success) return undefined;
        const errors = envelope.output.errors ?? envelope.output.errorInfo ?? '';
        return `success: false ${JSON.stringify(errors).slice(0, 200)}`;
      },
    });
    const reads = new AshbyReads(http);
    super(options, { http, reads, sweep: new AshbySweep(reads) });
    this.tags = new AshbyTags(http, reads);
    this.files = new AshbyFiles(http, reads);
  }

  /**
   * HMAC-SHA256 of the raw body with the secret token, in the header its profile names (docs: authenticating-webhooks).
   */
  public readonly verifyWebhook: AtsMethod<'verifyWebhook'> = (request) =>
    verifyHeaderSignature(ashbyProfile.signature, this.secrets.atsWebhookSecret, request);

  public readonly parseWebhook: AtsMethod<'parseWebhook'> = (request) => parseAshbyWebhook(request);

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
    const list = this.reads.list('/candidate.listNotes', { candidateId: target.atsCandidateId }, signal);
    return searchPages(
      this.reads.pager.pages(list, v.unknown()),
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
    const application = await this.reads.applicationInfo(target.atsApplicationId, signal);
    const current = application.currentInterviewStage;
    // Archived (rejected, withdrawn) or hired: never moved, whatever stage the rule names.
    const exit = exitOf(application);
    if (exit) return { moved: false, stageId: current.id, exit };
    const stageId =
      stageIdForJob(stage, target.atsJobId) ??
      stage.id ??
      (await this.reads.stageIdByName(current.interviewPlanId ?? '', stage.name as string, signal));
    if (current.id === stageId) return { moved: false, stageId };
    const movedOn = movedOnSince(target, { id: current.id, name: current.title ?? undefined }, stageId);
    if (movedOn) return movedOn;
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
    return standingOf(await this.reads.applicationInfo(target.atsApplicationId, signal));
  };

  /** `assessment.update` (ASPEC): an ordered assessment's progress, result or cancellation; needs `candidatesWrite`. */
  public readonly updateAssessment: AtsMethod<'updateAssessment'> = async (update, signal) => {
    await this.http.write({ method: 'POST', path: '/assessment.update', body: update, signal }, v.unknown());
  };

  public readonly setStatusTag: AtsMethod<'setStatusTag'> = (target, tag, others, signal) =>
    this.tags.setStatusTag(target, tag, others, signal);

  public readonly findFile: AtsMethod<'findFile'> = (target, name, signal) => this.files.findFile(target, name, signal);

  public readonly attachFile: AtsMethod<'attachFile'> = (target, file, signal) =>
    this.files.attachFile(target, file, signal);

  public readonly webhookEvents = ASHBY_WEBHOOK_EVENTS;
}
