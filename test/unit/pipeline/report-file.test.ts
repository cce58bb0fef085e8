import { describe, expect, it, vi } from 'vitest';
import { AtsError } from '../../../shared/ats/errors';
import { ReportFileUnavailableError, UnavailableError } from '../../../shared/interview-service';
import { handleReportCreated } from '../../../shared/pipeline';
import { faultInjection, SimulatedCrash } from '../../../shared/pipeline/fault-injection';
import { connectionDocument } from '../../helpers/connections';
import { INVITED_APPLICATION, storeWithInvitation } from '../../helpers/memory-store';
import { dependencies, fakeContext } from '../../helpers/pipeline-fakes';
import { NOW, reportCreatedMessage } from '../../helpers/pipeline-records';

// The report file after the note: attached once (looked for by name first), given up with a note saying why when
// there is no file, the ATS refuses it or it never comes, and never in the way of the move and the status.
const APPLICATION = INVITED_APPLICATION;
const PDF = new TextEncoder().encode('%PDF-1.4 report');
const NAME = 'AI interview report rep-1.pdf';

async function setUp(document = connectionDocument()) {
  const store = await storeWithInvitation(NOW);
  const { context, ats, interviews } = fakeContext(document);
  const files = {
    findFile: vi.fn().mockResolvedValue(undefined),
    attachFile: vi.fn().mockResolvedValue({ fileId: 'file-1' }),
  };
  Object.assign(ats, files);
  const readReportFile = vi.fn().mockResolvedValue(PDF);
  Object.assign(interviews, { readReportFile });
  // A retry comes after the failed try's claim ran out (the queue's visibility timeout is longer than the lease).
  const run = (receiveCount = 1) =>
    handleReportCreated(
      reportCreatedMessage(),
      { ...dependencies(store, context), now: () => NOW + (receiveCount - 1) * 120_000 },
      { receiveCount },
    );
  const recorded = async () => (await store.getApplication(APPLICATION))?.steps.reportFile?.value;
  return { store, ats, files, readReportFile, run, recorded };
}

