import type { ApplicationState } from './records';

/**
 * The application × trigger's states and the moves between them, stated once: the DynamoDB repositories build their
 * conditions from `MOVES` (`stateCondition`) and the in-memory store checks `mayMove`, so both hold the same rules.
 *
 *        ┌──────────── reclaimInvite: the candidate enters the stage again (no report yet) ───────────┐
 *        ▼                                                                                             │
 *    claimed ──invite: its last step──▶ invited ──expire: no report in time──▶ expired                 │
 *     │   │                               │                                      │                     │
 *     │   └──────── claimReport ──────────┼──────────── claimReport (late) ──────┘                     │
 *     │                                   ▼                                                            │
 *     │                               completed ──writeBack: its last step──▶ written_back             │
 *     │                                 │   ▲                                                          │
 *     │ fail                       fail │   │ reopenWriteBack (an operator's retry)                    │
 *     ▼                                 ▼   │                                                          │
 *   failed ◀────────────────────────────────┴──────────────────────────────────────────────────────────┘
 *
 * An operator's retry also reopens a `written_back` application whose note or move the ATS refused
 * (`refusedWriteBackSteps`): those steps and the status are done again.
 *
 * A report claims an application still `claimed` too: the candidate used the link before the invitation's last
 * step was recorded. `failed` is re-claimed by a new stage entry only without a report, and reopened by an operator
 * only with one; a report that comes for a failed invitation (none yet) is written back all the same: the service had
 * e-mailed the candidate before refusing the link the connector asked for again (stage-entered.use-case.ts).
 *
 * The candidate's place in the hiring process, as the ATS says it (application-changed.use-case.ts):
 *
 *    invited ──leave: rejected, withdrawn, hired──▶ left ──rejoin: the exit undone──▶ invited or expired (as before)
 *    expired ──leave──▶ left                        left ──claimReport (a late report: a note, never a stage move)
 *    expired ──reinvite: the candidate enters the stage anew, a delivery other than the first──▶ claimed
 *    (a stage entry of a candidate who `left` reads the ATS first: back in the process, the exit is undone, and an
 *    invitation that had expired is then invited again)
 */
export const MOVES = {
  invite: { from: ['claimed'], to: 'invited' },
  reclaimInvite: { from: ['failed'], to: 'claimed' },
  reinvite: { from: ['expired'], to: 'claimed' },
  claimReport: { from: ['claimed', 'invited', 'expired', 'left', 'failed'], to: 'completed' },
  writeBack: { from: ['completed'], to: 'written_back' },
  expire: { from: ['invited'], to: 'expired' },
  fail: { from: ['claimed', 'completed'], to: 'failed' },
  /** Also a write-back the ATS refused a step of: its refused steps done again (`refusedWriteBackSteps`). */
  reopenWriteBack: { from: ['failed', 'written_back'], to: 'completed' },
  leave: { from: ['invited', 'expired'], to: 'left' },
  /** Back to where it was (`leftFrom`): `invited`, or `expired` for an invitation that had expired. */
  rejoin: { from: ['left'], to: 'invited' },
  /** An operator's extension (`npm run ops -- extend`): an expired invitation opens again. */
  extend: { from: ['invited', 'expired'], to: 'invited' },
} as const satisfies Record<string, { from: readonly ApplicationState[]; to: ApplicationState }>;

export type Move = keyof typeof MOVES;

/** Whether an application in `state` may make `move`. */
export const mayMove = (state: ApplicationState, move: Move): boolean =>
  (MOVES[move].from as readonly ApplicationState[]).includes(state);

/** `move`'s starting states as a condition on `#state`, with its values (`:from0`, `:from1`...). */
export function stateCondition(move: Move): { condition: string; values: Record<string, ApplicationState> } {
  const from = MOVES[move].from as readonly ApplicationState[];
  const values = Object.fromEntries(from.map((state, i) => [`:from${i}`, state]));
  return { condition: `#state IN (${Object.keys(values).join(', ')})`, values };
}
