/** The mapping between ATS ids and the service's ids, as the use cases see it (stored by shared/mapping). */

/**
 * `expired`: invited, no report by the trigger's `expireAfterDays`; a report that comes later is written back.
 * `left`: the candidate left the hiring process after the invitation (rejected, withdrawn, hired): no reminder, no
 * expiry; `leftFrom` keeps where the invitation was, for an undo (an unreject) to return it there.
 */
export const APPLICATION_STATES = [
  'claimed',
  'invited',
  'completed',
  'written_back',
  'failed',
  'expired',
  'left',
] as const;
export type ApplicationState = (typeof APPLICATION_STATES)[number];

export interface JobKey {
  connectionId: string;
  atsJobId: string;
  triggerId: string;
}

export interface JobRecord extends JobKey {
  state: 'creating' | 'ready';
  interviewName: string;
  /** The job's name in the ATS when the interview was made: reminders and resends name it as the invitation did. */
  jobName?: string | undefined;
  templateHash: string;
  interviewId?: string | undefined;
  inviteUrl?: string | undefined;
  leaseOwner?: string | undefined;
  leaseUntil?: number | undefined;
  /** How many leases were taken: above 1, an earlier creator may have created the interview and crashed. */
  createAttempts: number;
  updatedAt: number;
  /**
   * The page of the interview's reports the reconciler's reading stopped before, its share of a run spent: the next
   * run reads on from there, after the connection's other interviews (reconcile.use-case.ts).
   */
  reportsReadFrom?: number | undefined;
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
  /** What the invitation and the write-back did outside, each side effect under its name (see `StepName`). */
  steps: ApplicationSteps;
  /** Per-candidate invitations: the service's candidate id of this application's invitation, and its own link. */
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
  /** The report's rule held the candidate for a person's review rather than advancing them. */
  flaggedForReview?: boolean | undefined;
  failureReason?: string | undefined;
  expiredAt?: number | undefined;
  /**
   * The candidate left the process, as the ATS said it (a webhook or a look before contacting): kept on an application
   * whose report came or comes anyway, so its write-back never moves a stage.
   */
  exit?: ApplicationExit | undefined;
  /** Where the invitation was when the candidate left (`left`): an undo returns it there. */
  leftFrom?: 'invited' | 'expired' | undefined;
  /**
   * When an undo of the exit last returned the invitation to where it was: its follow-ups are due anew from then (one
   * consumed while it was `left` did nothing), so they are other subjects in the queue ledger.
   */
  returnedAt?: number | undefined;
  /** The stage entry that began the current invitation: a re-entry is another one (not a duplicate of it). */
  entryDeliveryId?: string | undefined;
  /** Invitations made again after the first (a re-entry after an expiry or an exit): 0 or absent for the first. */
  reinvitations?: number | undefined;
  /** What the invitation before this one did (its steps, as the re-entry read them): for the operator's timeline. */
  earlierSteps?: ApplicationSteps | undefined;
  /**
   * The invitation this one replaced expired, and its note was not written when the candidate re-entered the stage (a
   * worker stopped between the expiry and its note): this invitation writes it before its own note.
   */
  priorExpiry?: PriorExpiry | undefined;
  /** When the invitation expires after an operator's extension (`npm run ops -- extend`), if later than its own. */
  extendedUntil?: number | undefined;
  /** The ids of operators' requests carried out on this invitation (`resend`, `extend`), each once. */
  operatorRequests?: string[] | undefined;
  createdAt: number;
  updatedAt: number;
}

/**
 * The application's outward side effects, each recorded under its own name on the application item (architecture:
 * "Side effects as steps"): the service's invitation, the invite e-mail and note, the report link, note and file, the
 * stage move, the status shown, the expiry's note, and each reminder (`reminder1`, `reminder2`...). One is no side
 * effect: `reportArrived`, the candidate's report come while its write-back waits for its turn on the ATS.
 */
export type StepName =
  | 'serviceInvite'
  | 'inviteEmail'
  | 'inviteNote'
  | 'reportLink'
  | 'reportNote'
  | 'reportFile'
  | 'stageMove'
  | 'status'
  | 'expiryNote'
  | 'priorExpiryNote'
  | 'resend'
  | 'reportArrived'
  | `failureNote${string}`
  | `reminder${number}`;

