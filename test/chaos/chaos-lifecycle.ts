import type { LocalStack } from '../../infra/local/local-stack';
import type { DirectAtsKind } from '../../shared/config';

/** One candidate of the run, as the lifecycle part needs them. */
interface LifecycleCandidate {
  kind: DirectAtsKind;
  applicationId: string;
  email: string;
}

/** Who leaves the process after their invitation, who comes back, and who enters the stage again after expiring. */
export interface LifecycleRoles {
  /** Rejected or withdrawn after the invitation (their webhook delivered, or lost: the look before contact). */
  leavers: Set<string>;
  /** Of the leavers, those a recruiter unrejected a few seconds later: they carry on as non-completers. */
  undone: Set<string>;
  /** Non-completers moved out of the stage and back in once their invitation expired: invited once more. */
  reentrants: Set<string>;
}

/**
 * Picks the roles among the invited candidates: of those who would take the interview, `leaveRate` leave instead,
 * four in ten of them unrejected later; of the non-completers, half enter the stage again after they expire. A small
 * run still has at least two leavers (one undone) and one re-entrant.
 */
export function pickLifecycleRoles(
  completers: string[],
  noShows: string[],
  leaveRate: number,
  random: () => number,
): LifecycleRoles {
  const leavers = completers.filter(() => random() < leaveRate);
  for (const id of completers)
    if (leavers.length < 2 && completers.length >= 8 && !leavers.includes(id)) leavers.push(id);
  // The first comes back and the last stays out, whatever the draw, so even a small run has both.
  const undone = leavers.filter((_, i) => i === 0 || (i < leavers.length - 1 && random() < 0.4));
  const reentrants = noShows.filter((_, i) => i === 0 || random() < 0.5);
  return { leavers: new Set(leavers), undone: new Set(undone), reentrants: new Set(reentrants) };
}

/**
 * The leavers leave (a third of their webhooks lost), then the undone ones are unrejected, after `undoAfterMs`.
 * Answers whose exit webhook was lost, and when each left.
 */
export async function leaveAndUndo(
  stack: LocalStack,
  candidates: LifecycleCandidate[],
  roles: LifecycleRoles,
  random: () => number,
  undoAfterMs = 3000,
): Promise<{ lost: Set<string>; leftAt: Map<string, number> }> {
  const lost = new Set<string>();
  const leftAt = new Map<string, number>();
  const leaving = candidates.filter((c) => roles.leavers.has(c.applicationId));
  // The last who stays out always tells the connector: a run whose every exit was lost or undone checks no mail after.
  const told = leaving.findLast((c) => !roles.undone.has(c.applicationId));
  for (const c of leaving) {
    const deliver = random() >= 1 / 3 || c === told;
    if (!deliver) lost.add(c.applicationId);
    leftAt.set(c.applicationId, Date.now());
    await stack.ats[c.kind].changeLifecycle({
      applicationId: c.applicationId,
      action: random() < 0.5 ? 'reject' : 'withdraw',
      deliver,
    });
  }
  await new Promise((resolve) => setTimeout(resolve, undoAfterMs));
  for (const c of candidates.filter((c) => roles.undone.has(c.applicationId)))
    await stack.ats[c.kind].changeLifecycle({ applicationId: c.applicationId, action: 'unreject' });
  return { lost, leftAt };
}

/** The re-entrants move on, then back into the stage, their stage change delivered two or three times. */
export async function reenter(
  stack: LocalStack,
  candidates: LifecycleCandidate[],
  roles: LifecycleRoles,
  random: () => number,
): Promise<void> {
  for (const c of candidates.filter((c) => roles.reentrants.has(c.applicationId))) {
    await stack.ats[c.kind].moveCandidate({ applicationId: c.applicationId, stageName: 'Hiring Manager Review' });
    await stack.ats[c.kind].moveCandidate({
      applicationId: c.applicationId,
      stageName: 'AI Interview',
      repeat: 2 + Math.floor(random() * 2),
    });
  }
}

/** Who left, and how the run told the connector: whose exit webhook was lost, when each left. */
export interface Exits {
  lost: Set<string>;
  leftAt: Map<string, number>;
}

/**
 * A leaver the connector cannot know left: their exit webhook was lost and their invitation had expired by then (its
 * read of the application, a moment before it wrote the expiry, found them in the process), so nothing more contacts
 * them and nothing looks again. Their invitation stays expired, which is what it is.
 */
export const unseenExit = (exits: Exits, record: Record<string, any> | undefined): boolean =>
  record !== undefined &&
  exits.lost.has(record.atsApplicationId) &&
  record.expiredAt !== undefined &&
  record.expiredAt < (exits.leftAt.get(record.atsApplicationId) ?? 0) + READ_TO_EXPIRY_MS;

/** The most an expiry's write may follow its read of the application, under the run's faults (timeouts, 429s). */
const READ_TO_EXPIRY_MS = 10_000;

type Check = (name: string, items: unknown[], bad: (item: any) => string | undefined) => void;
type Email = { destination: { to: string[] }; subject?: string; at?: number };

