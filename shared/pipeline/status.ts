import type { ApplicationRef } from '../ats/port';
import { refusesKey, warnRefusedForGood } from './errors';
import { sayKeyRefused } from './key-refused';
import { afterSideEffect } from './fault-injection';
import type { ConnectionContext, PipelineDependencies } from './ports';
import type { ApplicationKey, ApplicationRecord } from './records';
import type { Step } from './steps';

/** The statuses recruiters filter on, in the order an application passes them; a status never moves back. */
export const AI_INTERVIEW_STATUSES = [
  'failed',
  'invited',
  'expired',
  'cancelled',
  'completed',
  'flagged for review',
  'advanced',
] as const;
export type AiInterviewStatus = (typeof AI_INTERVIEW_STATUSES)[number];

/**
 * A status's rank: a status is never shown over one ranked higher. `cancelled` (the candidate left the process) ranks
 * between `expired` and `completed`; an undo of the exit or a new invitation starts the ranks again (the status claim
 * is taken off).
 */
const RANK: Record<AiInterviewStatus, number> = {
  // The invitation could not go out; a later invitation (a new stage entry once the cause is fixed) shows over it.
  failed: 1,
  invited: 1,
  expired: 2,
  // Above `expired`: an expiry racing the exit never shows over it; a late report still does.
  cancelled: 2.5,
  completed: 3,
  'flagged for review': 4,
  advanced: 4,
};

export type StatusTagFormat = 'label' | 'token';

/**
 * The tag a status shows as: one per status, so a filter on it finds exactly those applications. `token` is one
 * lower-case word (`ai-interview-flagged`, at most 22 characters) for an ATS that keeps only a tag's first word.
 */
export const statusTag = (status: AiInterviewStatus, format: StatusTagFormat = 'label'): string =>
  format === 'token' ? `ai-interview-${status.split(' ')[0]}` : `AI interview: ${status}`;

/** The status a tag shows, whichever its format; undefined for any other tag. */
export const statusOfTag = (tag: string): AiInterviewStatus | undefined =>
  AI_INTERVIEW_STATUSES.find((s) => tag === statusTag(s, 'label') || tag === statusTag(s, 'token'));

/** The connection's tag format: as configured, else `token` on Workable (which keeps a tag's first word only). */
export const statusTagFormatOf = (connection: ConnectionContext['connection']): StatusTagFormat =>
  connection.writeBack.statusTagFormat ?? (connection.ats === 'workable' ? 'token' : 'label');

/** Where a status is shown: the connection, the application (its key and its ATS reference), what it runs with. */
export interface StatusPlace {
  context: ConnectionContext;
  key: ApplicationKey;
  target: ApplicationRef;
  deps: Pick<PipelineDependencies, 'store' | 'logger' | 'now' | 'ledger'>;
  signal?: AbortSignal | undefined;
  /**
   * The invitation the status belongs to (its record's `reinvitations`, 0 for the first): claimed only while it is the
   * current one. Required, so no caller can leave a late status free to land on a later invitation.
   */
  round: number;
}

/** Across applications, "cancelled" (one application left) never hides another one's status. */
const acrossRank = (s: AiInterviewStatus) => (s === 'cancelled' ? 0 : RANK[s]);

/**
 * Where tags belong to the candidate, the tag shows the status of their application furthest along: one
 * application's status never takes another's off (ats-facts, Corrections 2026-11b).
 */
async function furthestOfCandidate(place: StatusPlace, status: AiInterviewStatus): Promise<AiInterviewStatus> {
  const { context, deps, key, target } = place;
  if (!context.ats.tagsCandidates) return status;
  const claimed = await deps.store.candidateStatuses(key.connectionId, target.atsCandidateId);
  return [status, ...AI_INTERVIEW_STATUSES.filter((s) => claimed.includes(s))].reduce((a, b) =>
    acrossRank(b) > acrossRank(a) ? b : a,
  );
}

/**
 * Shows `status` in the ATS (`writeBack.status: tags`) with the ATS's own tags, every other status tag taken off.
 * The status is claimed in the applications table first (a conditional write on its rank): a status ranked below
 * the one claimed is never shown, so a retry or a slower worker cannot move it back. The same status may be
 * claimed again, to finish what a stopped worker began. Two workers that claim one after the other (an expiry and a
 * late report) may tag at once: each reads the claimed status after tagging and, when a later one was claimed
 * meanwhile, shows that one, so the tags end as the highest claim says.
 */
