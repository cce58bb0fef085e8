import * as v from 'valibot';
import { komboSignatureMatches } from '../../orders/kombo-orders';
import { AtsHttpClient } from '../ats-http';
import { type AtsAdapter, type AtsMethod, type ChangedApplication, confirmAsParsed, movedOnSince } from '../port';
import { readWebhookBody, type AtsAdapterOptions } from '../webhook-body';
import { KomboCapabilities } from './kombo.capabilities';
import { KomboReads, changedOf, standingOf } from './kombo.reads';
import { komboDataChangedSchema, komboIntegrationDeletedSchema, komboIntegrationStateSchema } from './kombo.schemas';

/**
 * Kombo's unified ATS API (ats-routes.json `ats.kombo`), one integration per connection (`atsIntegrationId`): the
 * Kombo API key as a bearer token and the integration in `X-Integration-Id` on every call. Kombo serves a synced
 * copy of the customer's ATS, so a stage change is not pushed: its `data-changed` webhook is a hint to read the
 * applications changed since the last read (shared/pipeline/changes-hinted.use-case.ts), and the sweep makes the same
 * read. Each write is made only where the integration's capability table supports it; one it does not is skipped,
 * with the reason as the step's record. Kombo reads no note back: a note is made once by the steps map alone.
 */
export class KomboAdapter implements AtsAdapter {
  public readonly kind = 'kombo' as const;
  /** Kombo's webhooks are made in its dashboard, one per Kombo account: there is nothing to register here. */
  public readonly webhookEvents = [] as const;
  public readonly tagsCandidates = true;
  /** No route reads a note back (ats-routes.json, `POST /ats/applications/{id}/notes`). */
  public readonly findsNotes = false;
  protected readonly http: AtsHttpClient;
  protected readonly reads: KomboReads;
  protected readonly capabilities: KomboCapabilities;

  public constructor(protected readonly options: AtsAdapterOptions) {
    const integrationId = options.connection.atsIntegrationId ?? '';
    this.http = AtsHttpClient.forAdapter(options, async () => `Bearer ${options.secrets.atsApiKey ?? ''}`, {
      headers: { 'x-integration-id': integrationId },
      relayed: true,
    });
    this.reads = new KomboReads(this.http);
    this.capabilities = new KomboCapabilities(this.http, integrationId);
  }

  /** `X-Kombo-Signature`: HMAC-SHA256 of the raw body with the webhook secret, base64url (as its order webhooks). */
  public readonly verifyWebhook: AtsMethod<'verifyWebhook'> = (request) =>
    komboSignatureMatches(
      this.options.secrets.atsWebhookSecret ?? '',
      request.rawBody,
      request.headers['x-kombo-signature'],
    )
      ? { valid: true }
      : { valid: false, reason: 'X-Kombo-Signature does not match the body' };

  /**
   * `data-changed` naming applications, for this connection's integration: a hint. Its integration's state changed or
   * its deletion: said for the operator. Anything else is ignored.
   */
  public readonly parseWebhook: AtsMethod<'parseWebhook'> = (request) => {
    const typed = readWebhookBody(request.rawBody, v.looseObject({ type: v.string() }));
    if (!typed.ok) return typed.result;
    if (typed.value.type === 'integration-state-changed' || typed.value.type === 'integration-deleted')
      return this.integrationChanged(request.rawBody, typed.value.type);
    if (typed.value.type !== 'data-changed') return { kind: 'ignored', reason: `a ${typed.value.type} event` };
    const read = readWebhookBody(request.rawBody, komboDataChangedSchema);
    if (!read.ok) return read.result;
    const { id, data } = read.value;
    if (data.integration_id !== this.options.connection.atsIntegrationId)
      return { kind: 'ignored', reason: 'another integration of the Kombo account' };
    if (!data.changed_models.includes('ats_applications')) return { kind: 'ignored', reason: 'no application changed' };
    return { kind: 'changes-hinted', event: { deliveryId: id } };
  };

  /** The state Kombo gives this connection's integration (`DELETED` once deleted); another integration's is ignored. */
  private integrationChanged(
    rawBody: Buffer,
    type: 'integration-state-changed' | 'integration-deleted',
  ): ReturnType<AtsAdapter['parseWebhook']> {
    const ours = this.options.connection.atsIntegrationId;
    if (type === 'integration-deleted') {
      const read = readWebhookBody(rawBody, komboIntegrationDeletedSchema);
      if (!read.ok) return read.result;
      if (read.value.data.id !== ours) return { kind: 'ignored', reason: 'another integration of the Kombo account' };
      return { kind: 'integration-changed', event: { deliveryId: read.value.id, state: 'DELETED' } };
    }
    const read = readWebhookBody(rawBody, komboIntegrationStateSchema);
    if (!read.ok) return read.result;
    const { id, data } = read.value;
    if (data.integration_id !== ours) return { kind: 'ignored', reason: 'another integration of the Kombo account' };
    return { kind: 'integration-changed', event: { deliveryId: id, state: data.state } };
  }

  /** The stage entry came from the connector's own read: only the candidate's e-mail is read to go with it. */
  public readonly confirmStageEntered: AtsMethod<'confirmStageEntered'> = async (event, signal) => {
    const candidate = await this.reads.candidate(event.atsCandidateId, signal);
    return confirmAsParsed({ ...event, candidate: { ...event.candidate, ...candidate } });
  };

