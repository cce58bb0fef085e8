import { describe, expect, it } from 'vitest';
import { AtsError, ATS_ERROR_CODES } from '../../../shared/ats/errors';
import type { AtsAdapter, AtsNote } from '../../../shared/ats/port';
import { HttpTransportError } from '../../../shared/http/errors';
import { mayHaveSucceeded } from '../../../shared/errors';
import { postNoteOnce } from '../../../shared/pipeline/post-note';

const target = { atsApplicationId: 'app-1', atsCandidateId: 'cand-1', atsJobId: 'job-1' };
const note: AtsNote = { body: 'AI interview expired [ref:x]', marker: '[ref:x]' };

/**
 * An ATS whose notes are read back, its first post failing as `first` says. `landsLate`: that first post is still being
 * written when its caller gives up, and lands only once the caller has looked (a server that works on past the client's
 * timeout).
 */
function atsFailingFirstPost(first: AtsError, landsLate: boolean) {
  const notes: string[] = [];
  let posts = 0;
  let pendingLanding: (() => void) | undefined;
  const ats = {
    findsNotes: true,
    async postNote(_target: unknown, posted: AtsNote) {
      posts++;
      if (posts === 1) {
        if (landsLate) pendingLanding = () => notes.push(posted.body);
        throw first;
      }
      notes.push(posted.body);
      return { noteId: `note-${posts}` };
    },
    async findNote(_target: unknown, marker: string) {
      const index = notes.findIndex((body) => body.includes(marker));
      const found = index < 0 ? undefined : { noteId: `note-${index + 1}` };
      // The late write lands right after this look at the notes.
      pendingLanding?.();
      pendingLanding = undefined;
      return found;
    },
  } as unknown as AtsAdapter;
  return { ats, notes, posts: () => posts };
}

describe('Use case: a note posted at most once', () => {
  it('posts again at once after a 5xx (the ATS answered: what it wrote is there to be looked up)', async () => {
    const fault = new AtsError(ATS_ERROR_CODES.unavailable, 'POST /notes: 503', {
      status: 503,
      mayHaveSucceeded: true,
    });
    const { ats, notes } = atsFailingFirstPost(fault, false);

    await expect(postNoteOnce(ats, target, note)).resolves.toEqual({ noteId: 'note-2' });
    expect(notes).toHaveLength(1);
  });

  it.each([502, 504])(
    'sends no second post after a gateway %s: the ATS behind it may still be writing',
    async (status) => {
      const fault = new AtsError(ATS_ERROR_CODES.unavailable, `POST /notes: ${status}`, {
        status,
        mayHaveSucceeded: true,
      });
      const { ats, notes, posts } = atsFailingFirstPost(fault, true);

      await expect(postNoteOnce(ats, target, note)).rejects.toBe(fault);
      expect([posts(), notes.length]).toEqual([1, 0]);
    },
  );

  it('sends no second post after a timeout: the first may still be landing; the retry looks first', async () => {
    const timeout = new HttpTransportError('timeout', 'POST /notes timed out after 700 ms');
    const fault = new AtsError(ATS_ERROR_CODES.unavailable, timeout.message, {
      cause: timeout,
      mayHaveSucceeded: true,
    });
    const { ats, notes, posts } = atsFailingFirstPost(fault, true);

    const thrown = await postNoteOnce(ats, target, note).catch((error: unknown) => error);
    expect(mayHaveSucceeded(thrown)).toBe(true);
    expect(posts()).toBe(1);
    expect(notes).toHaveLength(0);
  });
});
