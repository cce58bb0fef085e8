import { serviceLink } from '../validation';
import { MOVED_ON, type ApplicationRef, type AtsFile, type AtsNote, type ExitKind } from '../ats/port';
import type { InterviewReport } from '../interview-service';
import type { StageMatcher } from '../config';
import { errorName, mayHaveSucceeded } from '../errors';
import { errorCode, isPermanent, refusesKey } from './errors';
import { standingForTrigger, standingNow } from './application-changed.use-case';
import { afterSideEffect } from './fault-injection';
import { noteStart } from './note-start';
import { tellInviteFailure } from './failure-note';
import { noteEnding, postNoteOnce, refusableStart, refusedOrUncertain, refusedUnlanded } from './post-note';
import { type decideAdvance, formatReportNote } from './report-note';
import type { Step } from './steps';
import {
  type ConnectionContext,
  type PipelineDependencies,
  type StepData,
  type StepDone,
  stepsBefore,
  type StepWrite,
} from './ports';
import {
  stepDone,
  type ApplicationExit,
  type ApplicationKey,
  type ApplicationRecord,
  type StepRecord,
} from './records';

/** The write-back's steps (report-created.use-case.ts runs them): the note with its link, the move, their records. */
/** The first claim of the report, or one taken over from a clean stop: nothing earlier can still land unseen. */
export function startedClean(record: ApplicationRecord): boolean {
  const attempts = record.writeBackAttempts ?? 1;
  return attempts <= 1 || record.cleanStop === `writeBack:${attempts - 1}`;
}

export interface WriteBackStepsInput {
  context: ConnectionContext;
  deps: PipelineDependencies;
  key: ApplicationKey;
  owner: string;
  target: ApplicationRef;
  record: ApplicationRecord;
  report: InterviewReport;
  signal: AbortSignal | undefined;
  now: () => number;
  /** Steps done and not yet recorded, with their data: the next write records them too (`before`). */
  carried?: { steps: StepDone[]; data?: StepData | undefined } | undefined;
  /** The note's record waits for the next step's write (the report file follows it). */
  carryNote?: boolean;
  /**
   * Where the ATS takes the file on the note (`filesOnNotes`): the report's PDF, and what says the note carried it.
   * A file not at hand (not read, or refused with the note) leaves the note without it: the file's own step
   * attaches it, or says why not. Set only for the first tries: one whose file never comes goes without it.
   */
  noteFile?: { read: () => Promise<AtsFile>; carried: () => void } | undefined;
  /** The stage move was refused for good in this try (stageMoveStep). */
  moveRefused?: boolean;
  /** The move found the candidate gone from the process (rejected, withdrawn, hired) in this try (stageMoveStep). */
  movedOut?: boolean;
}

/**
 * The report note, and before it the report link where the ATS has a link field (Lever's links, which live on the
 * contact): one paced step, recorded by one write. A note that fails after the link was attached records the link
 * alone, so the message that comes back posts the note without attaching the link again. A crash between the link and
 * its record, a link call whose answer did not come, or a record of the link alone that failed attaches it once more
 * (the same URL on the same contact): it is not looked up. A second claim of the same report means an earlier worker
 * may have posted the note and stopped: it is looked up by its marker first.
 */