describe('Write-back: the report file on the candidate record', () => {
  it("attaches the service's PDF once, after the note and before the move, under the report's name", async () => {
    const { ats, files, readReportFile, run, recorded } = await setUp();
    expect(await run()).toMatchObject({ outcome: 'written-back', advanced: true });
    expect(readReportFile).toHaveBeenCalledWith('https://files.example.com/r.pdf', {
      maxBytes: 10 * 1_048_576,
      signal: undefined,
    });
    expect(files.attachFile).toHaveBeenCalledWith(
      expect.objectContaining({ atsApplicationId: '4401' }),
      { name: NAME, contentType: 'application/pdf', bytes: PDF },
      undefined,
    );
    const order = (fn: { mock: { invocationCallOrder: number[] } }) => fn.mock.invocationCallOrder[0] ?? 0;
    expect(order(ats.postNote)).toBeLessThan(order(files.attachFile));
    expect(order(files.attachFile)).toBeLessThan(order(ats.moveToStage));
    expect(await recorded()).toBe('file-1');
    // A first try has no earlier copy to look for: the list is read only when a write-back is resumed.
    expect(files.findFile).not.toHaveBeenCalled();
  });

  it('finds the file an earlier try attached (an answer lost, a crash): no second upload', async () => {
    const { files, readReportFile, run, recorded } = await setUp();
    files.attachFile.mockRejectedValueOnce(new AtsError('ats-unavailable', 'no answer', { mayHaveSucceeded: true }));
    await expect(run()).rejects.toMatchObject({ mayHaveSucceeded: true });
    files.findFile.mockResolvedValue({ fileId: 'file-early' });
    expect(await run(2)).toMatchObject({ outcome: 'written-back' });
    expect(files.attachFile).toHaveBeenCalledTimes(1);
    expect(readReportFile).toHaveBeenCalledTimes(1);
    expect(await recorded()).toBe('file-early');
  });

  it('records the file with the next write, and at once when the step after it stops', async () => {
    const first = await setUp();
    const writes = vi.spyOn(first.store, 'recordStep');
    await first.run();
    // One write: the move's, carrying the note and the file, ending the write-back.
    expect(writes).toHaveBeenCalledTimes(1);
    expect(writes.mock.calls[0]?.[1]).toMatchObject({
      before: [{ name: 'reportNote' }, { name: 'reportFile' }],
      step: { name: 'stageMove' },
      finish: 'written_back',
    });
    const second = await setUp();
    second.ats.moveToStage.mockRejectedValue(new AtsError('ats-rate-limited', '429', { retryAfterMs: 1_000 }));
    await expect(second.run()).rejects.toMatchObject({ code: 'ats-rate-limited' });
    expect(await second.recorded()).toBe('file-1');
  });

  it.each([
    ['no file at its link', new ReportFileUnavailableError('the service has no file at its link', 404), 'no file'],
    ['an over-size file', new ReportFileUnavailableError('it is over the 10 MB the ATS takes'), 'over the 10 MB'],
    ['a refusal by the ATS', new AtsError('ats-invalid-request', 'extension refused', { status: 422 }), 'refused'],
  ])('records %s as not attached, says why in one note, and still moves the stage', async (_, error, why) => {
    const { ats, files, readReportFile, run, recorded } = await setUp();
    (error instanceof AtsError ? files.attachFile : readReportFile).mockRejectedValue(error);
    expect(await run()).toMatchObject({ outcome: 'written-back', advanced: true });
    expect(await recorded()).toMatch(/^not-attached:/);
    expect(await recorded()).toContain(why);
    const notes = ats.postNote.mock.calls.map(([, note]) => note as { body: string; marker: string });
    expect(notes.map((n) => n.marker)).toEqual(['ai-interview-report:rep-1', 'ai-interview-report-file:rep-1']);
    expect(notes[1]?.body).toContain('not attached');
    expect(ats.moveToStage).toHaveBeenCalledTimes(1);
  });

  it('retries a file that did not come, then gives it up after a few tries with a note', async () => {
    const { ats, readReportFile, run, recorded } = await setUp();
    readReportFile.mockRejectedValue(new UnavailableError('GET /files/r.pdf: the file host answered 503'));
    await expect(run(1)).rejects.toBeInstanceOf(UnavailableError);
    expect(ats.moveToStage).not.toHaveBeenCalled();
    expect(await run(4)).toMatchObject({ outcome: 'written-back' });
    expect(await recorded()).toMatch(/^not-attached:it could not be read or uploaded after 4 tries/);
    expect(ats.moveToStage).toHaveBeenCalledTimes(1);
  });

  it('gives up an upload that never gets an answer after a few tries: the move and status wait no more', async () => {
    const { ats, files, run, recorded } = await setUp();
    const lost = new AtsError('ats-unavailable', 'POST /v3/attachments: 503', { status: 503, mayHaveSucceeded: true });
    files.attachFile.mockRejectedValue(lost);
    await expect(run(1)).rejects.toMatchObject({ mayHaveSucceeded: true });
    await expect(run(2)).rejects.toMatchObject({ mayHaveSucceeded: true });
    expect(ats.moveToStage).not.toHaveBeenCalled();
    // Each resumed try looked for an earlier copy first, and found none.
    expect(files.findFile).toHaveBeenCalledTimes(1);
    expect(await run(4)).toMatchObject({ outcome: 'written-back', advanced: true });
    expect(await recorded()).toMatch(
      /^not-attached:its upload got no answer after 4 tries .*may be there all the same/,
    );
    expect(ats.moveToStage).toHaveBeenCalledTimes(1);
    const notes = ats.postNote.mock.calls.map(([, note]) => (note as { marker: string }).marker);
    expect(notes).toEqual(['ai-interview-report:rep-1', 'ai-interview-report-file:rep-1']);
  });

  it.each([
    ['refuses the list (a key without the permission)', new AtsError('ats-forbidden', '403', { status: 403 }), 2],
    ['does not answer it, a few tries on', new AtsError('ats-unavailable', 'no answer', {}), 4],
  ])('gives the file up with a note when the ATS %s: never uploaded blind, the move goes on', async (_, error, at) => {
    const { ats, files, run, recorded } = await setUp();
    // A first try's upload whose answer was lost: the next ones must look before uploading again.
    files.attachFile.mockRejectedValueOnce(new AtsError('ats-unavailable', 'lost', { mayHaveSucceeded: true }));
    await expect(run(1)).rejects.toMatchObject({ mayHaveSucceeded: true });
    files.findFile.mockRejectedValue(error);
    if (at > 2) await expect(run(2)).rejects.toBe(error);
    expect(await run(at)).toMatchObject({ outcome: 'written-back', advanced: true });
    expect(await recorded()).toMatch(/^not-attached:the ATS's list of the record's files could not be read/);
    expect(files.attachFile).toHaveBeenCalledTimes(1);
    expect(ats.moveToStage).toHaveBeenCalledTimes(1);
  });

  it('does not post the why-note twice when a retry finds it', async () => {
    const { ats, readReportFile, run, recorded } = await setUp();
    readReportFile.mockRejectedValue(new ReportFileUnavailableError('the report has no file link'));
    // The worker dies right after the why-note is posted, before the file's step is recorded.
    faultInjection.afterSideEffect = (point) => {
      if (point !== 'report-attached') return;
      faultInjection.afterSideEffect = undefined;
      throw new SimulatedCrash(point);
    };
    try {
      await expect(run()).rejects.toBeInstanceOf(SimulatedCrash);
    } finally {
      faultInjection.afterSideEffect = undefined;
    }
    ats.findNote.mockImplementation(async (_target: unknown, marker: string) =>
      marker.startsWith('ai-interview-report-file:') ? { noteId: 'why-earlier' } : undefined,
    );
    expect(await run(2)).toMatchObject({ outcome: 'written-back' });
    const markers = ats.postNote.mock.calls.map(([, note]) => (note as { marker: string }).marker);
    expect(markers).toEqual(['ai-interview-report:rep-1', 'ai-interview-report-file:rep-1']);
    expect(await recorded()).toMatch(/^not-attached:/);
  });

  it('attaches nothing when the connection turns it off (writeBack.attachReport: false)', async () => {
    const document = connectionDocument();
    const connection = (document as { connections: { writeBack?: object }[] }).connections[0]!;
    connection.writeBack = { ...connection.writeBack, attachReport: false };
    const { files, readReportFile, run, recorded } = await setUp(document);
    expect(await run()).toMatchObject({ outcome: 'written-back' });
    expect(files.findFile).not.toHaveBeenCalled();
    expect(readReportFile).not.toHaveBeenCalled();
    expect(await recorded()).toBeUndefined();
  });

  it('carries the PDF on the report note where the ATS takes a file on a note: nothing attached alone', async () => {
    const { ats, files, run, recorded } = await setUp();
    Object.assign(ats, { filesOnNotes: true });
    expect(await run()).toMatchObject({ outcome: 'written-back', advanced: true });
    expect(ats.postNote).toHaveBeenCalledTimes(1);
    expect(ats.postNote.mock.calls[0]?.[1]).toMatchObject({
      marker: 'ai-interview-report:rep-1',
      file: { name: NAME, contentType: 'application/pdf', bytes: PDF },
    });
    expect(files.attachFile).not.toHaveBeenCalled();
    expect(await recorded()).toBe('on-report-note');
  });

  it('posts the note without a file not at hand; the file follows alone on the retry, once', async () => {
    const { ats, files, readReportFile, run, recorded } = await setUp();
    Object.assign(ats, { filesOnNotes: true });
    readReportFile.mockRejectedValueOnce(new UnavailableError('GET /files/r.pdf: the file host answered 503'));
    await expect(run(1)).rejects.toBeInstanceOf(UnavailableError);
    expect(ats.postNote.mock.calls[0]?.[1]).not.toHaveProperty('file');
    expect(await run(2)).toMatchObject({ outcome: 'written-back' });
    expect(ats.postNote).toHaveBeenCalledTimes(1);
    expect(files.attachFile).toHaveBeenCalledTimes(1);
    expect(await recorded()).toBe('file-1');
  });

  it('takes a note the ATS answered 503 to, found by its marker, as carrying its file', async () => {
    const { ats, files, run, recorded } = await setUp();
    Object.assign(ats, { filesOnNotes: true });
    const answered = new AtsError('ats-unavailable', 'POST notes: 503', { status: 503, mayHaveSucceeded: true });
    ats.postNote.mockRejectedValueOnce(answered);
    ats.findNote.mockResolvedValue({ noteId: 'note-early' });
    expect(await run()).toMatchObject({ outcome: 'written-back' });
    expect(ats.postNote).toHaveBeenCalledTimes(1);
    expect(files.attachFile).not.toHaveBeenCalled();
    expect(await recorded()).toBe('on-report-note');
  });

  it('posts the note alone when the ATS refuses it with its file; the file step says why it is not there', async () => {
    const { ats, files, run, recorded } = await setUp();
    Object.assign(ats, { filesOnNotes: true });
    const refused = new AtsError('ats-invalid-request', 'the attachment could not be saved', { status: 422 });
    ats.postNote.mockImplementation(async (_target: unknown, note: { file?: unknown }) => {
      if (note.file) throw refused;
      return { noteId: 'note-new' };
    });
    files.attachFile.mockRejectedValue(refused);
    expect(await run()).toMatchObject({ outcome: 'written-back', advanced: true });
    const sent = ats.postNote.mock.calls.map(([, note]) => note as { marker: string; file?: unknown });
    expect(sent.map((note) => [note.marker, note.file !== undefined])).toEqual([
      ['ai-interview-report:rep-1', true],
      ['ai-interview-report:rep-1', false],
      ['ai-interview-report-file:rep-1', false],
    ]);
    expect(await recorded()).toMatch(/^not-attached:/);
  });

  it('sends the note without its file once the file would be given up (its answers never came)', async () => {
    const { ats, files, run } = await setUp();
    Object.assign(ats, { filesOnNotes: true });
    expect(await run(4)).toMatchObject({ outcome: 'written-back' });
    expect(ats.postNote.mock.calls[0]?.[1]).not.toHaveProperty('file');
    expect(files.attachFile).toHaveBeenCalledTimes(1);
  });

  it('moves and shows the status when the ATS refuses every note and the file (no comments permission)', async () => {
    const { ats, files, run, recorded, store } = await setUp();
    const refused = new AtsError('ats-forbidden', 'POST comments: 403', { status: 403 });
    ats.postNote.mockRejectedValue(refused);
    files.attachFile.mockRejectedValue(refused);
    expect(await run()).toMatchObject({ outcome: 'written-back', advanced: true });
    // The report note and the "file not attached" note, each tried once and recorded as the ATS answered.
    expect(ats.postNote).toHaveBeenCalledTimes(2);
    expect(ats.moveToStage).toHaveBeenCalledOnce();
    expect(await recorded()).toContain('not-attached:');
    expect((await store.getApplication(APPLICATION))?.state).toBe('written_back');
  });
});
