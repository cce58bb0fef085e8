import type { ApplicationKey, ApplicationRecord } from '../pipeline/records';
import { buildUpdate, withNames } from './expressions';

import { DynamoTables } from './dynamo-tables';

/** Reminders, the expiry and its note, and the status shown, on the application item. */
export class DynamoFollowUps extends DynamoTables {
  public async beginReminder(key: ApplicationKey, n: number, now: number): Promise<boolean> {
    const update = withNames(
      buildUpdate({
        set: { remindersStarted: n + 1, updatedAt: now },
        extraValues: { ':n': n, ':invited': 'invited' },
      }),
      'state',
    );
    return this.updateApplicationIf(
      key,
      update,
      '#state = :invited AND (attribute_not_exists(#remindersStarted) OR #remindersStarted = :n)',
    );
  }

  /** Recorded on the application while it exists: a reminder finished after a privacy purge re-creates nothing. */
  public async finishReminder(key: ApplicationKey, n: number, now: number): Promise<void> {
    const update = buildUpdate({ set: { remindersSent: n + 1, lastReminderAt: now, updatedAt: now } });
    await this.updateApplicationIf(key, update, 'attribute_exists(pk)');
  }

  public async expireApplication(key: ApplicationKey, now: number): Promise<ApplicationRecord | undefined> {
    const update = withNames(
      buildUpdate({
        set: { state: 'expired', expiredAt: now, updatedAt: now },
        extraValues: { ':invited': 'invited' },
      }),
      'state',
    );
    // Only an invitation with no report expires; one already expired keeps its first time.
    const expired = await this.updateApplicationWhen(key, update, '#state = :invited');
    if ('updated' in expired) return expired.updated;
    return expired.refused?.state === 'expired' ? expired.refused : undefined;
  }

  public async leaseExpiryNote(key: ApplicationKey, now: number, until: number): Promise<boolean> {
    const update = withNames(
      buildUpdate({ set: { expiryLeaseUntil: until }, extraValues: { ':now': now, ':expired': 'expired' } }),
      'state',
      'expiryNoteAt',
    );
    return this.updateApplicationIf(
      key,
      update,
      '#state = :expired AND attribute_not_exists(#expiryNoteAt) AND ' +
        '(attribute_not_exists(#expiryLeaseUntil) OR #expiryLeaseUntil < :now)',
    );
  }

  public async claimStatus(key: ApplicationKey, status: string, rank: number): Promise<boolean> {
    const update = withNames(
      buildUpdate({ set: { statusTag: status, statusRank: rank, updatedAt: Date.now() } }),
      'statusRank',
    );
    return this.updateApplicationIf(
      key,
      update,
      'attribute_exists(pk) AND (attribute_not_exists(#statusRank) OR #statusRank <= :statusRank)',
    );
  }

  /** Recorded on the application while it exists: a follow-up finished after a privacy purge re-creates nothing. */
  public async recordFollowUp(key: ApplicationKey, fields: { expiryNoteAt?: number; statusTag?: string }) {
    const update = buildUpdate({ set: { ...fields, updatedAt: Date.now() } });
    await this.updateApplicationIf(key, update, 'attribute_exists(pk)');
  }
}
