import { MOVES, stateCondition } from '../pipeline/application-states';
import type { ClaimWriteBackResult, Lease } from '../pipeline/ports';
import type { ApplicationKey, ApplicationRecord } from '../pipeline/records';
import { buildUpdate, moveUpdate, withNames } from './expressions';

import { DynamoTables } from './dynamo-tables';

/** The write-back's claim on an application and its steps. */
export class DynamoWriteBacks extends DynamoTables {
  public async claimWriteBack(
    key: ApplicationKey,
    reportId: string,
    lease: Lease,
    reportCandidateId?: string,
  ): Promise<ClaimWriteBackResult> {
    const open = stateCondition('claimReport');
    const update = withNames(
      buildUpdate({
        set: {
          reportId,
          reportCandidateId,
          state: MOVES.claimReport.to,
          leaseOwner: lease.owner,
          leaseUntil: lease.now + lease.durationMs,
          updatedAt: lease.now,
        },
        increment: ['writeBackAttempts'],
        // A failed invitation's reason is over once its candidate's report comes.
        remove: ['failureReason'],
        extraValues: { ...open.values, ':completed': MOVES.claimReport.to, ':now': lease.now },
      }),
      'state',
      'leaseUntil',
    );
    const claim = await this.updateApplicationWhen(
      key,
      update,
      // The report's first claim (application-states.ts), or its claim taken over once the holder's lease ran out.
      `(${open.condition} AND attribute_not_exists(#reportId)) OR ` +
        '(#reportId = :reportId AND #state = :completed AND ' +
        '(attribute_not_exists(#leaseUntil) OR #leaseUntil < :now))',
    );
    if ('updated' in claim) return { kind: 'claimed', record: claim.updated };
    const record =
      claim.refused ??
      (await this.findApplicationsByAtsId(key.connectionId, key.atsApplicationId)).find(
        (r) => r.triggerId === key.triggerId,
      );
    if (!record) throw new Error(`application ${key.atsApplicationId}: its claim was refused, and it is gone`);
    if (record.reportId !== reportId) return { kind: 'other-report', record };
    return record.state === 'written_back' ? { kind: 'done', record } : { kind: 'busy', record };
  }

  /**
   * An operator fixed what made a write-back fail for good (`npm run ops -- retry`): the application goes back to
   * `completed` with no lease, so the next claim of its report resumes the steps not yet recorded.
   */
  public async reopenFailedWriteBack(key: ApplicationKey): Promise<ApplicationRecord | undefined> {
    const { update, condition } = moveUpdate(
      'reopenWriteBack',
      { set: { updatedAt: Date.now() }, remove: ['failureReason', 'leaseOwner', 'leaseUntil'] },
      'reportId',
    );
    const reopened = await this.updateApplicationWhen(key, update, `${condition} AND attribute_exists(#reportId)`);
    return 'updated' in reopened ? reopened.updated : undefined;
  }
}