  public readonly listChangedApplications: AtsMethod<'listChangedApplications'> = async (since, cursor, signal) => {
    const page = await this.reads.applicationsChangedSince(since, cursor, signal);
    return { applications: page.items.map(changedOf).filter((a): a is ChangedApplication => !!a), next: page.next };
  };

  /** `POST /ats/applications/{id}/notes`, where the integration adds notes; else skipped, the reason kept. */
  public readonly postNote: AtsMethod<'postNote'> = async (target, note, signal) => {
    const written = await this.capabilities.attempt(
      'addNote',
      () =>
        this.http.write(
          {
            method: 'POST',
            path: `/ats/applications/${encodeURIComponent(target.atsApplicationId)}/notes`,
            body: { content: `${note.body}\n\n[${note.marker}]`, content_type: 'PLAIN_TEXT' },
            signal,
          },
          v.unknown(),
        ),
      signal,
    );
    return 'skipped' in written ? { skipped: written.skipped } : {};
  };

  /** Kombo reads no note back: nothing is ever found (the steps map alone keeps a note to one). */
  public readonly findNote: AtsMethod<'findNote'> = async () => undefined;

  /** `PUT /ats/applications/{id}/stage {stage_id}` with the job's stage, where the integration moves stages. */
  public readonly moveToStage: AtsMethod<'moveToStage'> = async (target, stage, signal) => {
    const wanted = await this.reads.resolveStage(stage, target.atsJobId, signal);
    const current = await this.reads.application(target.atsApplicationId, signal);
    const standing = standingOf(current);
    if (!standing.active) return { moved: false, stageId: current.current_stage_id ?? '', exit: standing.exit };
    // The synced copy may give the stage in `current_stage` without `current_stage_id`.
    const now = {
      id: current.current_stage_id ?? current.current_stage?.id,
      name: current.current_stage?.name ?? undefined,
    };
    if (now.id === wanted.id) return { moved: false, stageId: wanted.id };
    const movedOn = movedOnSince(target, now, wanted.id);
    if (movedOn) return movedOn;
    const path = `/ats/applications/${encodeURIComponent(target.atsApplicationId)}/stage`;
    const moved = await this.capabilities.attempt(
      'moveStage',
      () => this.http.write({ method: 'PUT', path, body: { stage_id: wanted.id }, signal }, v.unknown()),
      signal,
    );
    if ('skipped' in moved) return { moved: false, stageId: current.current_stage_id ?? '', skipped: moved.skipped };
    return { moved: true, stageId: wanted.id };
  };

  public readonly readStanding: AtsMethod<'readStanding'> = async (target, signal) =>
    standingOf(await this.reads.application(target.atsApplicationId, signal));

  /**
   * The status as a candidate tag, if supported: the new one added, and of the others only those the candidate has
   * removed (`POST`/`DELETE …/tags`). Each write passes through to the customer's ATS and holds one of Kombo's
   * concurrent actions; the candidate's tags are a synced read, which holds none.
   */
  public readonly setStatusTag: AtsMethod<'setStatusTag'> = async (target, tag, others, signal) => {
    if (await this.capabilities.refusal('addTag', signal)) return;
    const path = `/ats/candidates/${encodeURIComponent(target.atsCandidateId)}/tags`;
    const present = new Set(await this.reads.candidateTags(target.atsCandidateId, signal));
    const tagWrite = (write: 'addTag' | 'removeTag', method: 'POST' | 'DELETE', name: string) =>
      this.capabilities.attempt(
        write,
        () =>
          this.http.write(
            { method, path, body: { tag: { name } }, signal, idempotent: true, ordered: true },
            v.unknown(),
          ),
        signal,
      );
    if (tag !== undefined && !present.has(tag) && 'skipped' in (await tagWrite('addTag', 'POST', tag))) return;
    for (const other of others.filter((o) => o !== tag && present.has(o)))
      if ('skipped' in (await tagWrite('removeTag', 'DELETE', other))) return;
  };

  /** The report as an attachment of the application (Kombo puts it on the candidate where the ATS keeps files). */
  public readonly attachFile: AtsMethod<'attachFile'> = async (target, file, signal) => {
    const attachment = {
      name: file.name,
      type: 'OTHER',
      content_type: file.contentType,
      data: Buffer.from(file.bytes).toString('base64'),
    };
    const path = `/ats/applications/${encodeURIComponent(target.atsApplicationId)}/attachments`;
    const created = await this.capabilities.attempt(
      'addAttachment',
      () =>
        this.http.write(
          { method: 'POST', path, body: { attachment }, signal },
          v.object({ data: v.object({ id: v.string() }) }),
        ),
      signal,
    );
    return 'skipped' in created ? { skipped: created.skipped } : { fileId: created.made?.data.id };
  };

  public readonly findFile: AtsMethod<'findFile'> = (target, name, signal) =>
    this.reads.attachmentNamed(target.atsApplicationId, name, signal);

  /** The integration's capability table, for the doctor. */
  public readCapabilities(signal?: AbortSignal) {
    return this.capabilities.read(signal);
  }
}
