import { MOVE_CALLS, type Like } from '../ats/port';
import type { InterviewReport } from '../interview-service';
import type { ReportCreatedMessage } from '../queue/messages.schema';
import type { ConnectionContext } from './ports';
import { decideAdvance } from './report-note';

/**
 * A report's turn on its connection's ATS schedule, booked as the report is enqueued (to be visible in
 * `timing.visibleInMs`) where the schedule is booked so far ahead that the message would go back for its turn (a
 * burst's backlog): it goes on the queue carrying the turn, as one sent back for it does, out of sight until shortly
 * before it (`returnInMs`). So it is received once, not once to book a turn and again for it. Its sort is read as the
 * worker reads it (sortBeforeTurn), for as long as `timing.signal` allows. `timing.workerDeadline`: when the
 * write-back worker that receives it stops (its invocation's deadline), which bounds how long it waits for the turn.
 * Otherwise the message books as it runs (`freeSoon` when the schedule was: an unpaced connection or a report not
 * listed yet is not).
 */
export async function bookReportTurn(
  message: ReportCreatedMessage,
  context: ConnectionContext,
  timing: { visibleInMs: number; workerDeadline?: AbortSignal; signal?: AbortSignal },
): Promise<{ message: ReportCreatedMessage; returnInMs: number } | { message?: undefined; freeSoon: boolean }> {
  if (!context.pacer) return { freeSoon: false };
  const sort = await sortBeforeTurn(message, context, timing.signal);
  if (!sort?.kind) return { freeSoon: false };
  const paced = sort.like ? { kind: sort.kind, like: sort.like } : sort.kind;
  const booked = await context.pacer.bookAhead(paced, timing.visibleInMs, timing.workerDeadline);
  if (!booked.turn) return { freeSoon: booked.freeSoon };
  const { turn, returnInMs } = booked;
  return {
    message: { ...message, turnAt: turn.at, turnCalls: turn.calls, turnWhole: true, turnKind: turn.kind },
    returnInMs,
  };
}

/**
 * What a write-back costs depends on its sort: one with a stage move makes the move's calls more. A message on a
 * paced connection that holds no turn yet reads its report before it books one, so each sort is booked at its own
 * cost (one with a move, until its cost is shown, as one without and the move's calls): booked at a write-back's
 * usual cost, one with a move was cut before it and came back for it, claiming the application again (at Greenhouse
 * 50 per 10 s, 66 of 200). The list read here serves the run when the turn is now; one that goes back reads it again
 * when it comes back, and carries its sort (`turnKind`).
 */
export async function sortBeforeTurn(
  message: ReportCreatedMessage,
  context: ConnectionContext,
  signal: AbortSignal | undefined,
): Promise<WriteBackKind | undefined> {
  if (!context.pacer || message.turnAt !== undefined) return undefined;
  const reports = await context.interviews.listReports(
    { interview_id: message.interviewId, candidate_id: message.candidateId },
    { signal },
  );
  const report = reports.find((r) => r.report_id === message.reportId);
  if (!report) return { reports };
  const rule = context.connection.writeBack.advance;
  const stay = `${message.kind}:stay`;
  if (!rule || !decideAdvance(rule, report).advance) return { reports, kind: stay };
  // Booked at one call more, the burst's write-backs with a move at Greenhouse 50 per 10 s were cut before the move's
  // second call (50 of 55), each leaving its turn's other interval unused (the share of the rate fell from 93 to 86 %).
  return { reports, kind: `${message.kind}:move`, like: { kind: stay, more: MOVE_CALLS } };
}

/** The report list read before a write-back's turn, and how the write-back is paced. */
export interface WriteBackKind {
  reports: InterviewReport[];
  kind?: string;
  like?: Like;
}
