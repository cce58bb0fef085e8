import * as v from 'valibot';
import type { AtsAdapterOptions } from '../webhook-body';
import { verifyHeaderSignature } from '../signatures';
import { workableProfile } from './profile';
import { AtsHttpClient } from '../ats-http';
import { AtsAdapterBase } from '../adapter-base';
import { confirmAsParsed, movedOnSince, type AtsMethod, type AtsAdapter } from '../port';
import { standingOfCandidate } from './workable.standing';
import { commentAttachment, fileComment, WorkableFiles } from './workable.files';
import { WorkableReads } from './workable.reads';
import { WorkableSweep } from './workable.sweep';
import { parseCandidateMoved, WORKABLE_WEBHOOK_EVENTS } from './workable.webhooks';

export type WorkableAdapterOptions = AtsAdapterOptions;

/**
 * Workable SPI v3 (ats-facts §4): bearer token, paced as its profile declares, writes attributed to a member. A
 * stage has two names: webhooks and candidate reads give its display name ("AI Interview"), moves and the job's
 * stage list its slug ("ai-interview"). Triggers and rules may use either; each call gets the one it needs. The
 * webhook's reading is workable.webhooks.ts, the shared reads workable.reads.ts, the sweep workable.sweep.ts, the
 * doctor's probes and subscriptions workable.setup.ts.
 */
export class WorkableAdapter extends AtsAdapterBase<WorkableReads> implements AtsAdapter {
  public readonly kind = 'workable' as const;
  /** Some trigger names its stage by slug: a stage-entered event then needs the slug of the stage it names. */
  private readonly triggersBySlug: boolean;
  private readonly files: WorkableFiles;

  public constructor(options: WorkableAdapterOptions) {
    const http = AtsHttpClient.forAdapter(options, async () => `Bearer ${options.secrets.atsApiKey ?? ''}`);
    const reads = new WorkableReads(http);
    super(options, { http, reads, sweep: new WorkableSweep(reads) });
    this.triggersBySlug = options.connection.triggers.some((t) => t.stage.id !== undefined || t.stage.idsByJob);
    this.files = new WorkableFiles(http, reads, options.connection);
  }

  /** A comment takes one attachment (reference: comment-on-candidate): the report note's carries the report file. */
  public readonly filesOnNotes = workableProfile.files.onNote;

  public readonly findFile: AtsMethod<'findFile'> = (target, name, signal) => this.files.findFile(target, name, signal);

  public readonly attachFile: AtsMethod<'attachFile'> = (target, file, signal) =>
    this.files.attachFile(target, file, signal);

  /**
   * HMAC-SHA256 of the raw body with the account token or the OAuth app secret, in its profile's header. Workable
   * does not state the encoding and neither has been confirmed against a live account: hex and base64 are
   * both accepted, each compared in constant time.
   */
  public readonly verifyWebhook: AtsMethod<'verifyWebhook'> = (request) =>
    verifyHeaderSignature(workableProfile.signature, this.secrets.atsWebhookSecret, request);

  /** Read only after `verifyWebhook`; see workable.webhooks.ts for what each `candidate_moved` becomes. */
  public readonly parseWebhook: AtsMethod<'parseWebhook'> = (request) => parseCandidateMoved(request.rawBody);

  /**
   * The webhook is signed over its whole body, so what it says stands; where a trigger names its stage by slug
   * (`id` or `idsByJob`), the slug of the stage the webhook names is looked up in the job's stage list.
   */
  public readonly confirmStageEntered: AtsMethod<'confirmStageEntered'> = async (event, signal) => {
    if (!this.triggersBySlug || event.stage.id !== undefined || !event.atsJobId || event.stage.name === undefined)
      return confirmAsParsed(event);
    const name = event.stage.name;
    const stage = (await this.reads.stagesOf(event.atsJobId, signal)).find((s) => s.name === name);
    return confirmAsParsed({ ...event, stage: { id: stage?.slug, name } });
  };

