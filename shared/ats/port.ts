import { type AtsKind, type StageMatcher, outOfStage } from '../config';

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

/** Why a candidate's application left the hiring process, as the ATS says it. */
/** `deleted`: the ATS no longer has the application (a read finds none): deleted, or merged into another. */
export const EXIT_KINDS = ['rejected', 'withdrawn', 'hired', 'archived', 'deleted'] as const;
export type ExitKind = (typeof EXIT_KINDS)[number];

/**
 * Where an application stands in the ATS now, by one documented read: still in the process (and in which stage,
 * where the read says it), or out of it and why (`reason`: the ATS's own reason text, never candidate data).
 */
export type ApplicationStanding =
  | { active: true; stageId?: string | undefined; stageName?: string | undefined }
  | { active: false; exit: ExitKind; reason?: string | undefined };

/**
 * The ATS says an application left the process (rejected, archived, disqualified, withdrawn, hired) or came back (an
 * unreject, an unarchive, an unhire). A hint only: the worker reads the application's standing before it acts, so an
 * unsigned body (Lever), a late or reordered delivery never decides anything by itself.
 */
export interface ApplicationChangedEvent {
  deliveryId: string;
  atsApplicationId: string;
  change: 'left' | 'returned';
}

/**
 * An application as a read of a synced copy gives it (Kombo's unified API): where it stands now. `changedAt` is when
 * the copy last changed it, in the copy's time.
 */
export interface ChangedApplication {
  atsApplicationId: string;
  atsCandidateId: string;
  atsJobId: string;
  jobName?: string | undefined;
  stage: { id?: string | undefined; name?: string | undefined };
  /** Out of the process (declined, hired, deleted), or undefined while in it. */
  exit?: ExitKind | undefined;
  changedAt: number;
}

export type WebhookParseResult =
  | { kind: 'ping' }
  /** Something changed, not said what (Kombo's `data-changed`): what changed since the last read is read. */
  | { kind: 'changes-hinted'; event: { deliveryId: string } }
  | { kind: 'candidate-deleted'; event: CandidateDeletedEvent }
  | { kind: 'application-changed'; event: ApplicationChangedEvent }
  | { kind: 'ignored'; reason: string }
  /**
   * The connection's link to its ATS changed state (Kombo's `integration-state-changed`; `integration-deleted` as the
   * state `DELETED`): said for the operator, nothing enqueued.
   */
  | { kind: 'integration-changed'; event: { deliveryId: string; state: string } }
  | { kind: 'stage-entered'; event: StageEnteredEvent }
  | { kind: 'invalid'; message: string };

/** Where a write-back lands. */
export interface ApplicationRef {
  atsApplicationId: string;
  atsCandidateId: string;
  atsJobId: string;
  /** The stage the application was in when the connector acted, for ATSs that move "from" a stage. */
  fromStageId?: string | undefined;
  /** That stage as the trigger names it (by id or name): where a move tells whether the application moved on. */
  fromStage?: StageMatcher | undefined;
}

export interface AtsNote {
  /** Plain text; adapters convert to the ATS's format. */
  body: string;
  /** A unique, invisible-enough token in the note, so a lost answer can be checked before re-posting. */
  marker: string;
  /**
   * The report file, where it rides on the note (`filesOnNotes`): one call, and the note names the file, so `findFile`
   * finds it as it finds a file attached alone.
   */
  file?: AtsFile | undefined;
}

/**
 * The calls every adapter's `moveToStage` makes when it moves (where the application stands, then the move), once the
 * stage lists it caches are read.
 */
export const MOVE_CALLS = 2;

/** A move's `skipped` where the application was moved on since the connector acted: its step's record says so. */
export const MOVED_ON = 'not-moved:moved-on';

/**
 * A move left undone because the application stands in a stage that is neither the target nor the one it was in when
 * the connector acted (`fromStageId`, or any the trigger's `fromStage` matches, as the lifecycle tells moving on):
 * someone moved it on since (a recruiter, after the invitation, or after a move whose answer was lost). A move, or its
 * retry, never takes a candidate back. Undefined where the stage or the trigger is unknown: the move goes ahead.
 */
