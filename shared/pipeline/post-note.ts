import { AtsError, answeredByAts } from '../ats/errors';
import type { ApplicationRef, AtsAdapter, AtsNote } from '../ats/port';
import { errorCode, isPermanent, mayHaveSucceeded } from '../errors';
import { refusesKey } from './errors';
import type { NoteStart } from './note-start';
import type { StepOutcome } from './steps';

/**
 * Posts a note at most once. When the ATS answered a 5xx (it may have written the note), the note is looked up by its
 * marker at once, and posted again only when it is not there. When no answer came from it (a timeout, a connection
 * lost, a gateway's 502 or 504), the ATS may still be writing it: a look now could miss it, so the error goes up to
 * SQS, and the retry, later, looks before posting. So does a second lost answer.
 */
export async function postNoteOnce(
  ats: AtsAdapter,
  target: ApplicationRef,
  note: AtsNote,
  signal?: AbortSignal,
): Promise<{ noteId?: string | undefined; skipped?: string | undefined }> {
  try {
    return await ats.postNote(target, note, signal);
  } catch (error) {
    // Where notes are not read back (Kombo), a lost answer is not looked into: the step records it uncertain.
    if (!mayHaveSucceeded(error) || ats.findsNotes === false || !answeredByAts(error)) throw error;
    const found = await ats.findNote(target, note.marker, signal).catch(() => {
      throw error;
    });
    if (found) return found;
    return ats.postNote(target, note, signal).catch((again: unknown) => {
      // The first post may still land (an answer that came too late): a refusal of the second is no clean stop,
      // and the next try looks for the note again before posting.
      throw again instanceof AtsError && !again.mayHaveSucceeded
        ? new AtsError(again.code, again.message, {
            ...(again.status === undefined ? {} : { status: again.status }),
            ...(again.retryAfterMs === undefined ? {} : { retryAfterMs: again.retryAfterMs }),
            mayHaveSucceeded: true,
            cause: again,
          })
        : again;
    });
  }
}

/**
 * A note's look-up or post the ATS refused for good, as its step's result: the note ends refused, and what follows it
 * (the status, the next step) goes on. A note that cannot be looked up is not posted: it may be there already.
 * Anything that may pass on a retry goes up, and so does a refusal of the connection's key.
 */
export function refusedForGood(error: unknown): { refused: string } {
  // The connection's key refused is no verdict on this note: the work waits for the key (key-refused.ts).
  if (!isPermanent(error) || refusesKey(error)) throw error;
  return { refused: errorCode(error) };
}

/** refusedForGood for a call whose answer may have been lost: that refusal goes up, as the call may have landed. */
export function refusedUnlanded(error: unknown): { refused: string } {
  if (mayHaveSucceeded(error)) throw error;
  return refusedForGood(error);
}

/**
 * A note's post the ATS refused for good, as its step's result: refused; or, refused after an answer that did not come
 * (postNoteOnce's second post: the first may have landed), uncertain, and not posted again.
 */
export function refusedOrUncertain(error: unknown): { refused: string } | { uncertain: string } {
  const { refused } = refusedForGood(error);
  return mayHaveSucceeded(error) ? { uncertain: refused } : { refused };
}

/** How a note's step ended, for its record: refused or uncertain (with the code the ATS gave, if any), or neither. */
export function noteEnding(
  result: unknown,
  outcome: StepOutcome,
): { outcome?: 'refused' | 'uncertain'; value?: string } {
  const ended = result as { refused?: string; uncertain?: string } | undefined;
  if (ended?.refused) return { outcome: 'refused', value: ended.refused };
  if (ended?.uncertain) return { outcome: 'uncertain', value: ended.uncertain };
  return outcome === 'uncertain' ? { outcome: 'uncertain' } : {};
}

/**
 * A note's start (note-start.ts) whose look-up, refused for good, ends the note refused: not posted, as it may be there
 * already.
 */
export function refusableStart<Ended = { refused: string }>(
  start: NoteStart,
  onRefusal: (error: unknown) => Ended = refusedForGood as (error: unknown) => Ended,
): Omit<NoteStart, 'lookup'> & { lookup?: () => Promise<{ noteId: string } | Ended | undefined> } {
  const { lookup } = start;
  return lookup ? { ...start, lookup: () => lookup().catch(onRefusal) } : start;
}
