import { greenhouseProfile } from '../../../../../shared/ats/greenhouse/profile';
import { signatureFor } from '../../../../../shared/ats/signatures';
import { randomUUID } from 'node:crypto';
import { seededRandom } from '../../http-kit';
import { deliverSigned, receives, type DeliveryRecord } from '../signed-webhooks';
import type { Application, GreenhouseRecords, LifecycleEvent } from './state';

/**
 * Greenhouse unicode-escapes its JSON before signing (webhooks/_introduction.md); re-serialising breaks the signature.
 */
export function greenhouseJson(document: unknown): Buffer {
  return Buffer.from(
    JSON.stringify(document).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026'),
    'utf8',
  );
}

/**
 * The webhooks Greenhouse sends, signed (`Signature: sha256 <hex>`) with each endpoint's secret key, with a
 * `Greenhouse-Event-ID` (webhooks/_introduction.md, _candidate_events.md).
 */
export class GreenhouseWebhooks {
  private readonly random: () => number;
  /** Each application's last stage change, to send again as a new event. */
  private readonly lastStageChange = new Map<number, Buffer>();

  public constructor(
    private readonly records: GreenhouseRecords,
    seed: number,
  ) {
    this.random = seededRandom(seed);
  }

  /** `candidate_stage_change` for the application's current stage, `repeat` times (the same event id). */
  public async stageChange(application: Application, repeat = 1): Promise<DeliveryRecord[]> {
    const body = this.stageChangeBody(application);
    this.lastStageChange.set(application.id, body);
    const eventId = randomUUID();
    const { state } = this.records;
    if (state.faults.dropStageChangeRate > 0 && this.random() < state.faults.dropStageChangeRate) {
      const dropped = { eventId, url: '', action: 'candidate_stage_change', at: Date.now(), dropped: true };
      state.deliveries.push(dropped);
      return [dropped];
    }
    const results: DeliveryRecord[] = [];
    for (let i = 0; i < Math.max(1, repeat); i++)
      results.push(...(await this.send(body, 'candidate_stage_change', eventId)));
    return results;
  }

  /** The application's last stage change again, as a new event (a new Greenhouse-Event-ID). */
  public async resendStageChange(applicationId: number): Promise<DeliveryRecord> {
    const body = this.lastStageChange.get(applicationId);
    if (!body) throw new Error(`application ${applicationId} has sent no stage change yet`);
    const [record] = await this.send(body, 'candidate_stage_change', randomUUID());
    return record as DeliveryRecord;
  }

  /**
   * An application rejected, hired, unrejected or unhired, its webhook sent `repeat` times (the same event id):
   * `reject_candidate`, `unreject_candidate` and `unhire_candidate` carry the application as a stage change does, with
   * its `status`, `rejected_at`, `rejection_reason` and (rejected) `rejection_details`; `hire_candidate` carries no
   * status and no stage but the accepted `offer` (webhooks/_candidate_events.md).
   */
  public async lifecycleChange(application: Application, event: LifecycleEvent, repeat = 1): Promise<DeliveryRecord[]> {
    const body = greenhouseJson({
      action: event,
      payload: {
        application: event === 'hire_candidate' ? this.hiredPayload(application) : this.payloadOf(application),
      },
    });
    const eventId = randomUUID();
    const results: DeliveryRecord[] = [];
    for (let i = 0; i < Math.max(1, repeat); i++) results.push(...(await this.send(body, event, eventId)));
    return results;
  }

  /** "Delete candidate": the person and the ids of the applications deleted. */
  public candidateDeleted(applicationId: number): Promise<DeliveryRecord[]> {
    const { candidate, deleted } = this.records.deleteCandidate(applicationId);
    const { id, first_name, last_name } = candidate;
    const person = { id, first_name, last_name, deleted_application_ids: deleted };
    return this.send(greenhouseJson({ action: 'delete_candidate', payload: { person } }), 'delete_candidate');
  }

