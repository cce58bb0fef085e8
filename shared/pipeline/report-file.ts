import type { ApplicationRef, AtsFile } from '../ats/port';
import { reportFileMaxBytes } from '../ats/profiles';
import { errorMessage, isRateLimited, mayHaveSucceeded } from '../errors';
import { type InterviewReport, ReportFileUnavailableError } from '../interview-service';
import { isPermanent } from './errors';
import { WORKER_TIMING } from './constants';
import type { ConnectionContext, PipelineLogger } from './ports';
import { serviceLink } from '../validation';
import { runStep, type Step } from './steps';
import { noteStart } from './note-start';
import { noteEnding, refusableStart, refusedForGood } from './post-note';
import { stepDone, type ApplicationRecord } from './records';

/** The report file's name on the candidate's record: what the upload is called, and what a retry looks for. */
export const reportFileName = (report: Pick<InterviewReport, 'report_id'>): string =>
  `AI interview report ${report.report_id}.pdf`;

/** The step's value when the file was not attached: the reason follows, and a note on the record says it. */
const NOT_ATTACHED = 'not-attached:';

export interface ReportFileInput {
  context: ConnectionContext;
  target: ApplicationRef;
  record: ApplicationRecord;
  report: InterviewReport;
  signal: AbortSignal | undefined;
  logger: PipelineLogger;
  /** How many times the queue has handed the message over: past a bound, a file that would not come is given up. */
  receiveCount: number;
  /** An earlier worker may have attached it (the write-back was claimed before and did not stop clean). */
  started: boolean;
  recordDone: (value: string, last: boolean) => Promise<void>;
  /** The report's PDF, read once for the write-back (reportFileReader). */
  readFile: () => Promise<AtsFile>;
  /** Whether the report note carried the file this try (`filesOnNotes`): nothing is left to attach. */
  onNote: () => boolean;
  /** Records (or, after a definite refusal, clears) the start of the "not attached" note where no note is read back. */
  markNote: (started: boolean) => Promise<void>;
}

/** Whether the connection attaches report files, and its ATS can. */
export function attachesReportFile(context: ConnectionContext): boolean {
  return context.connection.writeBack.attachReport !== false && !!context.ats.attachFile && !!context.ats.findFile;
}

/**
 * The report file on the candidate's record, once: after the note, the file the service serves at `report_url` is
 * read (bounded: its size, its type, the worker's deadline) and attached by the ATS's documented upload under a name
 * derived from the report. Whenever an earlier try may have uploaded it (a crash after the upload, an answer that
 * never came: the write-back's claim was taken before and did not stop clean), that name is looked for first in the
 * ATS's list of the record's files, so no second copy is attached; a first try has nothing to look for. A report
 * with no file, a file the ATS refuses or one over its limit is recorded as not attached, with a note saying why: the
 * report note keeps its link, and the move and the status go on. A file that does not come after a few tries is
 * given up the same way.
 */
export function reportFileStep(input: ReportFileInput): Step<string> {
  const { context, target, report, signal } = input;
  return {
    name: 'report-attached',
    done: stepDone(input.record.steps.reportFile),
    started: input.started,
    lookup: async () => {
      try {
        return (await context.ats.findFile?.(target, reportFileName(report), signal))?.fileId;
      } catch (error) {
        // The record's files cannot be listed (a permission the key lacks, or no answer after a few tries): given up
        // with its note rather than uploaded blind (a second copy) or holding back the move and the status.
        const reason = givenUpLooking(error, input.receiveCount);
        if (reason === undefined) throw error;
        return notAttached(input, `the ATS's list of the record's files could not be read to look for it (${reason})`);
      }
    },
    perform: () => (input.onNote() ? Promise.resolve(ON_NOTE) : attach(input)),
    recordDone: (value, _outcome, last) => input.recordDone(value ?? 'attached', last),
  };
}

/** The step's value when the report note carried the file. */
const ON_NOTE = 'on-report-note';

/**
 * The report's PDF as the service serves it at `report_url` (bounded: its size, its type, the worker's deadline),
 * under the name a retry looks for: read once however many steps ask (the note that carries it, the file's step).
 */
export function reportFileReader(
  context: ConnectionContext,
  report: InterviewReport,
  signal: AbortSignal | undefined,
): () => Promise<AtsFile> {
  let read: Promise<AtsFile> | undefined;
  const readOnce = async (): Promise<AtsFile> => {
    const link = serviceLink(report.report_url, context.connection.interviewService.baseUrl);
    if (!link) throw new ReportFileUnavailableError('the report has no file link');
    const maxBytes = reportFileMaxBytes(context.connection.ats);
    const bytes = await context.interviews.readReportFile(link, { maxBytes, signal });
    return { name: reportFileName(report), contentType: 'application/pdf', bytes };
  };
  return () => {
    read ??= readOnce();
    return read;
  };
}

