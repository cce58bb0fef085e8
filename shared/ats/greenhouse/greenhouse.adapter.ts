import * as v from 'valibot';
import { httpStatus } from '../../errors';
import { HTTP_DEFAULTS } from '../../http';
import { AtsHttpClient } from '../ats-http';
import { AtsAdapterBase } from '../adapter-base';
import { searchPages } from '../lists';
import { confirmAsParsed, movedOnSince, type AtsAdapter, type AtsMethod, type ExitKind } from '../port';
import { verifyHeaderSignature } from '../signatures';
import type { AtsAdapterOptions } from '../webhook-body';
import { GreenhouseFiles } from './greenhouse.files';
import { APPLICATION_CHANGES, standingOf } from './greenhouse.lifecycle';
import { type ApplicationRow, GreenhouseReads, idText } from './greenhouse.reads';
import { noteCreatedSchema, noteSchema } from './greenhouse.schemas';
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
export class GreenhouseAdapter extends AtsAdapterBase<GreenhouseReads> implements AtsAdapter {
  public readonly kind = 'greenhouse' as const;
  /** Tags belong to the candidate (Harvest `_tags.md`: "only candidates can be tagged"; Ashby candidate tags). */
  public readonly tagsCandidates = true;
  private readonly tags: GreenhouseTags;
  private readonly files: GreenhouseFiles;
  /** The OAuth token, shared with the doctor's part (greenhouse.setup.ts). */
  protected readonly token: GreenhouseToken;

  public constructor(options: GreenhouseAdapterOptions) {
    const fetchImpl = options.fetch ?? fetch;
    const timeoutMs = options.timeoutMs ?? HTTP_DEFAULTS.timeoutMs;
    const now = options.now ?? Date.now;
    const { connection, secrets } = options;
    const token = new GreenhouseToken({ connection, secrets, fetch: fetchImpl, timeoutMs, now });
    const http = AtsHttpClient.forAdapter(
      options,
      async (refresh) => `Bearer ${await token.accessToken(undefined, refresh)}`,
      { fetch: fetchImpl, timeoutMs, now },
    );
    const reads = new GreenhouseReads(http);
    super(options, { http, reads, sweep: new GreenhouseSweep(reads) });
    this.token = token;
    this.tags = new GreenhouseTags(http, reads);
    this.files = new GreenhouseFiles(http, reads);
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
    const stageId = await this.reads.resolveStageId(stage, target.atsJobId, signal);
    const unmovedIfLeft = (application: ApplicationRow) => {
      const standing = standingOf(application);
      const current = idText(application.job_interview_stage_id) ?? '';
      return standing.active ? undefined : { moved: false, stageId: current, exit: standing.exit };
    };
    const move = async (): Promise<{ moved: boolean; stageId: string; exit?: ExitKind; skipped?: string }> => {
      const application = await this.reads.applicationRow(target.atsApplicationId, signal);
      const left = unmovedIfLeft(application);
      if (left) return left;
      const current = idText(application.job_interview_stage_id);
      if (current === stageId) return { moved: false, stageId };
      const movedOn = movedOnSince(target, { id: current, name: application.stage_name ?? undefined }, stageId);
      if (movedOn) return movedOn;
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
      // exit, in the target stage it is done, moved on by a recruiter it is left there, else the refusal stands.
      if (httpStatus(error) !== 422) throw error;
      const again = await this.reads.applicationRow(target.atsApplicationId, signal);
      const left = unmovedIfLeft(again);
      if (left) return left;
      const current = idText(again.job_interview_stage_id);
      if (current === stageId) return { moved: false, stageId };
      const movedOn = movedOnSince(target, { id: current, name: again.stage_name ?? undefined }, stageId);
      if (movedOn) return movedOn;
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

  public readonly setStatusTag: AtsMethod<'setStatusTag'> = (target, tag, others, signal) =>
    this.tags.setStatusTag(target, tag, others, signal);

  public readonly findFile: AtsMethod<'findFile'> = (target, name, signal) => this.files.findFile(target, name, signal);

  public readonly attachFile: AtsMethod<'attachFile'> = (target, file, signal) =>
    this.files.attachFile(target, file, signal);

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
}
