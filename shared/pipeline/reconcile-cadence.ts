import { DAY_MS, HOUR_MS } from './constants';
import { pagedSubject, type QueueLedger } from './ports';

/**
 * How often the reconciler pages an interview's reports, by how long the interview has been quiet (its job and its
 * open invitations unchanged): a report comes minutes after its interview is taken, and an invitation left untaken
 * for days stays open until the applications' retention ends. Quiet for under a day, every run; for a day, once an
 * hour; for a week, once a day. A lost webhook of a candidate who takes the interview late is found within that, and
 * the interview service is not asked every few minutes, for months, about every invitation nobody took.
 */
export const PAGING_CADENCE = [
  { quietForMs: 7 * DAY_MS, everyMs: DAY_MS },
  { quietForMs: DAY_MS, everyMs: HOUR_MS },
] as const;

/**
 * Of the interviews (each with when it last changed), those due a look this run, and of them the quiet ones, whose
 * look the caller records in the queue ledger once it is made (`pagedSubject`): its next comes a cadence later.
 */
export async function interviewsDue(
  connectionId: string,
  lastChanged: ReadonlyMap<string, number>,
  now: number,
  ledger: Pick<QueueLedger, 'enqueuedSince'>,
): Promise<{ due: Set<string>; quiet: Set<string> }> {
  const due = new Set<string>();
  const quiet = new Set<string>();
  const tiers = PAGING_CADENCE.map(() => [] as string[]);
  for (const [interviewId, changedAt] of lastChanged) {
    const tier = PAGING_CADENCE.findIndex((t) => now - changedAt >= t.quietForMs);
    if (tier < 0) due.add(interviewId);
    else tiers[tier]?.push(interviewId);
  }
  for (const [i, ids] of tiers.entries()) {
    if (!ids.length) continue;
    const everyMs = PAGING_CADENCE[i]?.everyMs ?? 0;
    const looked = await ledger.enqueuedSince(connectionId, ids.map(pagedSubject), now - everyMs);
    for (const id of ids)
      if (!looked.has(pagedSubject(id))) {
        due.add(id);
        quiet.add(id);
      }
  }
  return { due, quiet };
}
