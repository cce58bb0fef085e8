import { createHash } from 'node:crypto';
import * as v from 'valibot';
import type { Connection, ConnectionSecrets, StageMatcher } from '../../config';
import {
  HTTP_DEFAULTS,
  digestMatches,
  hmacSha256,
  parseRetryAfter,
  redactUrl,
  sendHttpRequest,
  type RetryHooks,
} from '../../http';
import { AtsHttpClient, basicAuth } from '../ats-http';
import { readPart, readWebhookBody, type AtsAdapterOptions } from '../webhook-body';
import { AtsError, ATS_ERROR_CODES, atsErrorForStatus } from '../errors';
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
  applicationSchema,
  candidateDeletedSchema,
  candidateStageChangeSchema,
  greenhouseEnvelopeSchema,
  jobStageSchema,
  notesListSchema,
  noteSchema,
  tokenResponseSchema,
} from './greenhouse.schemas';

export const GREENHOUSE_DEFAULT_AUTH_URL = 'https://auth.greenhouse.io/token';
/** Tokens are refreshed this long before Greenhouse says they expire. */
const TOKEN_REFRESH_MARGIN_MS = 60_000;

export interface GreenhouseAdapterOptions extends AtsAdapterOptions {
  now?: () => number;
}

const idText = (value: string | number | null | undefined): string | undefined =>
  value === null || value === undefined ? undefined : String(value);

/** Greenhouse on Harvest v3 (ats-facts §1): OAuth client credentials, notes, stage moves, signed webhooks. */
export class GreenhouseAdapter implements AtsAdapter {
  public readonly kind = 'greenhouse' as const;
  private readonly connection: Connection;
  private readonly secrets: ConnectionSecrets;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly sleep: RetryHooks['sleep'];
  private readonly now: () => number;
  private token: { value: string; refreshAt: number } | undefined;
  private readonly http: AtsHttpClient;
  /** Stage names per job change rarely; one lookup per job per warm function. */
  private readonly stageIds = new Map<string, string>();

  public constructor(options: GreenhouseAdapterOptions) {
    this.connection = options.connection;
    this.secrets = options.secrets;
    this.fetchImpl = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? HTTP_DEFAULTS.timeoutMs;
    this.sleep = options.sleep;
    this.now = options.now ?? Date.now;
    this.http = new AtsHttpClient({
      baseUrl: this.connection.atsBaseUrl,
      authorization: async (refresh) => `Bearer ${await this.accessToken(undefined, refresh)}`,
      fetch: this.fetchImpl,
      timeoutMs: this.timeoutMs,
      retry: options.retry,
      sleep: this.sleep,
      now: this.now,
    });
  }

  /**
   * `Signature: sha256 <hex>`: HMAC-SHA256 of the raw body with the webhook's secret key. Greenhouse
   * unicode-escapes its JSON before signing, so only the bytes as received verify (webhooks/_introduction.md).
   */
  public verifyWebhook(request: InboundWebhook): WebhookVerification {
    const secret = this.secrets.atsWebhookSecret;
    const header = request.headers.signature;
    if (!secret) return { valid: false, reason: 'the connection has no webhook secret' };
    if (!header) return { valid: false, reason: 'no Signature header' };
    // Exactly the algorithm, one space and one digest: nothing before, between or after.
    const [algorithm, digest, ...rest] = header.trim().split(' ');
    if (algorithm !== 'sha256' || !digest || rest.length)
      return { valid: false, reason: 'Signature is not "sha256 <hex>"' };
    return digestMatches(hmacSha256(secret, request.rawBody), digest, 'hex')
      ? { valid: true }
      : { valid: false, reason: 'signature does not match' };
  }

  /** The whole body is signed and carries the job and the candidate: nothing to re-read. */
  public confirmStageEntered(event: StageEnteredEvent): Promise<StageConfirmation> {
    return confirmAsParsed(event);
  }

  public parseWebhook(request: InboundWebhook): WebhookParseResult {
    const read = readWebhookBody(request.rawBody, greenhouseEnvelopeSchema);
    if (!read.ok) return read.result;
    const envelope = read.value;
    if (envelope.action === 'ping') return { kind: 'ping' };
    if (envelope.action === 'delete_candidate') {
      const deleted = readPart(envelope.payload, candidateDeletedSchema, 'payload');
      if (!deleted.ok) return deleted.result;
      return {
        kind: 'candidate-deleted',
        event: {
          deliveryId:
            request.headers['greenhouse-event-id'] ||
            `sha256:${createHash('sha256').update(request.rawBody).digest('hex')}`,
          atsCandidateId: String(deleted.value.person.id),
          atsApplicationIds: (deleted.value.person.deleted_application_ids ?? []).map(String),
        },
      };
    }
    if (envelope.action !== 'candidate_stage_change')
      return { kind: 'ignored', reason: `action ${envelope.action} is not handled` };
    const parsed = readPart(envelope.payload, candidateStageChangeSchema, 'payload');
    if (!parsed.ok) return parsed.result;
    const application = parsed.value.application;
    const job = application.jobs?.[0];
    if (application.prospect || !job) return { kind: 'ignored', reason: 'a prospect without a job' };
    if (application.status && application.status !== 'active')
      return { kind: 'ignored', reason: `application is ${application.status}` };
    const candidate = application.candidate;
    const email =
      candidate.email_addresses?.find((e) => e.type === 'personal')?.value ?? candidate.email_addresses?.[0]?.value;
    return {
      kind: 'stage-entered',
      event: {
        deliveryId:
          request.headers['greenhouse-event-id'] ||
          `sha256:${createHash('sha256').update(request.rawBody).digest('hex')}`,
        atsJobId: String(job.id),
        jobName: job.name ?? undefined,
        atsApplicationId: String(application.id),
        atsCandidateId: String(candidate.id),
        stage: { id: idText(application.current_stage?.id), name: application.current_stage?.name ?? undefined },
        candidate: { name: [candidate.first_name, candidate.last_name].filter(Boolean).join(' '), email },
      },
    };
  }

