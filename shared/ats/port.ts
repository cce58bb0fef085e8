import type { AtsKind, StageMatcher } from '../config';

/** A raw inbound webhook as the gateway received it: lower-cased headers and the exact body bytes. */
export interface InboundWebhook {
  headers: Readonly<Record<string, string | undefined>>;
  rawBody: Buffer;
}

/**
 * "A candidate's application is now in this stage", in ATS-neutral terms. Some ATSs send ids only (Lever):
 * the job and the candidate's name and e-mail are then filled in by `confirmStageEntered`, in the worker.
 */
export interface StageEnteredEvent {
  /** The ATS's delivery id, or a key derived from the payload where the ATS gives none. */
  deliveryId: string;
  atsJobId?: string | undefined;
  jobName?: string | undefined;
  atsApplicationId: string;
  atsCandidateId: string;
  stage: { id?: string | undefined; name?: string | undefined };
  candidate: { name?: string | undefined; email?: string | undefined };
}

export type WebhookVerification =
  | { valid: false; reason: string }
  /** `replayKey`: a value the connector must refuse to see twice (Lever's per-delivery token). */
  | { valid: true; replayKey?: string; replayTtlSeconds?: number };

export type DeletionConfirmation = { confirmed: true } | { confirmed: false; reason: string };

export type StageConfirmation =
  | { confirmed: true; event: StageEnteredEvent & { atsJobId: string } }
  | { confirmed: false; reason: string };

/** The ATS deleted (or anonymised) a candidate: the connector must forget them. */
export interface CandidateDeletedEvent {
  deliveryId: string;
  atsCandidateId: string;
  /** Applications the ATS says go with the candidate (Greenhouse's deleted_application_ids). */
  atsApplicationIds: string[];
}

export type WebhookParseResult =
  | { kind: 'ping' }
  | { kind: 'candidate-deleted'; event: CandidateDeletedEvent }
  | { kind: 'ignored'; reason: string }
  | { kind: 'stage-entered'; event: StageEnteredEvent }
  | { kind: 'invalid'; message: string };

/** Where a write-back lands. */
export interface ApplicationRef {
  atsApplicationId: string;
  atsCandidateId: string;
  atsJobId: string;
  /** The stage the application was in when the connector acted, for ATSs that move "from" a stage. */
  fromStageId?: string | undefined;
}

export interface AtsNote {
  /** Plain text; adapters convert to the ATS's format. */
  body: string;
  /** A unique, invisible-enough token in the note, so a lost answer can be checked before re-posting. */
  marker: string;
}

/**
 * What the pipeline needs of an ATS. Kept small and ATS-neutral: authenticate and read a webhook, post a
 * note, move a stage, and look for a note already posted.
 */
export interface AtsAdapter {
  readonly kind: AtsKind;
  /** Authenticates over the raw bytes (constant-time) before the body is read for anything else. */
  verifyWebhook(request: InboundWebhook, now: number): WebhookVerification;
  parseWebhook(request: InboundWebhook): WebhookParseResult;
  /**
   * In the worker, before anything is sent: checks the event against the ATS's API where the webhook body is
   * not signed (Lever), and fills in what the webhook did not carry. Others confirm what they parsed.
   */
  confirmStageEntered(event: StageEnteredEvent, signal?: AbortSignal): Promise<StageConfirmation>;
  /** A 2xx from the ATS is a note written; `noteId` is there when the answer carried one. */
  postNote(target: ApplicationRef, note: AtsNote, signal?: AbortSignal): Promise<{ noteId?: string | undefined }>;
  /** Whether a note carrying `marker` already exists on the target (after a write whose answer was lost). */
  findNote(target: ApplicationRef, marker: string, signal?: AbortSignal): Promise<{ noteId: string } | undefined>;
  /** Moves the application; already being in the target stage counts as done. */
  moveToStage(
    target: ApplicationRef,
    stage: StageMatcher,
    signal?: AbortSignal,
  ): Promise<{ moved: boolean; stageId: string }>;
  /**
   * Where the deletion webhook is not signed over its body (Lever), checks with the ATS's API that the candidate
   * is really gone before anything is purged. Others sign what they send and need no check.
   */
  confirmCandidateDeleted?(event: CandidateDeletedEvent, signal?: AbortSignal): Promise<DeletionConfirmation>;
  /**
   * How long until the ATS takes calls again, by the rate-limit window it last announced (0: now). A worker asks
   * before it claims anything, and puts the message back for that long instead of spending a shared slot.
   */
  pacingWaitMs?(): number;
  /** Where the ATS has a link field for the application (Lever's links), the report link goes there too. */
  attachReportLink?(target: ApplicationRef, url: string, signal?: AbortSignal): Promise<void>;
}

/** Confirms a parsed event as it is, for ATSs whose webhook is signed over the whole body. */
export function confirmAsParsed(event: StageEnteredEvent): Promise<StageConfirmation> {
  if (!event.atsJobId) return Promise.resolve({ confirmed: false, reason: 'the webhook names no job' });
  return Promise.resolve({ confirmed: true, event: { ...event, atsJobId: event.atsJobId } });
}
