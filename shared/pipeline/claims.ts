import type { ApplicationKey, ApplicationRecord } from './records';

/** The invite's claim on application × trigger: what a stage change claims with, and what the claim answers. */
export type ClaimApplicationResult =
  /** `resumed`: an earlier worker held this claim and stopped; its steps may be half done. */
  | { kind: 'claimed'; record: ApplicationRecord; resumed: boolean }
  | { kind: 'duplicate-delivery' }
  /** The ATS deleted the candidate (a tombstone): a late or replayed delivery must not bring them back. */
  | { kind: 'candidate-deleted' }
  /**
   * No record yet, and the ATS said lately that the application left the process (`noteExitSeen`): the claim waits
   * for a read of where the candidate stands (`exitReadAt` claims once that read found them still in).
   */
  | { kind: 'exit-seen' }
  /** Another worker holds the lease, or the steps are done: nothing to do for this message. */
  | { kind: 'held-elsewhere'; record: ApplicationRecord }
  | { kind: 'already-invited'; record: ApplicationRecord };

/** The write-back's claim on an application, for one report. */
export type ClaimWriteBackResult =
  | { kind: 'claimed'; record: ApplicationRecord }
  | { kind: 'done'; record: ApplicationRecord }
  | { kind: 'busy'; record: ApplicationRecord }
  | { kind: 'other-report'; record: ApplicationRecord };

export interface ApplicationClaimInput extends ApplicationKey {
  atsCandidateId: string;
  atsJobId: string;
  stageId?: string | undefined;
  candidateEmail?: string | undefined;
  /**
   * The trigger invites again when the candidate enters its stage anew after the invitation expired or they left
   * (`reinvite: on-reentry`): a delivery other than the one that began the invitation claims it once more.
   */
  mayReinvite?: boolean | undefined;
  /**
   * When the connector learnt of this stage entry (its webhook's receipt, the sweep's read). An entry learnt of
   * before the invitation expired is that invitation's (a delivery resent, or late off the queue), never a re-entry.
   */
  enteredAt?: number | undefined;
  /**
   * When a read that found the candidate still in the process began: an exit marked before it no longer holds the
   * claim; one marked since (a rejection during the read) still does.
   */
  exitReadAt?: number | undefined;
}

export interface Lease {
  owner: string;
  now: number;
  durationMs: number;
}

/** A new claim on application × trigger, as the first delivery records it: held by `lease`, no step done yet. */
export function newClaim(input: ApplicationClaimInput, lease: Lease, entryDeliveryId?: string): ApplicationRecord {
  const { connectionId, atsApplicationId, triggerId, atsCandidateId, atsJobId, stageId, candidateEmail } = input;
  return {
    ...{ connectionId, atsApplicationId, triggerId, atsCandidateId, atsJobId, stageId, candidateEmail },
    entryDeliveryId,
    state: 'claimed',
    steps: {},
    leaseOwner: lease.owner,
    leaseUntil: lease.now + lease.durationMs,
    createdAt: lease.now,
    updatedAt: lease.now,
  };
}
