import { MOVES, stateCondition } from '../pipeline/application-states';
import type { ClaimWriteBackResult, Lease } from '../pipeline/ports';
import { refusedWriteBackSteps, type ApplicationKey, type ApplicationRecord } from '../pipeline/records';
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
   * An operator fixed what made a write-back fail, or what the ATS refused of it (`npm run ops -- retry`):
   * the application goes back to `completed` with no lease, so the next claim of its report resumes the steps not yet
   * recorded. Of one written back, the refused steps (`refusedWriteBackSteps`) and the status are taken off, so they
   * are done again; the rest (a note posted, a file attached) stays done. Undefined when there is nothing to reopen,
   * or the application changed since it was read.
   */
  public async reopenWriteBack(record: ApplicationRecord): Promise<ApplicationRecord | undefined> {
    const refused = refusedWriteBackSteps(record);
    if (record.state !== 'failed' && !refused.length) return undefined;
    const steps = refused.length ? [...refused.map((step) => `steps.${step}`), 'steps.status'] : [];
    const { update, condition } = moveUpdate(
      'reopenWriteBack',
      {
        set: { updatedAt: Date.now() },
        remove: ['failureReason', 'leaseOwner', 'leaseUntil', ...steps],
        extraValues: { ':seen': record.state, ...(refused.length ? { ':refused': 'refused' } : {}) },
      },
      'reportId',
      ...(refused.length ? ['outcome'] : []),
    );
    // Still as read: failed, or written back with the same refusals (a second operator's retry reopens nothing).
    const still = refused.map((step) => ` AND #steps.#${step}.#outcome = :refused`).join('');
    const when = `${condition} AND #state = :seen AND attribute_exists(#reportId)${still}`;
    const reopened = await this.updateApplicationWhen(record, update, when);
    return 'updated' in reopened ? reopened.updated : undefined;
  }
}