async function applyStatus(place: StatusPlace, status: AiInterviewStatus): Promise<void> {
  const { context, key, target, deps, signal } = place;
  const setStatusTag = context.ats.setStatusTag?.bind(context.ats);
  if (!setStatusTag) return;
  const format = statusTagFormatOf(context.connection);
  const removedOnExit = context.connection.writeBack.statusOnExit === 'removed';
  const show = async (shown: AiInterviewStatus) => {
    // A candidate who left shows no status at all where the connection says so: every status tag is taken off.
    const tag = shown === 'cancelled' && removedOnExit ? undefined : statusTag(shown, format);
    const others = AI_INTERVIEW_STATUSES.map((s) => statusTag(s, format)).filter((t) => t !== tag);
    try {
      await setStatusTag(target, tag, others, signal);
    } catch (error) {
      // A refusal of the tag (a key without the permission, or the connection's key refused) never undoes the
      // invitation, the expiry or the write-back it follows: said, and left. Anything that may pass on a retry goes up.
      if (!refusesKey(error))
        return void warnRefusedForGood(error, deps.logger, 'the status could not be shown in the ATS', key);
      const line = "the status could not be shown in the ATS: it refuses the connection's key";
      await sayKeyRefused(deps, key.connectionId, { message: line, error, attributes: { ...key } });
    }
  };
  // The claim read after a show, shown (as the candidate's furthest, where tags are theirs) when that is not what was
  // shown and the claim ranks `floor` or above; read again after each such show, as another claim may have come
  // meanwhile, on this application or another of the candidate's (bounded: each pass follows a newer claim).
  const showClaimed = async (shown: AiInterviewStatus | undefined, floor = 0) => {
    for (let pass = 0; pass < 3; pass++) {
      const latest = (await deps.store.getApplication(key))?.steps.status?.value;
      const claimed = AI_INTERVIEW_STATUSES.find((s) => s === latest);
      if (!claimed || RANK[claimed] < floor) return;
      const furthest = await furthestOfCandidate(place, claimed);
      if (furthest === shown) return;
      await show(furthest);
      shown = furthest;
    }
  };
  // "cancelled" and "expired" hold only while the application is so: a late one never lands after a return or an
  // extension.
  const whileState = ({ cancelled: 'left', expired: 'expired' } as const)[status as 'cancelled' | 'expired'];
  const begin = {
    kind: 'rank',
    value: status,
    rank: RANK[status],
    now: (deps.now ?? Date.now)(),
    round: place.round,
    whileState,
  } as const;
  if (!(await deps.store.beginStep(key, 'status', begin))) {
    // A later status was claimed first. This claim may be a retry of a worker that showed its own status over the
    // later one and stopped before it could read the claim again: the claimed status is shown once more (showing
    // a tag that is there changes nothing). A claim refused for its state or its round, under a lower one still
    // standing (a late expiry after a report's write-back took the application), shows nothing: the worker that
    // moved the application on shows its own, and the lower claim read here would land over it.
    await showClaimed(undefined, RANK[status]);
    return;
  }
  const shown = await furthestOfCandidate(place, status);
  await show(shown);
  afterSideEffect('status-shown', `${key.connectionId}#${key.atsApplicationId}`);
  await showClaimed(shown);
}

const enabled = (context: ConnectionContext) =>
  context.connection.writeBack.status === 'tags' && context.ats.setStatusTag !== undefined;

/** The status after an expiry, an exit or its undo (not a step of a sequence: its state change is recorded before). */
export async function showStatus(place: StatusPlace, status: AiInterviewStatus): Promise<void> {
  if (!enabled(place.context)) return;
  await applyStatus(place, status);
}

/**
 * The status as the last step of an invitation or a write-back (./steps.ts): `recordDone` closes the sequence
 * (the claim of the status is its own record). Without tags configured (or an ATS without them) it is no step.
 */
export function statusStep(
  place: StatusPlace,
  status: AiInterviewStatus | (() => AiInterviewStatus),
  record: Pick<ApplicationRecord, 'steps'>,
  recordDone: (last: boolean) => Promise<void>,
): Step<unknown>[] {
  if (!enabled(place.context)) return [];
  const shown = AI_INTERVIEW_STATUSES.find((s) => s === record.steps.status?.value);
  // A status the steps before it decide (a write-back's move refused shows "flagged for review"), read when shown.
  const now = () => (typeof status === 'function' ? status() : status);
  return [
    {
      name: 'status-shown',
      done: shown !== undefined && RANK[shown] > RANK[now()],
      // Showing a status again changes nothing: a started one is simply shown again.
      started: false,
      perform: () => applyStatus(place, now()),
      recordDone: (_result, _outcome, last) => recordDone(last),
    },
  ];
}