  /**
   * `POST /v3/notes` ({candidate_id, application_id, body, note_type, visibility, user_id}); a note is on the
   * candidate.
   */
  public async postNote(target: ApplicationRef, note: AtsNote, signal?: AbortSignal): Promise<{ noteId: string }> {
    const body = {
      candidate_id: Number(target.atsCandidateId) || target.atsCandidateId,
      application_id: Number(target.atsApplicationId) || target.atsApplicationId,
      body: `${note.body}\n\n[${note.marker}]`,
      note_type: 'NOTE',
      visibility: this.connection.writeBack.note.visibility,
      user_id: Number(this.connection.atsUserId) || this.connection.atsUserId,
    };
    const created = await this.request('POST', '/v3/notes', noteSchema, { body, signal });
    return { noteId: String(created.id) };
  }

  public async findNote(
    target: ApplicationRef,
    marker: string,
    signal?: AbortSignal,
  ): Promise<{ noteId: string } | undefined> {
    const notes = await this.request(
      'GET',
      `/v3/notes?candidate_id=${encodeURIComponent(target.atsCandidateId)}`,
      notesListSchema,
      { signal },
    );
    const found = notes.find((n) => n.body?.includes(marker));
    return found ? { noteId: String(found.id) } : undefined;
  }

  /**
   * `POST /v3/applications/{id}/move` (write-endpoint-migration-guide). Moving from the stage the connector saw
   * makes a retry safe: if the application already sits in the target stage the move counts as done.
   */
  public async moveToStage(
    target: ApplicationRef,
    stage: StageMatcher,
    signal?: AbortSignal,
  ): Promise<{ moved: boolean; stageId: string }> {
    const stageId = stage.id ?? (await this.stageIdByName(target.atsJobId, stage.name as string, signal));
    const application = await this.request(
      'GET',
      `/v3/applications/${encodeURIComponent(target.atsApplicationId)}`,
      applicationSchema,
      { signal },
    );
    if (idText(application.current_stage?.id) === stageId) return { moved: false, stageId };
    await this.request('POST', `/v3/applications/${encodeURIComponent(target.atsApplicationId)}/move`, v.unknown(), {
      body: {
        from_stage_id: Number(target.fromStageId ?? application.current_stage?.id) || target.fromStageId,
        to_stage_id: Number(stageId) || stageId,
      },
      signal,
    });
    return { moved: true, stageId };
  }

  /**
   * Stage names are per job in Greenhouse. The v3 path for a job's stages is unconfirmed (v1: `/v1/jobs/{id}/stages`).
   */
  private async stageIdByName(jobId: string, name: string, signal?: AbortSignal): Promise<string> {
    const cached = this.stageIds.get(`${jobId}#${name}`);
    if (cached) return cached;
    const stages = await this.request(
      'GET',
      `/v3/job_stages?job_id=${encodeURIComponent(jobId)}`,
      v.array(jobStageSchema),
      { signal },
    );
    for (const stage of stages) this.stageIds.set(`${jobId}#${stage.name}`, String(stage.id));
    const match = stages.find((s) => s.name === name);
    if (!match) throw new AtsError(ATS_ERROR_CODES.invalidRequest, `job ${jobId} has no stage named "${name}"`);
    return String(match.id);
  }

  private async accessToken(signal?: AbortSignal, force = false): Promise<string> {
    if (!force && this.token && this.token.refreshAt > this.now()) return this.token.value;
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
      throw new AtsError(ATS_ERROR_CODES.unavailable, `token request failed: ${(error as Error).message}`, {
        cause: error,
      });
    });
    if (response.status !== 200)
      throw atsErrorForStatus(response.status, `POST ${redactUrl(url)}`, '', parseRetryAfter(response.headers));
    const token = v.safeParse(tokenResponseSchema, safeJson(response.bodyText));
    if (!token.success) throw new AtsError(ATS_ERROR_CODES.malformedResponse, 'token response has no access_token');
    this.token = {
      value: token.output.access_token,
      refreshAt: this.now() + token.output.expires_in * 1000 - TOKEN_REFRESH_MARGIN_MS,
    };
    return this.token.value;
  }

  private request<T>(
    method: 'GET' | 'POST',
    path: string,
    schema: v.GenericSchema<unknown, T>,
    options: { body?: unknown; signal?: AbortSignal | undefined },
  ): Promise<T> {
    return this.http.request({ method, path, body: options.body, signal: options.signal }, schema);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