async function attach(input: ReportFileInput): Promise<string> {
  const { context, target, signal } = input;
  try {
    const attached = await context.ats.attachFile?.(target, await input.readFile(), signal);
    // Skipped where the ATS takes no files here (Kombo's capability table): the reason is the step's record.
    return attached?.fileId ?? attached?.skipped ?? 'attached';
  } catch (error) {
    const reason = givenUp(error, input.receiveCount);
    if (reason === undefined) throw error;
    return notAttached(input, reason);
  }
}

/** The file given up: logged, said in a note on the record, and the step's value. */
async function notAttached(input: ReportFileInput, reason: string): Promise<string> {
  input.logger.warn('report: the report file was not attached', {
    connectionId: input.record.connectionId,
    atsApplicationId: input.record.atsApplicationId,
    reportId: input.report.report_id,
    reason,
  });
  await sayNotAttached(input, reason);
  return `${NOT_ATTACHED}${reason}`.slice(0, 300);
}

/**
 * Why the file is given up, or undefined while it is worth another try: a verdict (no file, not a PDF, too large, the
 * ATS refused it), or a file that still did not come after `reportFileReceives` tries. An upload whose answer was lost
 * is tried again (the next try finds it by its name) until then too: after it, the move and the status wait no longer,
 * and the note says it may be there all the same.
 */
function givenUp(error: unknown, receiveCount: number): string | undefined {
  if (error instanceof ReportFileUnavailableError) return error.reason;
  if (isPermanent(error) && !mayHaveSucceeded(error)) return `the ATS refused it (${errorMessage(error)})`;
  if (receiveCount < WORKER_TIMING.reportFileReceives) return undefined;
  return mayHaveSucceeded(error)
    ? `its upload got no answer after ${receiveCount} tries (${errorMessage(error)}): it may be there all the same`
    : `it could not be read or uploaded after ${receiveCount} tries (${errorMessage(error)})`;
}

/** Why looking for an earlier copy is given up: the ATS refused the list, or it did not answer after a few tries. */
function givenUpLooking(error: unknown, receiveCount: number): string | undefined {
  // A rate limit is a wait, not an answer: the message is deferred and looks again.
  if (isRateLimited(error)) return undefined;
  if (isPermanent(error)) return `refused: ${errorMessage(error)}`;
  if (receiveCount >= WORKER_TIMING.reportFileReceives) return `no answer after ${receiveCount} tries`;
  return undefined;
}

/**
 * A note on the record, once, saying the file is not there and why: a step of its own, resumed as every note is
 * (note-start.ts): found by its marker where the ATS reads notes back; elsewhere (Kombo) its start is recorded on the
 * file's step before it is posted, and a start an earlier try recorded means it may be there already: not posted again.
 */
async function sayNotAttached(input: ReportFileInput, reason: string): Promise<void> {
  const { context, target, report, signal, record } = input;
  const marker = `ai-interview-report-file:${report.report_id}`;
  const body =
    `AI interview report ${report.report_id}: the report file was not attached to this record: ${reason}. ` +
    'The report note keeps the link to the report.';
  const earlier = { resumed: input.started, startedAt: record.steps.reportFile?.startedAt };
  const mark = { start: () => input.markNote(true), clear: () => input.markNote(false) };
  const started = noteStart(context.ats, { target, marker, signal }, earlier, mark);
  const note: Step<unknown> = {
    ...{ name: 'report-attached', done: false, ...refusableStart(started) },
    // Refused for good (where the report note was refused too, say): said, and the move and the status go on.
    perform: () => context.ats.postNote(target, { body, marker }, signal).catch(refusedForGood),
    // The file's step records the outcome ("not-attached:" and the reason); an uncertain note is only said.
    recordDone: async (result, outcome) => {
      const refused = noteEnding(result, outcome);
      if (refused.outcome === 'refused')
        input.logger.warn('report: the "file not attached" note was refused', {
          ...{ connectionId: record.connectionId, atsApplicationId: record.atsApplicationId, code: refused.value },
        });
      if (outcome !== 'uncertain') return;
      input.logger.warn('report: the "file not attached" note may be posted already; not posted again', {
        ...{ connectionId: record.connectionId, atsApplicationId: record.atsApplicationId },
        reportId: report.report_id,
      });
    },
  };
  await runStep(note, `${record.connectionId}#${report.report_id}`, false);
}