export function reportNoteStep(
  input: WriteBackStepsInput,
  decision: ReturnType<typeof decideAdvance>,
  hasRule: boolean,
): Step<NoteResult> {
  const { context, record, report, now } = input;
  const marker = `ai-interview-report:${report.report_id}`;

  const serviceUrl = context.connection.interviewService.baseUrl;
  const link =
    context.ats.attachReportLink && !stepDone(record.steps.reportLink) && serviceLink(report.report_url, serviceUrl);
  // The link is recorded with the note, or alone when the note did not follow it.
  let linkDone: { name: 'reportLink'; record: StepRecord } | undefined;
  // A note the ATS refuses for good (a key without the notes permission, a 422) is recorded refused, and the file, the
  // move and the status go on: one refused channel never blocks another.
  const postNote = () => postReportNoteOnce(input, { body: formatReportNote(report, decision, serviceUrl), marker });
  const started = reportNoteStart(input, marker);
  return {
    name: 'report-note-posted',
    done: stepDone(record.steps.reportNote),
    ...refusableStart(started),
    // A look-up refused for good: the note is not posted (it may be there already), and the rest goes on.
    perform: async () => {
      if (!link) return postNote();
      linkDone = { name: 'reportLink', record: await attachLink(input, link) };
      try {
        return await postNote();
      } catch (error) {
        // The note's own failure is what decides the retry; a link not recorded is only attached once more.
        await recordWriteBackStep(input, { step: linkDone, last: false }).catch((recordError: unknown) =>
          input.deps.logger.warn('report: the report link could not be recorded', { code: errorName(recordError) }),
        );
        throw error;
      }
    },
    recordDone: (note, outcome, last) => {
      if (note?.refused) {
        const { connectionId, atsApplicationId } = input.key;
        const line = { connectionId, atsApplicationId, code: note.refused };
        input.deps.logger.error('report: the ATS refused the report note; the file, move and status go on', line);
      }
      return recordWriteBackStep(input, {
        // A note found was posted after its link.
        before:
          linkDone ?? (outcome === 'found' && link ? { name: 'reportLink', record: { doneAt: now() } } : undefined),
        step: {
          name: 'reportNote',
          record: { doneAt: now(), ...noteValue(note), ...noteEnding(note, outcome) },
        },
        data: { flaggedForReview: hasRule && !decision.advance },
        last,
        carry: input.carryNote,
      });
    },
  };
}

/**
 * The report note posted, as its step's result: refused for good, recorded refused (the rest goes on); refused for
 * good after an answer that did not come (the first post may have landed), uncertain and not posted again.
 */
function postReportNoteOnce(input: WriteBackStepsInput, note: AtsNote): Promise<NoteResult> {
  return postReportNote(input, note).catch(refusedOrUncertain);
}

/** What the report note's record keeps: the note's id, why it was skipped, or the refusal's code. */
type NoteResult = { noteId?: string | undefined; skipped?: string | undefined; refused?: string; uncertain?: string };
const noteValue = (note: NoteResult | undefined) => {
  const value = note?.noteId ?? note?.skipped ?? note?.refused ?? note?.uncertain;
  return value === undefined ? {} : { value };
};

/**
 * The report link attached where the ATS has a link field, as its step's record. A link the ATS refuses for good (a key
 * without that permission) is recorded refused, and the write-back goes on: the note carries the link.
 */
async function attachLink(input: WriteBackStepsInput, link: string): Promise<StepRecord> {
  const { context, target, signal, now } = input;
  const attached = await context.ats.attachReportLink?.(target, link, signal).then(() => undefined, refusedUnlanded);
  afterSideEffect('report-link-attached', writeBackKey(input));
  if (!attached) return { doneAt: now() };
  const { connectionId, atsApplicationId } = input.key;
  const line = { connectionId, atsApplicationId, code: attached.refused };
  input.deps.logger.warn('report: the ATS refused the report link; the note carries it', line);
  return { doneAt: now(), outcome: 'refused', value: attached.refused };
}

/**
 * The report note, carrying the report file where the ATS takes one on a note and it is at hand (`noteFile`).
 * Refused with its file (too large for the ATS, say), the note goes alone: the file's own step attaches it or says
 * why not. An answer that did not come is retried as it was, carrying its file.
 */
async function postReportNote(input: WriteBackStepsInput, note: AtsNote) {
  const { context, target, signal } = input;
  const file = await input.noteFile?.read().catch(() => undefined);
  if (!file) return postNoteOnce(context.ats, target, note, signal);
  try {
    const posted = await postNoteOnce(context.ats, target, { ...note, file }, signal);
    input.noteFile?.carried();
    return posted;
  } catch (error) {
    if (!isPermanent(error) || mayHaveSucceeded(error)) throw error;
    return postNoteOnce(context.ats, target, note, signal);
  }
}

