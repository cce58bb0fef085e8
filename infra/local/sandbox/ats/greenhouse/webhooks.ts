import { greenhouseProfile } from '../../../../../shared/ats/greenhouse/profile';
import { seededRandom } from '../../http-kit';
import { deliverSigned, sendChange, signDelivery, type DeliveryRecord, type WebhookHub } from '../signed-webhooks';
import type { WebhookTarget } from '../signed-webhooks';
import type { Application, GreenhouseRecords, LifecycleEvent } from './state';

/** Greenhouse unicode-escapes its JSON before signing (webhooks/_introduction.md); re-serialising breaks it. */
const greenhouseJson = (document: unknown) =>
  Buffer.from(JSON.stringify(document).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026'));

/** A webhook's document as Greenhouse signs it (`Signature: sha256 <hex>`, a `Greenhouse-Event-ID` each). */
const signed = (target: WebhookTarget, action: string, payload: unknown) =>
  signDelivery(
    greenhouseProfile.signature,
    target.secret,
    { action, payload },
    { event: action, serialize: greenhouseJson },
  );

/** The webhooks Greenhouse sends, with each endpoint's secret key (webhooks/_introduction.md, _candidate_events.md). */
export class GreenhouseWebhooks {
  private readonly hub: WebhookHub;
  /** Each application's last stage change, to send again as a new event. */
  private readonly lastStageChange = new Map<number, unknown>();

  public constructor(
    private readonly records: GreenhouseRecords,
    seed: number,
  ) {
    this.hub = { state: records.state, random: seededRandom(seed) };
  }

  /** `candidate_stage_change` for the application's current stage, `repeat` times (the same event id). */
  public stageChange(application: Application, repeat = 1): Promise<DeliveryRecord[]> {
    const payload = { application: this.payloadOf(application) };
    this.lastStageChange.set(application.id, payload);
    return this.send('candidate_stage_change', payload, { repeat, droppable: true });
  }

  /** The application's last stage change again, as a new event (a new Greenhouse-Event-ID). */
  public async resendStageChange(applicationId: number): Promise<DeliveryRecord> {
    const payload = this.lastStageChange.get(applicationId);
    if (!payload) throw new Error(`application ${applicationId} has sent no stage change yet`);
    return (await this.send('candidate_stage_change', payload))[0] as DeliveryRecord;
  }

  /**
   * An application rejected, hired, unrejected or unhired, sent `repeat` times (the same event id): reject, unreject
   * and unhire carry the application as a stage change does; `hire_candidate` carries no status and no stage but
   * the accepted `offer` (webhooks/_candidate_events.md).
   */
  public lifecycleChange(application: Application, event: LifecycleEvent, repeat = 1): Promise<DeliveryRecord[]> {
    const shown = event === 'hire_candidate' ? this.hiredPayload(application) : this.payloadOf(application);
    return this.send(event, { application: shown }, { repeat });
  }

  /** "Delete candidate": the person and the ids of the applications deleted. */
  public candidateDeleted(applicationId: number): Promise<DeliveryRecord[]> {
    const { candidate, deleted } = this.records.deleteCandidate(applicationId);
    const { id, first_name, last_name } = candidate;
    return this.send('delete_candidate', { person: { id, first_name, last_name, deleted_application_ids: deleted } });
  }

  /** "Candidate merged": the record merged away and the one that stays. */
  public candidateMerged(applicationId: number): Promise<DeliveryRecord[]> {
    const { loser, winner } = this.records.mergeCandidate(applicationId);
    const { id, first_name, last_name } = loser;
    return this.send('merge_candidate', { person: { id, first_name, last_name, new_candidate_id: winner.id } });
  }

  public candidateAnonymized(applicationId: number): Promise<DeliveryRecord[]> {
    const candidate = this.records.anonymizeCandidate(applicationId);
    const payload = { candidate_id: candidate.id, anonymized_fields: ['full_name', 'email_addresses'] };
    return this.send('candidate_anonymized', payload);
  }

  /** The ping a new endpoint gets (its answer decides whether Greenhouse enables it). */
  public ping(target: WebhookTarget): Promise<DeliveryRecord> {
    const payload = {
      web_hook_id: this.records.state.webhooks.length,
      endpoint_url: target.url,
      event: 'candidate_stage_change',
    };
    return deliverSigned(target, signed(target, 'ping', payload), this.records.state.deliveries, 'ping');
  }

  /** The application as the stage-change, reject, unreject and unhire webhooks show it (active|rejected|hired). */
  private payloadOf(application: Application) {
    const rejected = application.status === 'rejected';
    return {
      id: application.id,
      rejected_at: rejected ? (application.rejected_at ?? null) : null,
      prospect: false,
      status: application.status,
      applied_at: new Date().toISOString(),
      ...this.common(application),
      rejection_reason: rejected ? (application.rejection_reason ?? null) : null,
      rejection_details: rejected ? { custom_fields: {} } : null,
      current_stage: { ...application.current_stage, interviews: [] },
    };
  }

  /** "Candidate hired": the application with its accepted offer, no status and no current stage. */
  private hiredPayload(application: Application) {
    const now = new Date().toISOString();
    const [day, offerId] = [now.slice(0, 10), this.records.newId()];
    const offer = {
      id: offerId,
      version: 1,
      created_at: now,
      sent_at: day,
      resolved_at: now,
      starts_at: day,
      custom_fields: {},
    };
    return { id: application.id, ...this.common(application), offer };
  }

  /** What every application payload carries: its link, the candidate, the job. */
  private common(application: Application) {
    const candidate = this.records.candidateOf(application);
    const job = this.records.jobOf(application);
    return {
      url: `https://app.greenhouse.io/people/${candidate.id}?application_id=${application.id}`,
      candidate: { ...candidate, phone_numbers: [], attachments: [], custom_fields: {} },
      jobs: [{ id: job.id, name: job.name, requisition_id: `REQ-${job.id}` }],
      custom_fields: {},
    };
  }

  /** A webhook is made for one event ("When"): a target made for others is not sent this one. */
  private send(action: string, payload: unknown, options: { repeat?: number; droppable?: boolean } = {}) {
    return sendChange(this.hub, { action, deliveries: (target) => [signed(target, action, payload)], ...options });
  }
}
