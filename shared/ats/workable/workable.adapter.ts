import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { type Connection, type ConnectionSecrets, type StageMatcher, stageIdForJob } from '../../config';
import { readPart, readWebhookBody, type AtsAdapterOptions } from '../webhook-body';
import { digestMatches, hmacSha256 } from '../../http';
import { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import {
  confirmAsParsed,
  type ApplicationRef,
  type AtsAdapter,
  type AtsNote,
  type InboundWebhook,
  type StageConfirmation,
  type StageEnteredEvent,
  type WebhookParseResult,
  type WebhookVerification,
} from '../port';
import {
  candidateSchema,
  commentCreatedSchema,
  commentsSchema,
  jobStagesSchema,
  movedCandidateSchema,
  workableEnvelopeSchema,
} from './workable.schemas';

export type WorkableAdapterOptions = AtsAdapterOptions;

/** Workable SPI v3 (ats-facts §4): bearer token, 10 requests per 10 s, writes attributed to a member. */
export class WorkableAdapter implements AtsAdapter {
  public readonly kind = 'workable' as const;
  private readonly connection: Connection;
  private readonly secrets: ConnectionSecrets;
  private readonly http: AtsHttpClient;
  private readonly stageSlugs = new Map<string, string>();

  public constructor(options: WorkableAdapterOptions) {
    this.connection = options.connection;
    this.secrets = options.secrets;
    this.http = new AtsHttpClient({
      baseUrl: options.connection.atsBaseUrl,
      authorization: async () => `Bearer ${options.secrets.atsApiKey ?? ''}`,
      fetch: options.fetch,
      timeoutMs: options.timeoutMs,
      retry: options.retry,
      sleep: options.sleep,
    });
  }

  /**
   * `X-Workable-Signature`: HMAC-SHA256 of the raw body with the account token or the OAuth app secret. Workable
   * does not state the encoding and neither has been confirmed against a live account: hex and base64 are
   * both accepted, each compared in constant time.
   */
  public verifyWebhook(request: InboundWebhook): WebhookVerification {
    const secret = this.secrets.atsWebhookSecret;
    const header = request.headers['x-workable-signature']?.trim();
    if (!secret) return { valid: false, reason: 'the connection has no webhook secret' };
    if (!header) return { valid: false, reason: 'no X-Workable-Signature header' };
    const expected = hmacSha256(secret, request.rawBody);
    return digestMatches(expected, header, 'hex') || digestMatches(expected, header, 'base64')
      ? { valid: true }
      : { valid: false, reason: 'signature does not match' };
  }

  public parseWebhook(request: InboundWebhook): WebhookParseResult {
    const read = readWebhookBody(request.rawBody, workableEnvelopeSchema);
    if (!read.ok) return read.result;
    const envelope = read.value;
    if (envelope.event_type !== 'candidate_moved')
      return { kind: 'ignored', reason: `event ${envelope.event_type} is not handled` };
    const parsed = readPart(envelope.data, movedCandidateSchema, 'data');
    if (!parsed.ok) return parsed.result;
    const candidate = parsed.value;
    // Disqualification and hiring arrive as candidate_moved too.
    if (candidate.disqualified) return { kind: 'ignored', reason: 'the candidate is disqualified' };
    const deliveryId =
      envelope.id ??
      envelope.firing_id ??
      `derived:${createHash('sha256')
        .update(`${candidate.id}|${candidate.stage}|${candidate.updated_at ?? envelope.fired_at ?? ''}`)
        .digest('hex')
        .slice(0, 40)}`;
    return {
      kind: 'stage-entered',
      event: {
        deliveryId,
        atsJobId: candidate.job.shortcode,
        jobName: candidate.job.title ?? undefined,
        // A Workable candidate belongs to one job: it is the application.
        atsApplicationId: candidate.id,
        atsCandidateId: candidate.id,
        stage: { id: candidate.stage },
        candidate: {
          name: candidate.name ?? ([candidate.firstname, candidate.lastname].filter(Boolean).join(' ') || undefined),
          email: candidate.email ?? undefined,
        },
      },
    };
  }

  public confirmStageEntered(event: StageEnteredEvent): Promise<StageConfirmation> {
    return confirmAsParsed(event);
  }

  /** `POST /spi/v3/candidates/{id}/comments {member_id, comment: {body}}` (reference: comment-on-candidate). */
  public async postNote(target: ApplicationRef, note: AtsNote, signal?: AbortSignal): Promise<{ noteId: string }> {
    const body = { member_id: this.connection.atsUserId, comment: { body: `${note.body}\n\n[${note.marker}]` } };
    const created = await this.http.request(
      {
        method: 'POST',
        path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}/comments`,
        body,
        signal,
      },
      commentCreatedSchema,
    );
    return { noteId: created.id ?? created.comment?.id ?? '' };
  }

  /** Listing comments is unconfirmed in Workable's reference; the sandbox answers `{comments: [{id, body}]}`. */
  public async findNote(
    target: ApplicationRef,
    marker: string,
    signal?: AbortSignal,
  ): Promise<{ noteId: string } | undefined> {
    const comments = await this.http.request(
      { method: 'GET', path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}/comments`, signal },
      commentsSchema,
    );
    const found = comments.comments.find((c) => c.body?.includes(marker));
    return found ? { noteId: found.id } : undefined;
  }

  /** `POST /spi/v3/candidates/{id}/move {member_id, target_stage}` with the stage slug (reference: move-candidate). */
  public async moveToStage(
    target: ApplicationRef,
    stage: StageMatcher,
    signal?: AbortSignal,
  ): Promise<{ moved: boolean; stageId: string }> {
    const slug =
      stageIdForJob(stage, target.atsJobId) ??
      stage.id ??
      (await this.slugByName(target.atsJobId, stage.name as string, signal));
    const current = await this.http.request(
      { method: 'GET', path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}`, signal },
      candidateSchema,
    );
    if (current.candidate.stage === slug) return { moved: false, stageId: slug };
    await this.http.request(
      {
        method: 'POST',
        path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}/move`,
        body: { member_id: this.connection.atsUserId, target_stage: slug },
        signal,
      },
      v.unknown(),
    );
    return { moved: true, stageId: slug };
  }

  private async slugByName(shortcode: string, name: string, signal?: AbortSignal): Promise<string> {
    const cached = this.stageSlugs.get(`${shortcode}#${name}`);
    if (cached) return cached;
    const stages = await this.http.request(
      { method: 'GET', path: `/spi/v3/jobs/${encodeURIComponent(shortcode)}/stages`, signal },
      jobStagesSchema,
    );
    for (const s of stages.stages) this.stageSlugs.set(`${shortcode}#${s.name}`, s.slug);
    const match = stages.stages.find((s) => s.name === name);
    if (!match) throw new AtsError(ATS_ERROR_CODES.invalidRequest, `job ${shortcode} has no stage named "${name}"`);
    return match.slug;
  }
}