export function movedOnSince(
  target: ApplicationRef,
  current: { id?: string | undefined; name?: string | undefined },
  wanted: string,
): { moved: false; stageId: string; skipped: string } | undefined {
  const id = current.id || undefined;
  if (!target.fromStage || (id === undefined && !current.name) || (id !== undefined && id === wanted)) return undefined;
  // A stage the read names but no id is known for (Workable's, outside the job's stage list) is judged by its name.
  return outOfStage(target.fromStage, target.fromStageId, { id, name: current.name }, target.atsJobId)
    ? { moved: false, stageId: id ?? '', skipped: MOVED_ON }
    : undefined;
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
  /**
   * Where the ATS's webhooks name a stage by id only (Lever), the names of the stages this adapter has already read,
   * by id, with no call (empty until it has read them).
   */
  knownStageNames?(): ReadonlyMap<string, string>;
  /**
   * A 2xx from the ATS is a note written; `noteId` is there when the answer carried one. `skipped`: the ATS takes no
   * notes here (Kombo's capability table): nothing was sent, and this says why.
   */
  postNote(
    target: ApplicationRef,
    note: AtsNote,
    signal?: AbortSignal,
  ): Promise<{ noteId?: string | undefined; skipped?: string | undefined }>;
  /** Whether a note carrying `marker` already exists on the target (after a write whose answer was lost). */
  findNote(target: ApplicationRef, marker: string, signal?: AbortSignal): Promise<{ noteId: string } | undefined>;
  /**
   * False where the ATS reads no note back (Kombo): `findNote` finds nothing, so a note's step records its start and,
   * found started after a crash, is recorded uncertain instead of posted again.
   */
  readonly findsNotes?: boolean;
  /**
   * Moves the application; already being in the target stage counts as done. A move reads where the application
   * stands, then moves it: `MOVE_CALLS` calls besides the stage lists the adapter caches. An application that read
   * shows out of the process (rejected, archived, hired) is never moved: answered unmoved, with its `exit`; one
   * moved on since the connector acted is left where it is (`movedOnSince`).
   */
  moveToStage(
    target: ApplicationRef,
    stage: StageMatcher,
    signal?: AbortSignal,
  ): Promise<{ moved: boolean; stageId: string; exit?: ExitKind | undefined; skipped?: string | undefined }>;
  /**
   * Where the application stands now (still in the process, or out of it and why), by one documented read: looked at
   * before the connector contacts a candidate again (a reminder, the expiry, a re-invitation), since the webhook that
   * said they left may never have come.
   */
  readStanding(target: ApplicationRef, signal?: AbortSignal): Promise<ApplicationStanding>;
  /**
   * Where the deletion webhook is not signed over its body (Lever), checks with the ATS's API that the candidate
   * is really gone before anything is purged. Others sign what they send and need no check.
   */
  confirmCandidateDeleted?(event: CandidateDeletedEvent, signal?: AbortSignal): Promise<DeletionConfirmation>;
  /**
   * One page of the applications now in `query.stage` (the sweep, for stage changes whose webhook never came).
   * `cursor` is this method's own (undefined: the first page); `next` is undefined after the last page. The events
   * are what a webhook would have said; `confirmStageEntered` completes them as it does a webhook's.
   */
  listApplicationsInStage?(
    query: StageQuery,
    cursor: string | undefined,
    signal?: AbortSignal,
  ): Promise<{ events: StageEnteredEvent[]; next: string | undefined }>;
  /**
   * Where the ATS is read through a synced copy that pushes no stage change (Kombo): one page of the applications
   * changed after `since` (epoch ms), for the stage-entry reader (shared/pipeline/changes-hinted.use-case.ts), which
   * takes the place of the sweep for it.
   */
  listChangedApplications?(
    since: number,
    cursor: string | undefined,
    signal?: AbortSignal,
  ): Promise<{ applications: ChangedApplication[]; next: string | undefined }>;
  /**
   * Shows the AI interview's status where recruiters filter (`writeBack.status: tags`): adds `tag` and removes
   * `others` (the other statuses' tags). Idempotent: a tag already there is not added twice. `tag` undefined: only
   * removes (a candidate who left, where the connection shows no status for them).
   */
  setStatusTag?(
    target: ApplicationRef,
    tag: string | undefined,
    others: readonly string[],
    signal?: AbortSignal,
  ): Promise<void>;
  /**
   * True where a tag belongs to the candidate, not to one application (Greenhouse, Ashby): the status shown is then
   * that of the candidate's application furthest along, so one application's status never erases another's.
   */
  readonly tagsCandidates?: boolean;
  /**
   * The report file on the candidate's record (the application, or the candidate where the ATS keeps files there),
   * under `file.name`, by the ATS's documented upload. Not idempotent: `findFile` first.
   */
  attachFile?(
    target: ApplicationRef,
    file: AtsFile,
    signal?: AbortSignal,
  ): Promise<{ fileId?: string | undefined; skipped?: string | undefined }>;
  /**
   * Where the ATS takes a file on a note (Workable's comment with its one attachment): the report note carries the
   * report file when it is at hand, a call fewer than attaching it alone.
   */
  readonly filesOnNotes?: boolean;
  /** A file attached earlier under `name`, through the ATS's documented list of the record's files. */
  findFile?(target: ApplicationRef, name: string, signal?: AbortSignal): Promise<{ fileId: string } | undefined>;
  /** Where the ATS has a link field for the application (Lever's links), the report link goes there too. */
  attachReportLink?(target: ApplicationRef, url: string, signal?: AbortSignal): Promise<void>;
  /**
   * Where the ATS hosts an assessment framework the connector reports to (Ashby's `assessment.update`): sends one
   * update of an ordered assessment, as built by shared/orders/ (its status, result or cancellation).
   */
  updateAssessment?(update: AssessmentUpdate, signal?: AbortSignal): Promise<void>;
}