  /**
   * `POST /spi/v3/candidates/{id}/comments {member_id, comment: {body, attachment?}}` (reference:
   * comment-on-candidate), which answers 201 with an empty body: a comment written, with no id to keep.
   */
  public readonly postNote: AtsMethod<'postNote'> = async (target, note, signal) => {
    // The report file rides on the note's comment, named in its body as a file's own comment names it.
    const file = note.file && { attachment: commentAttachment(note.file) };
    const text = note.file ? `${note.body}\n\n${fileComment(note.file.name)}` : note.body;
    const body = { member_id: this.connection.atsUserId, comment: { body: `${text}\n\n[${note.marker}]`, ...file } };
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
    const id = await this.reads.commentWith(first, marker, signal);
    return id === undefined ? undefined : { noteId: id };
  };

  /**
   * `POST /spi/v3/candidates/{id}/move {member_id, target_stage}` with the stage's slug (reference: move-candidate).
   * The candidate read names its stage, so "already there" compares names; a candidate it shows disqualified or
   * hired is left where they are.
   */
  public readonly moveToStage: AtsMethod<'moveToStage'> = async (target, stage, signal) => {
    const wanted = await this.reads.resolveStage(stage, target.atsJobId, signal);
    const { candidate } = await this.reads.readCandidate(target, signal);
    const stages = await this.reads.stagesOf(target.atsJobId, signal);
    const standing = standingOfCandidate(candidate, stages);
    const current = stages.find((s) => s.name === candidate.stage)?.slug;
    if (!standing.active) return { moved: false, stageId: current ?? '', exit: standing.exit };
    if (candidate.stage === wanted.name) return { moved: false, stageId: wanted.slug };
    const movedOn = movedOnSince(target, { id: current, name: candidate.stage ?? undefined }, wanted.slug);
    if (movedOn) return movedOn;
    await this.http.write(
      {
        method: 'POST',
        path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}/move`,
        body: { member_id: this.connection.atsUserId, target_stage: wanted.slug },
        signal,
      },
      v.unknown(),
    );
    this.reads.wrote(target, { stage: wanted.name }, signal);
    return { moved: true, stageId: wanted.slug };
  };

  /**
   * `GET /spi/v3/candidates/{id}` (reference: job-candidates-show; the lifecycle's pre-reminder read): one read, no
   * stage list; the stage's slug is given only where this job's stages are already held.
   */
  public readonly readStanding: AtsMethod<'readStanding'> = async (target, signal) => {
    const { candidate } = await this.reads.readCandidate(target, signal);
    return standingOfCandidate(candidate, this.reads.jobStages.get(target.atsJobId));
  };

  /**
   * The status as a candidate tag: `PUT /candidates/{id}/tags {tags}` replaces the candidate's tags (reference:
   * candidate-tags), so the current ones are read first (or the read this invocation made of the candidate within
   * the last few seconds: an exit's look, a move's own read) and only the status tags change; unchanged, nothing is
   * sent.
   */
  public readonly setStatusTag: AtsMethod<'setStatusTag'> = async (target, tag, others, signal) => {
    const path = `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}`;
    const current = (await this.reads.readCandidate(target, signal, true)).candidate.tags;
    const kept = current.filter((t) => t !== tag && !others.includes(t));
    // No tag: the others removed only (a candidate who left shows no status).
    const next = tag === undefined ? kept : [...kept, tag];
    const tagShown = tag === undefined || current.includes(tag);
    if (tagShown && current.every((t) => !others.includes(t))) return;
    await this.http.write(
      { method: 'PUT', path: `${path}/tags`, body: { tags: next }, signal, idempotent: true, ordered: true },
      v.unknown(),
    );
    this.reads.wrote(target, { tags: next }, signal);
  };

  public readonly webhookEvents = WORKABLE_WEBHOOK_EVENTS;
}