/**
 * The lifecycle's invariants: no e-mail to a candidate after their exit reached the connector; a candidate who left
 * and stayed out ends cancelled, never expired (unless the connector could not know: `unseenExit`); a re-entrant is
 * invited once more and written back. (One invitation per stage entry is checked with the invitations, in chaos.ts.)
 */
export function checkLifecycle(
  check: Check,
  stack: LocalStack,
  input: {
    candidates: LifecycleCandidate[];
    roles: LifecycleRoles;
    exits: Exits;
    records: Record<string, any>[];
    emails: Email[];
  },
): void {
  const { candidates, roles, exits, records, emails } = input;
  const recordOf = (c: LifecycleCandidate) => records.find((r) => r.atsApplicationId === c.applicationId);
  const to = (c: LifecycleCandidate) => emails.filter((m) => m.destination.to.includes(c.email));
  check(
    'no e-mail to a candidate after their exit reached the connector',
    candidates.filter((c) => recordOf(c)?.exit),
    (c: LifecycleCandidate) => {
      const exitAt = recordOf(c)?.exit?.at as number;
      // SES keeps whole seconds: a mail in the second the exit was recorded may have been begun before it.
      const after = to(c).filter((m) => (m.at ?? 0) * 1000 >= exitAt + 1000).length;
      return after ? `${c.kind} ${c.applicationId}: ${after} e-mails after the exit` : undefined;
    },
  );
  const expiredAfter = (record: Record<string, any> | undefined) =>
    (record?.expiredAt ?? 0) - (exits.leftAt.get(record?.atsApplicationId) ?? 0);
  const stayedOut = candidates.filter((c) => roles.leavers.has(c.applicationId) && !roles.undone.has(c.applicationId));
  check('every leaver who stayed out ends cancelled, not expired after', stayedOut, (c: LifecycleCandidate) => {
    const record = recordOf(c);
    // An invitation may have expired before the candidate left (the run's leavers leave once everyone is invited).
    const expiredBefore = record?.expiredAt !== undefined && record.expiredAt < (record.exit?.at ?? 0);
    const expiries = stack.ats[c.kind]
      .notesOf(c.applicationId)
      .filter((n) => n.includes('AI interview not completed by')).length;
    // An exit the connector could not know leaves the invitation expired (a later stage delivery may still tell it).
    if (unseenExit(exits, record) && record?.state === 'expired')
      return expiries === 1
        ? undefined
        : `${c.kind} ${c.applicationId}: exit unseen, expired, ${expiries} expiry notes`;
    return record?.state === 'left' && (expiries === 0 || (expiries === 1 && expiredBefore))
      ? undefined
      : `${c.kind} ${c.applicationId}: ${record?.state}, ${expiries} expiry notes, webhook ` +
          `${exits.lost.has(c.applicationId) ? 'lost' : 'sent'}, expired ${expiredAfter(record)} ms after leaving`;
  });
  check(
    'every re-entrant invited once more and written back',
    candidates.filter((c) => roles.reentrants.has(c.applicationId)),
    (c: LifecycleCandidate) => {
      const record = recordOf(c);
      const reports = stack.ats[c.kind]
        .notesOf(c.applicationId)
        .filter((n) => n.includes('ai-interview-report:')).length;
      return record?.reinvitations === 1 && record.state === 'written_back' && reports === 1
        ? undefined
        : `${c.kind} ${c.applicationId}: ${record?.state}, ${record?.reinvitations ?? 0} re-invitations, ` +
            `${reports} report notes`;
    },
  );
}

/**
 * The stage entries a candidate made: one, one more for a re-entrant, and one more for an unrejected leaver on an ATS
 * whose undo moves the application back into its stage (Ashby's unarchive; Workable's requalify, a `candidate_moved`):
 * arriving after the invitation expired, that entry invites them anew.
 */
export const entriesOf = (roles: LifecycleRoles, c: LifecycleCandidate): number =>
  1 +
  (roles.reentrants.has(c.applicationId) ? 1 : 0) +
  (roles.undone.has(c.applicationId) && (c.kind === 'ashby' || c.kind === 'workable') ? 1 : 0);

/**
 * The statuses a written-back application may show: `advanced` where the connector moved the candidate (whatever came
 * after); `completed` where it did not because they had left or been moved out of the stage (the move's own read found
 * them gone or moved on: `not-moved:…`); `flagged for review` for a move refused or a result that moves no one. Where
 * an exit was recorded and no move made, `completed` or `flagged for review`: which, the exit's time against the
 * write-back's try decides, and neither record keeps that try's time.
 */
export function writtenBackStatuses(record: Record<string, any>): string[] {
  const move = record.steps?.stageMove;
  const notMoved = String(move?.value ?? '').startsWith('not-moved:');
  if (move && !notMoved && move.outcome !== 'refused') return ['advanced'];
  if (notMoved) return ['completed'];
  return record.exit ? ['flagged for review', 'completed'] : ['flagged for review'];
}