/** A file for the candidate's record: the interview report as a PDF. */
export interface AtsFile {
  /** The file's name on the record, with its extension; also what `findFile` matches. */
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

/** One update of an assessment the ATS ordered: its id, when, and the ATS's own fields of the update. */
export interface AssessmentUpdate {
  assessment_id: string;
  timestamp: number;
  [field: string]: unknown;
}

/** What the sweep lists: a trigger's stage, in its jobs. */
export interface StageQuery {
  stage: StageMatcher;
  jobs: 'all' | readonly string[];
}

/** The delivery id of a stage change the sweep found: the same for the same application in the same stage. */
export const sweepDeliveryId = (applicationId: string, stageId: string | undefined): string =>
  `sweep-${applicationId}-${stageId ?? 'stage'}`.slice(0, 200);

/** Confirms a parsed event as it is, for ATSs whose webhook is signed over the whole body. */
export function confirmAsParsed(event: StageEnteredEvent): Promise<StageConfirmation> {
  if (!event.atsJobId) return Promise.resolve({ confirmed: false, reason: 'the webhook names no job' });
  return Promise.resolve({ confirmed: true, event: { ...event, atsJobId: event.atsJobId } });
}

/** A stage as the ATS's UI shows it: the id a configuration may name, and its display name. */
export interface AtsStage {
  id: string;
  name: string;
}

export interface AtsJob {
  id: string;
  name: string;
}

/** A webhook (or Workable subscription) the ATS holds, as its API lists it. */
export interface RegisteredWebhook {
  id: string;
  event: string;
  url: string;
  /** False when the ATS says it is switched off; undefined when its API does not say. */
  enabled: boolean | undefined;
}

/** One application as the connector would read it on a stage change: ids, job and stage, never contact details. */
export interface AtsApplicationView {
  atsApplicationId: string;
  atsCandidateId: string;
  atsJobId: string;
  jobName?: string | undefined;
  stage: { id?: string | undefined; name?: string | undefined };
  /** Whether the candidate has an e-mail address the invite could go to (the address itself is never shown). */
  hasEmail: boolean;
}

/**
 * What an operator's tools (`npm run doctor`) need of an ATS beyond the pipeline: read-only probes of the
 * credentials, the stages a configuration names, one application, and the ATS's webhooks where its API has them.
 */
/** A permission the customer grants the connector's credentials, what needs it, and a harmless read that shows it. */
export interface RequiredPermission {
  /** The ATS's own name for it (a Harvest v3 scope, an Ashby permission, a Workable scope). */
  permission: string;
  /** The feature of the connector that needs it. */
  feature: string;
  /** A read that succeeds only with the permission; absent where the ATS offers none ("not checkable, grant it"). */
  probe?: (signal?: AbortSignal) => Promise<unknown>;
}

export interface AtsSetup {
  /**
   * Each permission the configured features need (`statusTags`: writeBack.status is tags): the doctor runs each
   * probe, names a missing permission, and lists the ones no read can show.
   */
  requiredPermissions(features: { statusTags: boolean; reportFile?: boolean }): RequiredPermission[];
  /** The events the connector needs the ATS to send (the stage change, a candidate leaving or coming back, privacy). */
  readonly webhookEvents: readonly string[];
  /** One read only working credentials allow; resolves with what it read, throws the ATS's refusal. */
  probeAccess(signal?: AbortSignal): Promise<string>;
  /**
   * Whether the configured user (`atsUserId`) is one the ATS writes notes as: `ok`, or why the ATS cannot tell
   * (Ashby writes as the API key's own user).
   */
  probeUser(
    signal?: AbortSignal,
  ): Promise<{ ok: true; what: string } | { ok: false; reason: string; checkable: boolean }>;
  /** Jobs a trigger for "all" jobs covers, at most `limit`; empty where stages are global (Lever). */
  listJobs(limit: number, signal?: AbortSignal): Promise<AtsJob[]>;
  /** The stages of a job (Lever: every job shares them). */
  listStages(jobId: string | undefined, signal?: AbortSignal): Promise<AtsStage[]>;
  readApplication(applicationId: string, signal?: AbortSignal): Promise<AtsApplicationView>;
  /**
   * The connector's webhooks as the ATS holds them. `knownIds` are the ids recorded when they were registered, for
   * an ATS that reads a webhook by id but cannot list them (Ashby). Absent where the ATS has no webhook API
   * (Greenhouse).
   */
  listWebhooks?(knownIds: Readonly<Record<string, string>>, signal?: AbortSignal): Promise<RegisteredWebhook[]>;
  /** Registers a webhook for `event`; answers its id and the secret the ATS issued for it, if it issues one. */
  createWebhook?(
    input: { event: string; url: string; secret: string | undefined },
    signal?: AbortSignal,
  ): Promise<{ id: string; issuedSecret?: string | undefined }>;
}

/** The work the pipeline does as one message, whose calls each vendor's profile declares. */
export type { StepKind } from './profile';

/** A port method's type, for an adapter that types each of its methods by the port it implements. */
export type AtsMethod<K extends keyof AtsAdapter> = NonNullable<AtsAdapter[K]>;
export type SetupMethod<K extends keyof AtsSetup> = NonNullable<AtsSetup[K]>;