  /** "Candidate merged": the record merged away and the one that stays. */
  public candidateMerged(applicationId: number): Promise<DeliveryRecord[]> {
    const { loser, winner } = this.records.mergeCandidate(applicationId);
    const { id, first_name, last_name } = loser;
    const person = { id, first_name, last_name, new_candidate_id: winner.id };
    return this.send(greenhouseJson({ action: 'merge_candidate', payload: { person } }), 'merge_candidate');
  }

  public candidateAnonymized(applicationId: number): Promise<DeliveryRecord[]> {
    const candidate = this.records.anonymizeCandidate(applicationId);
    const payload = { candidate_id: candidate.id, anonymized_fields: ['full_name', 'email_addresses'] };
    return this.send(greenhouseJson({ action: 'candidate_anonymized', payload }), 'candidate_anonymized');
  }

  /** The ping a new endpoint gets (its answer decides whether Greenhouse enables it). */
  public async ping(url: string): Promise<DeliveryRecord> {
    const payload = {
      web_hook_id: this.records.state.webhooks.length,
      endpoint_url: url,
      event: 'candidate_stage_change',
    };
    const [ping] = await this.send(greenhouseJson({ action: 'ping', payload }), 'ping');
    return ping as DeliveryRecord;
  }

  private stageChangeBody(application: Application): Buffer {
    return greenhouseJson({ action: 'candidate_stage_change', payload: { application: this.payloadOf(application) } });
  }

  /** The application as the stage-change, reject, unreject and unhire webhooks show it (active|rejected|hired). */
  private payloadOf(application: Application) {
    const candidate = this.records.candidateOf(application);
    const rejected = application.status === 'rejected';
    return {
      id: application.id,
      rejected_at: rejected ? (application.rejected_at ?? null) : null,
      prospect: false,
      status: application.status,
      applied_at: new Date().toISOString(),
      url: `https://app.greenhouse.io/people/${candidate.id}?application_id=${application.id}`,
      rejection_reason: rejected ? (application.rejection_reason ?? null) : null,
      rejection_details: rejected ? { custom_fields: {} } : null,
      current_stage: { ...application.current_stage, interviews: [] },
      candidate: { ...candidate, phone_numbers: [], attachments: [], custom_fields: {} },
      jobs: [this.jobPayload(application)],
      custom_fields: {},
    };
  }

  /** "Candidate hired": the application with its accepted offer, no status and no current stage. */
  private hiredPayload(application: Application) {
    const candidate = this.records.candidateOf(application);
    const now = new Date().toISOString();
    return {
      id: application.id,
      url: `https://app.greenhouse.io/people/${candidate.id}?application_id=${application.id}`,
      candidate: { ...candidate, phone_numbers: [], attachments: [], custom_fields: {} },
      jobs: [this.jobPayload(application)],
      custom_fields: {},
      offer: {
        id: this.records.newId(),
        version: 1,
        created_at: now,
        sent_at: now.slice(0, 10),
        resolved_at: now,
        starts_at: now.slice(0, 10),
        custom_fields: {},
      },
    };
  }

  private jobPayload(application: Application) {
    const job = this.records.jobOf(application);
    return { id: job.id, name: job.name, requisition_id: `REQ-${job.id}` };
  }

  private async send(body: Buffer, action: string, eventId = randomUUID()): Promise<DeliveryRecord[]> {
    const { state } = this.records;
    const results: DeliveryRecord[] = [];
    for (const target of state.webhooks) {
      // A disabled webhook (its ping failed, or an admin switched it off) is sent nothing; a webhook is made for one
      // event ("When"), and a target made for others is not sent this one (a ping goes to the webhook being saved).
      if (target.enabled === false || (action !== 'ping' && !receives(target, action))) continue;
      const scheme = greenhouseProfile.signature;
      const headers = {
        [scheme.header.toLowerCase()]: signatureFor(scheme, target.secret, body),
        [scheme.deliveryHeader.toLowerCase()]: eventId,
        'user-agent': 'Greenhouse-Sandbox',
      };
      results.push(await deliverSigned(target, body, headers, state.deliveries, action, eventId));
    }
    return results;
  }
}