/**
 * How the report note's step finds out whether an earlier worker posted it. A second claim may follow a worker that
 * posted and stopped (not one that stopped with nothing half-done): the note is looked up by its marker, or, where no
 * note is read back (Kombo), found started in the steps map.
 */
function reportNoteStart(input: WriteBackStepsInput, marker: string) {
  const { context, target, record, signal, now } = input;
  const mark = (startedAt: number | undefined) =>
    recordWriteBackStep(input, {
      step: { name: 'reportNote', record: startedAt ? { startedAt } : undefined },
      last: false,
    });
  return noteStart(
    context.ats,
    { target, marker, signal },
    { resumed: !startedClean(record), startedAt: record.steps.reportNote?.startedAt },
    { start: () => mark(now()), clear: () => mark(undefined) },
  );
}

type Moved = { stageId?: string; exit?: ExitKind | undefined; skipped?: string | undefined; refused?: string };

/**
 * The stage move: safe to perform again, since a move finds the application already in the target stage. A move the
 * ATS refuses for good (no such stage in this job, a 422) is recorded refused: the write-back goes on, the recruiter
 * is told in a note of its own (`moveRefusedNoteStep`) and the status shows the candidate flagged for review.
 */
export function stageMoveStep(input: WriteBackStepsInput, toStage: StageMatcher): Step<Moved> {
  const { context, target, record, signal, now } = input;
  return {
    name: 'stage-moved',
    done: stepDone(record.steps.stageMove),
    started: false,
    perform: async (): Promise<Moved> => {
      const moved = await context.ats.moveToStage(target, toStage, signal).catch(async (error: unknown) => {
        const refused = refusedUnlanded(error);
        // Told once (the note's own step), before the move's record: a retry finds it told.
        const place = { context, record, target, deps: input.deps, now, signal };
        await tellInviteFailure(place, { cause: 'move-refused', code: refused.refused, notSent: false });
        return refused;
      });
      if ('exit' in moved && moved.exit) await exitFoundByMove(input, moved.exit);
      return moved;
    },
    recordDone: (moved, _outcome, last) => {
      if (moved?.exit || moved?.skipped === MOVED_ON) input.movedOut = true;
      if (moved?.skipped === MOVED_ON)
        input.deps.logger.info(
          'report: a recruiter moved the candidate on since the invitation; the stage is not moved',
          {
            connectionId: input.key.connectionId,
            atsApplicationId: input.key.atsApplicationId,
          },
        );
      if (moved?.refused) {
        input.moveRefused = true;
        input.deps.logger.error('report: the ATS refused the stage move; the candidate is flagged for review', {
          connectionId: input.key.connectionId,
          atsApplicationId: input.key.atsApplicationId,
          code: moved.refused,
        });
      }
      // Left the process between the note and the move: not moved, and said so on the step.
      const value = moved?.exit ? `not-moved:${moved.exit}` : (moved?.refused ?? moved?.skipped ?? moved?.stageId);
      const refused = moved?.refused ? { outcome: 'refused' as const } : {};
      return recordWriteBackStep(input, {
        step: { name: 'stageMove', record: { doneAt: now(), value, ...refused } },
        last,
      });
    },
  };
}

/**
 * The move's own read found the candidate gone (the exit came between the look before the note and the move, or the
 * look was skipped on a retry): their exit is recorded, as that look records one (report-created.use-case.ts).
 */
async function exitFoundByMove(input: WriteBackStepsInput, kind: ExitKind): Promise<void> {
  const { deps, key, now } = input;
  await deps.store.recordExit(input.record, { kind, at: now() });
  deps.logger.info('report: the candidate left the process; the stage is not moved', {
    connectionId: key.connectionId,
    atsApplicationId: key.atsApplicationId,
    exit: kind,
  });
}

