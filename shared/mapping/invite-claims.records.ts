import { mayMove } from '../pipeline/application-states';
import { TransactionCanceledException, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { newClaim, type ApplicationClaimInput, type ClaimApplicationResult, type Lease } from '../pipeline/ports';
import { ClaimHeldElsewhereError } from '../pipeline/errors';
import { carriedExpiry, expiryNoteHeldUntil, type ApplicationKey, type ApplicationRecord } from '../pipeline/records';
import { MAPPING_TABLES } from './constants';
import { LEGACY_STEP_FIELDS, toApplication } from './legacy-steps';
import { buildUpdate, moveUpdate, type UpdateParts, withNames } from './expressions';

import { DynamoTables, applicationKeyFields, tombstoneKey } from './dynamo-tables';
import { exitSeenCheck } from './events.records';

/**
 * Whether this delivery is a re-entry that invites again (application-states.ts, `reinvite`): not the delivery that
 * began the invitation, and not one the connector learnt of before the invitation expired.
 */
export const mayReinvite = (input: ApplicationClaimInput, record: ApplicationRecord, deliveryId: string): boolean =>
  input.mayReinvite === true &&
  mayMove(record.state, 'reinvite') &&
  record.reportId === undefined &&
  record.entryDeliveryId !== deliveryId &&
  !(input.enteredAt !== undefined && record.expiredAt !== undefined && input.enteredAt <= record.expiredAt);

/**
 * A re-entry waits while a worker writes the expired invitation's note: it comes back after that worker's lease
 * (the note then written, or its lease run out and the note carried into the new invitation).
 */
export function noteHeldElsewhere(record: ApplicationRecord, now: number): void {
  const until = expiryNoteHeldUntil(record, now);
  if (until !== undefined)
    throw new ClaimHeldElsewhereError(`the expiry note of application ${record.atsApplicationId}`, until - now + 1);
}

/** Whether another worker's lease on the claim still runs. */
const claimHeld = (record: ApplicationRecord, lease: Lease): boolean =>
  record.leaseUntil !== undefined && record.leaseUntil >= lease.now;

/** What a claim taken again writes: its holder's lease, and the application as this stage entry names it. */
const claimedAgain = (input: ApplicationClaimInput, lease: Lease) => ({
  leaseOwner: lease.owner,
  leaseUntil: lease.now + lease.durationMs,
  updatedAt: lease.now,
  stageId: input.stageId,
  atsJobId: input.atsJobId,
  candidateEmail: input.candidateEmail,
});

/**
 * The re-entry's write, from the application as read: a new invitation, its steps begun afresh, carrying the expiry's
 * note where it is owed (so written only while no worker holds it, and not written meanwhile).
 */
function reinviteUpdate(
  input: ApplicationClaimInput,
  previous: ApplicationRecord,
  lease: Lease,
  deliveryId: string,
): [UpdateParts, string] {
  noteHeldElsewhere(previous, lease.now);
  const carried = carriedExpiry(previous);
  const move = moveUpdate(
    'reinvite',
    {
      // The earlier invitation's steps are kept beside the new ones, for the operator's timeline (the last one only).
      set: { ...carried, earlierSteps: previous.steps, entryDeliveryId: deliveryId, ...claimedAgain(input, lease) },
      // The old step fields of an item written before the steps map go too: the new invitation's steps begin afresh.
      remove: [
        ...['expiredAt', 'exit', 'leftFrom', 'returnedAt', 'failureReason', 'cleanStop', 'extendedUntil'],
        ...(carried.priorExpiry ? [] : ['priorExpiry']),
        ...LEGACY_STEP_FIELDS,
      ],
      increment: ['reinvitations'],
      extraValues: {
        ...{ ':delivery': deliveryId, ':enteredAt': input.enteredAt },
        ...(carried.priorExpiry ? { ':now': lease.now } : {}),
      },
    },
    ...['reportId', 'entryDeliveryId', ...(carried.priorExpiry ? ['expiryNote', 'doneAt'] : [])],
  );
  // The entry learnt of after the expiry as it stands when written (an extension and a second expiry may come between
  // the read and this write).
  const afterExpiry =
    input.enteredAt === undefined ? '' : ' AND (attribute_not_exists(#expiredAt) OR #expiredAt < :enteredAt)';
  const note = '#steps.#expiryNote';
  const noteAsRead = carried.priorExpiry
    ? ` AND attribute_not_exists(${note}.#doneAt) AND ` +
      `(attribute_not_exists(${note}.#leaseUntil) OR ${note}.#leaseUntil < :now)`
    : '';
  const condition =
    `${move.condition} AND attribute_not_exists(#reportId) AND ` +
    `(attribute_not_exists(#entryDeliveryId) OR #entryDeliveryId <> :delivery)${afterExpiry}${noteAsRead}`;
  return [move.update, condition];
}

/** The invite's claim on application × trigger and its steps. */
export class DynamoInviteClaims extends DynamoTables {
  /**
   * One transaction: the delivery is recorded and the application × trigger claimed when new. Only when the
   * claim exists (a retry after a crash, a duplicate) is a second request made, to take over an expired lease.
   */
  public async claimApplication(
    delivery: { source: string; deliveryId: string; enqueueId: string },
    input: ApplicationClaimInput,
    lease: Lease,
  ): Promise<ClaimApplicationResult> {
    const fresh = newClaim(input, lease, delivery.deliveryId);
    try {
      await this.send(this.claimTransaction(delivery, input, fresh));
      return { kind: 'claimed', record: fresh, resumed: false };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      return this.afterRefusedClaim(error, input, lease, delivery.deliveryId);
    }
  }

  /** The delivery recorded, the application claimed, and the candidate not deleted: all or nothing. */
  private claimTransaction(
    delivery: { source: string; deliveryId: string; enqueueId: string },
    input: ApplicationClaimInput,
    fresh: ApplicationRecord,
  ): TransactWriteItemsCommand {
    const now = fresh.createdAt;
    const deliveryItem = {
      pk: `${delivery.source}#${delivery.deliveryId}`,
      kind: 'delivery',
      connectionId: input.connectionId,
      enqueueId: delivery.enqueueId,
      receivedAt: now,
      [MAPPING_TABLES.ttlAttribute]: this.expiry(now, this.eventDays),
    };
    const applicationItem = {
      ...applicationKeyFields(input),
      ...fresh,
      candidateKey: `${input.connectionId}#${input.atsCandidateId}`,
      [MAPPING_TABLES.ttlAttribute]: this.expiry(now, this.applicationDays),
    };
    return new TransactWriteItemsCommand({
      TransactItems: [
        {
          Put: {
            TableName: this.tables.events,
            Item: marshall(deliveryItem),
            // The same message again (a retry or a DLQ redrive) may pass; another delivery of the same event may not.
            ConditionExpression: 'attribute_not_exists(pk) OR enqueueId = :enqueueId',
            ExpressionAttributeValues: marshall({ ':enqueueId': delivery.enqueueId }),
          },
        },
        {
          Put: {
            TableName: this.tables.applications,
            Item: marshall(applicationItem, { removeUndefinedValues: true }),
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        {
          // A candidate the ATS deleted stays deleted: no delivery, late or replayed, records or invites them.
          ConditionCheck: {
            TableName: this.tables.events,
            Key: marshall({ pk: tombstoneKey(input.connectionId, input.atsCandidateId) }),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        exitSeenCheck(this.tables.events, input, now),
      ],
    });
  }

  /** Which condition refused the claim: a deleted candidate, a duplicate delivery, or a claim that exists. */
  private async afterRefusedClaim(
    error: TransactionCanceledException,
    input: ApplicationClaimInput,
    lease: Lease,
    deliveryId: string,
  ): Promise<ClaimApplicationResult> {
    const [deliveryReason, claimReason, tombstoneReason, exitReason] = error.CancellationReasons ?? [];
    if (tombstoneReason?.Code === 'ConditionalCheckFailed') return { kind: 'candidate-deleted' };
    if (deliveryReason?.Code === 'ConditionalCheckFailed') return { kind: 'duplicate-delivery' };
    // Where a record exists, its own state says whether the candidate left; the mark concerns a first claim only.
    if (claimReason?.Code !== 'ConditionalCheckFailed' && exitReason?.Code === 'ConditionalCheckFailed')
      return { kind: 'exit-seen' };
    if (claimReason?.Code !== 'ConditionalCheckFailed') throw error;
    const record = claimReason.Item ? toApplication(unmarshall(claimReason.Item)) : await this.getApplication(input);
    if (!record) throw error;
    if (mayMove(record.state, 'reclaimInvite') && record.reportId === undefined)
      return this.reclaimFailedInvite(input, record, lease);
    if (mayReinvite(input, record, deliveryId)) return this.reinvite(input, record, lease, deliveryId);
    if (record.state !== 'claimed') return { kind: 'already-invited', record };
    if (claimHeld(record, lease)) return { kind: 'held-elsewhere', record };
    return this.takeOverClaim(input, record, lease);
  }

  /**
   * An invite that failed for good (a revoked key, a missing permission) is tried again when the candidate
   * enters the stage anew, after the cause is fixed: a new delivery, since the one that failed is recorded.
   * The steps it had done stay recorded and are skipped; `resumed` makes the worker look for its note first.
   */
  private async reclaimFailedInvite(
    input: ApplicationClaimInput,
    previous: ApplicationRecord,
    lease: Lease,
  ): Promise<ClaimApplicationResult> {
    const move = moveUpdate(
      'reclaimInvite',
      { set: claimedAgain(input, lease), remove: ['failureReason', 'exit'], increment: ['inviteClaims'] },
      'reportId',
    );
    const condition = `${move.condition} AND attribute_not_exists(#reportId)`;
    return this.resume(input, previous, { update: move.update, condition });
  }

  /**
   * The candidate entered the stage anew after their invitation expired: one new invitation,
   * its steps begun afresh. Only a delivery other than the one that began the current invitation makes it, once: the
   * first to claim records itself as the new invitation's entry, so its duplicates and the sweep find it claimed. An
   * expiry note still owed is carried into the new invitation, which writes it before its own note; while a worker
   * writes it, the re-entry comes back after that worker's lease.
   */
  private async reinvite(
    input: ApplicationClaimInput,
    previous: ApplicationRecord,
    lease: Lease,
    deliveryId: string,
  ): Promise<ClaimApplicationResult> {
    let taken = await this.updateApplicationWhen(input, ...reinviteUpdate(input, previous, lease, deliveryId));
    // The expiry's note changed since the read (written, or taken by a worker): once more with it as it stands.
    if ('refused' in taken && taken.refused && mayReinvite(input, taken.refused, deliveryId))
      taken = await this.updateApplicationWhen(input, ...reinviteUpdate(input, taken.refused, lease, deliveryId));
    if ('updated' in taken) return { kind: 'claimed', record: taken.updated, resumed: false };
    // Refused twice and still to be re-invited (its note changing under it): this entry comes back, never dropped.
    if (taken.refused && mayReinvite(input, taken.refused, deliveryId))
      throw new ClaimHeldElsewhereError(`the re-entry of application ${input.atsApplicationId}`, 1_000);
    // Another copy of this entry re-invited first and holds the claim: this copy waits for it, never acknowledges it
    // as done (the same SQS message taken by two workers is deleted by either; the holder may still fail).
    const now = taken.refused ?? previous;
    return {
      kind: now.state === 'claimed' && claimHeld(now, lease) ? 'held-elsewhere' : 'already-invited',
      record: now,
    };
  }

  /** A claim whose worker stopped (crash, timeout): its lease has run out, so this worker resumes its steps. */
  private async takeOverClaim(
    key: ApplicationKey,
    previous: ApplicationRecord,
    lease: Lease,
  ): Promise<ClaimApplicationResult> {
    const update = withNames(
      buildUpdate({
        set: { leaseOwner: lease.owner, leaseUntil: lease.now + lease.durationMs, updatedAt: lease.now },
        increment: ['inviteClaims'],
        extraValues: { ':claimed': 'claimed', ':now': lease.now },
      }),
      'state',
      'leaseUntil',
    );
    const condition = '#state = :claimed AND (attribute_not_exists(#leaseUntil) OR #leaseUntil < :now)';
    return this.resume(key, previous, { update, condition });
  }

  /** An existing claim taken by this worker when `condition` holds; held elsewhere when another got there first. */
  private async resume(
    key: ApplicationKey,
    previous: ApplicationRecord,
    claim: { update: ReturnType<typeof buildUpdate>; condition: string },
  ): Promise<ClaimApplicationResult> {
    const taken = await this.updateApplicationWhen(key, claim.update, claim.condition);
    return 'updated' in taken
      ? { kind: 'claimed', record: taken.updated, resumed: true }
      : { kind: 'held-elsewhere', record: previous };
  }

  public async releaseClaim(key: ApplicationKey, owner: string, cleanStop: string | undefined): Promise<void> {
    await this.updateHeldApplication(key, owner, {
      set: { cleanStop, updatedAt: Date.now() },
      remove: cleanStop === undefined ? ['leaseOwner', 'leaseUntil', 'cleanStop'] : ['leaseOwner', 'leaseUntil'],
    });
  }

  public async markApplicationFailed(key: ApplicationKey, owner: string, reason: string): Promise<void> {
    await this.updateHeldApplication(key, owner, {
      set: { state: 'failed', failureReason: reason.slice(0, 500), updatedAt: Date.now() },
      remove: ['leaseOwner', 'leaseUntil'],
    });
  }
}
