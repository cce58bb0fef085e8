import type { ApplicationRef, AtsAdapter } from '../ats/port';
import type { Step } from './steps';

/** The part of a note's step that says whether an earlier worker posted it. */
export type NoteStart = Pick<Step<{ noteId: string }>, 'started' | 'lookup' | 'recordStart' | 'clearStart' | 'signal'>;

/**
 * How a note's step finds out whether an earlier worker posted it. Where the ATS reads notes back, by the note's
 * marker, once `resumed` says an earlier worker may have posted it. Where it reads none back (Kombo), by the step's
 * recorded start: a note found started is recorded uncertain, never posted again, and a start the ATS refused outright
 * (a 429, any 4xx: nothing written) is cleared, so a later try posts it. `mark.everywhere`: the start is recorded where
 * notes are read back too (then `resumed` is that start).
 */
export function noteStart(
  ats: AtsAdapter,
  note: { target: ApplicationRef; marker: string; signal?: AbortSignal | undefined },
  earlier: { resumed: boolean; startedAt: number | undefined },
  mark: { start: () => Promise<void>; clear: () => Promise<void>; everywhere?: boolean },
): NoteStart {
  if (ats.findsNotes !== false)
    return {
      started: earlier.resumed,
      lookup: () => ats.findNote(note.target, note.marker, note.signal),
      // A note whose resumption is known by its start alone (the failure note) records it here too.
      ...(mark.everywhere ? { recordStart: mark.start } : {}),
    };
  return {
    started: earlier.startedAt !== undefined,
    signal: note.signal,
    recordStart: mark.start,
    clearStart: mark.clear,
  };
}