/** An expiry whose note a re-entry carried into the next invitation: when it expired, and in which invitation. */
export interface PriorExpiry {
  expiredAt: number;
  /** That invitation's `reinvitations`: its note's marker. */
  round: number;
}

/** Why and when the candidate left the process. */
export interface ApplicationExit {
  /** `moved`: still in the process, moved out of the trigger's stage before taking the interview (a read found it). */
  kind: 'rejected' | 'withdrawn' | 'hired' | 'archived' | 'deleted' | 'moved';
  reason?: string | undefined;
  at: number;
}

/** A note's marker for the current invitation: the first invitation's markers as before, later ones numbered. */
export const invitationMarker = (base: string, record: Pick<ApplicationRecord, 'reinvitations'>): string =>
  record.reinvitations ? `${base}:${record.reinvitations + 1}` : base;

/** The n-th reminder's step (n from 0). */
export const reminderStep = (n: number): StepName => `reminder${n + 1}`;

/** Where one side effect stands. */
export interface StepRecord {
  /** Recorded before an effect the outside system cannot be asked about: found so on resume, it is not done again. */
  startedAt?: number | undefined;
  /** Held by one worker until then (the expiry's note). */
  leaseUntil?: number | undefined;
  doneAt?: number | undefined;
  /** `uncertain`: it may have happened before a crash, and is not done again; `refused`: a definite refusal. */
  outcome?: 'uncertain' | 'refused' | undefined;
  /** What it gave or showed: a note's id, the stage moved to, the status shown, a refusal's reason. */
  value?: string | undefined;
  /** The status's rank: a status only moves forward. */
  rank?: number | undefined;
}

export type ApplicationSteps = Partial<Record<StepName, StepRecord>>;

/**
 * The write-back's steps an operator's retry (`npm run ops -- retry`) does again where the ATS refused them for good
 * (a key without the permission, since given): the report note (with the report link, attached in the note's step,
 * where that was refused too) and the stage move. A link refused beside a note posted is not: the note carries it.
 */
const RETRIED_REFUSALS = ['reportNote', 'stageMove'] as const satisfies readonly StepName[];

/** The write-back's steps the ATS refused that a retry does again: none unless it was written back. */
export function refusedWriteBackSteps(
  record: Pick<ApplicationRecord, 'state' | 'reportId' | 'steps'>,
): ('reportNote' | 'stageMove' | 'reportLink')[] {
  if (record.state !== 'written_back' || record.reportId === undefined) return [];
  const refused = RETRIED_REFUSALS.filter((step) => record.steps[step]?.outcome === 'refused');
  const link = refused.includes('reportNote') && record.steps.reportLink?.outcome === 'refused';
  return link ? [...refused, 'reportLink'] : refused;
}

/** Done, or ended for good (refused): not performed again. */
export const stepDone = (step: StepRecord | undefined): boolean => step?.doneAt !== undefined;

/**
 * Whether a recorded expiry still owes its note: the expiry came first, so a candidate who left after it (found by
 * its follow-up's look, or by a webhook between the expiry's write and its note) still has it written.
 */
export const expiryNoteOwed = (record: ApplicationRecord): boolean =>
  record.expiredAt !== undefined &&
  !stepDone(record.steps.expiryNote) &&
  (record.state === 'expired' || (record.state === 'left' && record.leftFrom === 'expired'));

/**
 * What a re-entry carries of the expired invitation it replaces: its owed note (written by the new invitation before
 * its own, its start kept where a worker began it), or nothing.
 */
export function carriedExpiry(record: ApplicationRecord): { priorExpiry?: PriorExpiry; steps: ApplicationSteps } {
  if (!expiryNoteOwed(record) || record.expiredAt === undefined) return { steps: {} };
  const startedAt = record.steps.expiryNote?.startedAt;
  return {
    priorExpiry: { expiredAt: record.expiredAt, round: record.reinvitations ?? 0 },
    steps: startedAt === undefined ? {} : { priorExpiryNote: { startedAt } },
  };
}

/** Until when a worker holds the expiry's note (its lease), if it still does at `now`. */
export const expiryNoteHeldUntil = (record: ApplicationRecord, now: number): number | undefined => {
  const until = record.steps.expiryNote?.leaseUntil;
  return expiryNoteOwed(record) && until !== undefined && until >= now ? until : undefined;
};

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
