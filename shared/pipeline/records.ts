/** The mapping between ATS ids and the service's ids, as the use cases see it (stored by shared/mapping). */

/** `expired`: invited, no report by the trigger's `expireAfterDays`; a report that comes later is written back. */
export const APPLICATION_STATES = ['claimed', 'invited', 'completed', 'written_back', 'failed', 'expired'] as const;
export type ApplicationState = (typeof APPLICATION_STATES)[number];

export interface JobKey {
  connectionId: string;
  atsJobId: string;
  triggerId: string;
}

export interface JobRecord extends JobKey {
  state: 'creating' | 'ready';
  interviewName: string;
  templateHash: string;
  interviewId?: string | undefined;
  inviteUrl?: string | undefined;
  leaseOwner?: string | undefined;
  leaseUntil?: number | undefined;
  /** How many leases were taken: above 1, an earlier creator may have created the interview and crashed. */
  createAttempts: number;
  updatedAt: number;
}

export interface ApplicationKey {
  connectionId: string;
  atsApplicationId: string;
  triggerId: string;
}

export interface ApplicationRecord extends ApplicationKey {
  atsCandidateId: string;
  atsJobId: string;
  stageId?: string | undefined;
  state: ApplicationState;
  /** Lower-cased, trimmed: reports are matched on interview id + this. */
  candidateEmail?: string | undefined;
  interviewId?: string | undefined;
  leaseOwner?: string | undefined;
  leaseUntil?: number | undefined;
  /** Set before the e-mail is sent: a retry that finds it without `inviteEmailAt` must not send again. */
  inviteEmailStartedAt?: number | undefined;
  inviteEmailAt?: number | undefined;
  /** The e-mail may have gone out from a worker that stopped before recording it; not sent again. */
  inviteEmailUncertain?: boolean | undefined;
  /** SES refused the invite e-mail for good (its error name); the ATS note with the same link still went out. */
  inviteEmailRefused?: string | undefined;
  inviteNoteAt?: number | undefined;
  /** Per-candidate invitations: set before `POST /interview/invite`; on resume the invitation is looked up. */
  serviceInviteStartedAt?: number | undefined;
  serviceInviteAt?: number | undefined;
  /** The service's candidate id of this application's invitation, and the candidate's own link. */
  serviceCandidateId?: string | undefined;
  candidateInviteUrl?: string | undefined;
  reportId?: string | undefined;
  /** The interview service's candidate id of that report: with it, an operator can queue the report again. */
  reportCandidateId?: string | undefined;
  /** Write-back claims taken for this report: above 1, a note may have been posted by a worker that crashed. */
  writeBackAttempts?: number | undefined;
  /** Invite claims taken over after the first (a crash, a lease run out, a clean stop). */
  inviteClaims?: number | undefined;
  /**
   * The claim that last stopped with nothing half-done (`invite:<claims>`, `writeBack:<attempts>`): the ATS
   * refused its next call unsent (a spent rate-limit window, a 429). The claim after it need look nothing up.
   */
  cleanStop?: string | undefined;
  /** The report link attached where the ATS has a link field (Lever's links). */
  reportLinkAt?: number | undefined;
  reportNoteId?: string | undefined;
  reportNoteAt?: number | undefined;
  movedToStageId?: string | undefined;
  movedAt?: number | undefined;
  flaggedForReview?: boolean | undefined;
  failureReason?: string | undefined;
  /** Reminders begun and sent: a begun one not sent was interrupted, and is not sent again (as the invite e-mail). */
  remindersStarted?: number | undefined;
  remindersSent?: number | undefined;
  lastReminderAt?: number | undefined;
  expiredAt?: number | undefined;
  expiryNoteAt?: number | undefined;
  /** The status last shown in the ATS (writeBack.status); it only moves forward. */
  statusTag?: string | undefined;
  createdAt: number;
  updatedAt: number;
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