/**
 * A candidate who left the process (rejected, withdrew, hired), or whom a recruiter moved out of the trigger's stage,
 * is never moved, whatever their result: the exit the connector recorded, or, where the result would move them and the
 * note is not written yet, the application's standing read once from the ATS (the webhook of the exit may never have
 * come). The move reads again before it moves. One the connector moved already (a retry reopened for its refused note)
 * keeps its result, whatever happened since.
 */
export async function exitBeforeAdvance(
  input: WriteBackStepsInput,
  decision: ReturnType<typeof decideAdvance>,
): Promise<Pick<ApplicationExit, 'kind'> | undefined> {
  const { record, context, deps, now, signal } = input;
  const move = record.steps.stageMove;
  if (stepDone(move) && move?.outcome !== 'refused' && !notMoved(move)) return undefined;
  if (record.exit) return record.exit;
  if (!decision.advance || stepDone(record.steps.reportNote)) return undefined;
  // An application the ATS no longer has is not moved either (application-changed.use-case.ts). A look the ATS
  // refuses for good (not the key) does not cost the note, file and status: the move reads again before it moves.
  const log = { connectionId: record.connectionId, atsApplicationId: record.atsApplicationId };
  const read = await standingNow(context, input.target, signal).catch((error: unknown) => {
    if (!isPermanent(error) || refusesKey(error)) throw error;
    deps.logger.warn('report: the ATS refused the look at the candidate before the move', {
      ...log,
      code: errorCode(error),
    });
    return undefined;
  });
  const { fromStage } = input.target;
  const standing = read && fromStage ? standingForTrigger(read, { stage: fromStage }, record) : read;
  if (!standing || standing.active) return undefined;
  const exit = { kind: standing.exit, reason: standing.reason?.slice(0, 200), at: now() };
  await deps.store.recordExit(record, exit);
  deps.logger.info('report: the candidate left the process; the stage is not moved', { ...log, exit: exit.kind });
  return exit;
}

/** Whether the write-back's move found the candidate gone or moved on (this try, or recorded by an earlier one). */
export const movedOut = (input: Pick<WriteBackStepsInput, 'record' | 'movedOut'>): boolean =>
  input.movedOut === true || notMoved(input.record.steps.stageMove);

/** A move's record saying it found the candidate gone or moved on: `not-moved:<why>`. */
const notMoved = (move: StepRecord | undefined): boolean => move?.value?.startsWith('not-moved:') === true;

/** Whether the write-back's stage move was refused for good (this try, or recorded by an earlier one). */
export const moveRefused = (input: Pick<WriteBackStepsInput, 'record' | 'moveRefused'>): boolean =>
  input.moveRefused === true || input.record.steps.stageMove?.outcome === 'refused';

/** The write-back's name for the chaos run's crash points. */
export const writeBackKey = (input: Pick<WriteBackStepsInput, 'key' | 'report'>) =>
  `${input.key.connectionId}#${input.report.report_id}`;

/**
 * A write-back step recorded under the claim; the last one ends the write-back. With `carry` (not the last), the step
 * waits for the next write, which records it with whatever was carried before it.
 */
export async function recordWriteBackStep(
  input: Pick<WriteBackStepsInput, 'deps' | 'key' | 'owner' | 'carried'>,
  write: Pick<StepWrite, 'step' | 'before' | 'data'> & { last: boolean; carry?: boolean | undefined },
): Promise<void> {
  const { step, last } = write;
  const before = [...(input.carried?.steps ?? []), ...stepsBefore(write.before)];
  const data = input.carried?.data || write.data ? { ...input.carried?.data, ...write.data } : undefined;
  if (write.carry && !last && step?.record) {
    input.carried = { steps: [...before, { name: step.name, record: step.record }], data };
    return;
  }
  input.carried = undefined;
  await input.deps.store.recordStep(input.key, {
    owner: input.owner,
    step,
    before: before.length ? before : undefined,
    data,
    ...(last ? { finish: 'written_back' } : {}),
  });
}
