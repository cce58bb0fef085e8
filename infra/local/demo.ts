import { mkdirSync, writeFileSync } from 'node:fs';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { toApplication } from '../../shared/mapping/legacy-steps';
import { dirname, join, relative } from 'node:path';
import type { DirectAtsKind } from '../../shared/config';
import { checkKombo, formatKombo, type KomboDemoRun, runKomboDemo } from './demo-kombo';
import type { LocalStack } from './local-stack';
import { connectionRate } from '../../shared/ats';
import { statusOfTag } from '../../shared/pipeline/status';
import { undocumentedCalls } from './sandbox/documented-routes';
import { errorMessage } from '../../shared/errors';
import { checkOrders, formatOrders, runOrders, type OrdersDemoSummary } from './demo-orders';

export interface AtsDemoSummary {
  interviewsCreated: number;
  invitesSent: number;
  reportsWrittenBack: number;
  stageMoves: number;
  flaggedForReview: number;
  /** Candidates whose stage-change webhook was dropped, invited after the sweep found them. */
  foundBySweep: number;
  remindersSent: number;
  /**
   * Reminders begun after the connector heard that the candidate took the interview (its report's webhook answered),
   * however long its write-back waits for its turn on the ATS: none is expected.
   */
  remindedAfterTaking: number;
  expired: number;
  /** Candidates rejected after their invitation and never contacted again (no reminder, no expiry note). */
  leftNotContacted: number;
  /** Invitations made again to a candidate who came back into the stage after their invitation expired. */
  reinvited: number;
  /** Applications per status tag shown in the ATS. */
  statuses: Record<string, number>;
  /** Report files on the candidates' records (the service's PDF, one per report written back). */
  reportFiles: number;
  /**
   * Where a person opens one of them: the sandbox serves its bytes as the ATS would show them (while the stack runs),
   * and a copy is saved beside the stack's details (it stays after `--once`).
   */
  reportFile: { url: string; saved: string } | undefined;
  /** Every call the ATS served in the run, the doctor's at the start too. */
  atsCalls: number;
  /**
   * The least time those calls take at the connection's rate (none where the ATS publishes no limit): the floor of
   * that ATS's part of the run.
   */
  secondsAtRate: number | undefined;
  /** Those calls by route, as the sandbox counted them: where that floor comes from. */
  callsByRoute: Record<string, number>;
  /** One application written back, for a person to look at with the operator's tools. */
  example: { connectionId: string; applicationId: string } | undefined;
}

export interface DemoSummary {
  byAts: Partial<Record<DirectAtsKind, AtsDemoSummary>>;
  dlqDepth: number;
  /** Each call the run made that its vendor does not document (route, query parameter or body field). */
  undocumentedCalls: string[];
  /** Orders placed from inside the ATSs that take them (Greenhouse Assessment Partner, Ashby Assessments). */
  orders: OrdersDemoSummary;
  /** The customers connected through Kombo's unified ATS API (config/connections.kombo.json). */
  kombo: KomboDemoRun[];
}

export const DEMO_CANDIDATES = [
  { firstName: 'Ana', lastName: 'Ruiz', ai_match_score: 88, proctoring_violations: 0 },
  { firstName: 'Bram', lastName: 'de Vries', ai_match_score: 92, proctoring_violations: 0 },
  { firstName: 'Chen', lastName: 'Wang', ai_match_score: 61, proctoring_violations: 0 },
  { firstName: 'Dara', lastName: 'Okafor', ai_match_score: 79, proctoring_violations: 1 },
  { firstName: 'Elif', lastName: 'Yilmaz', ai_match_score: 45, proctoring_violations: 0 },
] as const;

const ADVANCE_STAGE = 'Hiring Manager Review';

export class DemoStepError extends Error {
  public constructor(
    public readonly step: string,
    public readonly detail: string,
  ) {
    super(`${step}: ${detail}`);
    this.name = 'DemoStepError';
  }
}

async function until<T>(
  step: string,
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  timeoutMs: number,
  everyMs = 200,
  halted?: AbortSignal,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (halted?.aborted) throw new DemoStepError(step, 'stopped: another step of this ATS failed');
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new DemoStepError(step, `not done after ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * The demo's reconciler schedule: its days are seconds, but the sandboxes' rate limits are the vendors' (Workable's
 * 10 requests per 10 s), so a run every 5 s, each sweeping a trigger at most every 15 s (DEMO_LIFECYCLE), leaves most
 * of each ATS's budget to the candidates' own work.
 */
export const RECONCILE_EVERY_MS = 5000;

interface SesStore {
  emails: { destination: { to: string[] }; subject?: string; body: { text?: string }; at: number }[];
}

/** How long the demo waits for the sweep to find the candidate whose stage change never came (foundBySweep). */
const SWEEP_WAIT_MS = 180_000;

/**
 * The demo's lifecycle, in seconds rather than days: `npm start` configures every trigger so. Each stage is swept at
 * most every 15 s, every third run of the demo's reconciler as on AWS (a run every 10 minutes, a sweep every 30): a
 * sweep every run found the same pending candidate again, with two of Workable's ten calls per 10 s each time.
 */
export const DEMO_LIFECYCLE = {
  status: 'tags',
  reminders: { afterHours: 0.001, max: 1 },
  expireAfterDays: 0.0003,
  sweepEveryMinutes: 0.25,
} as const;

const isReminder = (mail: SesStore['emails'][number]) => (mail.subject ?? '').startsWith('Reminder');

const emailOf = (kind: DirectAtsKind, firstName: string, lastName: string) =>
  `${firstName}.${lastName}+${kind}@candidates.example.com`.toLowerCase().replace(/\s+/g, '');

interface AtsDemoRun {
  kind: DirectAtsKind;
  connectionId: string;
  applications: { id: string }[];
  emails: string[];
  lost: { id: string; email: string };
  absent: { id: string; email: string; reminders: number; expiryNotes: number };
  left: { id: string; email: string };
}

/** One ATS's part of the demo: its sandbox, the e-mails SES holds, and how long a step may take. */
interface DemoAts {
  stack: LocalStack;
  kind: DirectAtsKind;
  ats: LocalStack['ats'][DirectAtsKind];
  log: (line: string) => void;
  sesStore: () => Promise<SesStore>;
  /** Waits for a step's outcome, as `until` (`withinMs`: its own bound), and stops once another group failed. */
  wait: <T>(step: string, read: () => Promise<T> | T, done: (value: T) => boolean, withinMs?: number) => Promise<T>;
}

/**
 * One ATS's demo: three groups of candidates side by side, as a recruiter's day mixes them (each group's steps wait
 * for their own outcomes, as a recruiter would see them, never for a time): five who take the interview, one whose
 * stage change never came, and two whose invitation goes on without them (one never takes it, one is rejected).
 */
async function runOnAts(
  stack: LocalStack,
  kind: DirectAtsKind,
  connectionId: string,
  log: (line: string) => void,
  timeoutMs: number,
): Promise<AtsDemoRun> {
  const sesStore = async () => (await (await fetch(`${stack.emulators.endpoints.ses}/store`)).json()) as SesStore;
  const halt = new AbortController();
  const wait: DemoAts['wait'] = (step, read, done, withinMs = timeoutMs) =>
    until(step, read, done, withinMs, 200, halt.signal);
  const demo: DemoAts = { stack, kind, ats: stack.ats[kind], log, sesStore, wait };
  // The stage change whose webhook never comes is made first, alone: no other group's webhook is dropped with it.
  const lost = await dropStageChange(demo);
  // The first group to fail stops the others' waits: the demo names that step, and nothing runs on after it.
  const group = async <T>(run: Promise<T>): Promise<T> => {
    try {
      return await run;
    } catch (error) {
      halt.abort();
      throw error;
    }
  };
  const [takers, , lifecycle] = await Promise.all([
    group(takeInterviews(demo)),
    group(foundBySweep(demo, lost)),
    group(goOn(demo)),
  ]);
  return { kind, connectionId, ...takers, lost, ...lifecycle };
}

/** Five candidates of one job move to "AI Interview"; each takes the interview from their e-mail. */
async function takeInterviews({ stack, kind, ats, log, sesStore, wait }: DemoAts) {
  const applications = DEMO_CANDIDATES.map((c) =>
    ats.addCandidate({ firstName: c.firstName, lastName: c.lastName, email: emailOf(kind, c.firstName, c.lastName) }),
  );
  for (const application of applications) {
    const deliveries = await ats.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const refused = deliveries.find((d) => d.status !== 200);
    if (refused)
      throw new DemoStepError(
        `${kind} stage-change webhook`,
        `the connector answered ${refused.status ?? refused.error}`,
      );
  }
  const emails = DEMO_CANDIDATES.map((c) => emailOf(kind, c.firstName, c.lastName));
  const store = await wait(`${kind} invites`, sesStore, (s) =>
    emails.every((e) => s.emails.some((m) => m.destination.to.includes(e))),
  );
  log(`  ${kind}: ${emails.length} invitations e-mailed; the candidates take their interviews`);
  DEMO_CANDIDATES.forEach((candidate, i) => {
    const mail = store.emails.find((m) => m.destination.to.includes(emails[i] as string));
    const interviewId = /\/invite\/([\w-]+)/.exec(mail?.body.text ?? '')?.[1];
    if (!interviewId)
      throw new DemoStepError(`${kind} invites`, `no interview link in the e-mail to ${candidate.firstName}`);
    stack.interview.completeInterview({
      interview_id: interviewId,
      candidate_name: `${candidate.firstName} ${candidate.lastName}`,
      candidate_email: emails[i] as string,
      ai_match_score: candidate.ai_match_score,
      proctoring_violations: candidate.proctoring_violations,
      delay_ms: 300,
    });
  });
  const reportNotes = () =>
    applications.flatMap((a) => ats.notesOf(a.id).filter((n) => n.includes('ai-interview-report:')));
  await wait(`${kind} write-back`, reportNotes, (notes) => notes.length >= applications.length);
  const expectedMoves = DEMO_CANDIDATES.filter((c) => c.ai_match_score >= 75 && c.proctoring_violations === 0).length;
  const moved = () => applications.filter((a) => ats.stageNameOf(a.id) === ADVANCE_STAGE).length;
  await wait(`${kind} stage moves`, moved, (n) => n >= expectedMoves);
  log(`  ${kind}: ${applications.length} reports written back, ${moved()} advanced`);
  return { applications, emails };
}

/** A candidate moved into the stage whose stage-change webhook is dropped. */
async function dropStageChange({ kind, ats }: DemoAts): Promise<{ id: string; email: string }> {
  const email = emailOf(kind, 'Finn', 'Lost');
  const lost = ats.addCandidate({ firstName: 'Finn', lastName: 'Lost', email });
  ats.setFaults({ dropStageChangeRate: 1 });
  const dropped = await ats
    .moveCandidate({ applicationId: lost.id, stageName: 'AI Interview' })
    .finally(() => ats.setFaults({ dropStageChangeRate: 0 }));
  if (!dropped.every((d) => d.dropped)) throw new DemoStepError(`${kind} dropped webhook`, 'a webhook was sent');
  return { id: lost.id, email };
}

/**
 * The demo's reconciler schedule (runDemo) sweeps the stage, finds the candidate and invites them; they take it. A
 * sweep's page waits for a free moment of the ATS's rate limit (shared/pipeline/sweep.use-case.ts), which Workable's
 * 10 calls per 10 s gives only once the other groups' work is done: up to SWEEP_WAIT_MS.
 */
async function foundBySweep({ stack, kind, log, sesStore, wait }: DemoAts, lost: { email: string }) {
  const found = await wait(
    `${kind} sweep`,
    async () => (await sesStore()).emails.find((m) => m.destination.to.includes(lost.email) && !isReminder(m)),
    (mail) => mail !== undefined,
    SWEEP_WAIT_MS,
  );
  stack.interview.completeInterview({
    interview_id: /\/invite\/([\w-]+)/.exec(found?.body.text ?? '')?.[1] as string,
    candidate_name: 'Finn Lost',
    candidate_email: lost.email,
    ai_match_score: 90,
    proctoring_violations: 0,
    delay_ms: 0,
  });
  log(`  ${kind}: a stage change whose webhook never came was found by the sweep; the candidate was invited`);
}

/**
 * A candidate who never takes the interview: reminded once, then the invitation expires; moved on and back into the
 * stage, they are invited once more and take it. Beside them, a candidate rejected right after their invitation:
 * never reminded, never expired, their status "cancelled".
 */
async function goOn({ stack, kind, ats, log, sesStore, wait }: DemoAts) {
  const absentEmail = emailOf(kind, 'Gil', 'Absent');
  const absent = ats.addCandidate({ firstName: 'Gil', lastName: 'Absent', email: absentEmail });
  const leftEmail = emailOf(kind, 'Hana', 'Left');
  const left = ats.addCandidate({ firstName: 'Hana', lastName: 'Left', email: leftEmail });
  await ats.moveCandidate({ applicationId: absent.id, stageName: 'AI Interview' });
  await ats.moveCandidate({ applicationId: left.id, stageName: 'AI Interview' });
  await wait(
    `${kind} invitation before the rejection`,
    async () => invitesTo(await sesStore(), leftEmail),
    (n) => n > 0,
  );
  await ats.changeLifecycle({ applicationId: left.id, action: 'reject' });
  const cancelled = () => ats.tagsOf(left.id).some((tag) => statusOfTag(tag) === 'cancelled');
  await wait(`${kind} rejection cancels the invitation`, cancelled, Boolean);
  log(`  ${kind}: a candidate rejected after their invitation shows "cancelled"; no reminder or expiry follows`);
  // The reminder and the expiry come from the reconciler's schedule too, in the demo's seconds.
  const expiryNote = () => ats.notesOf(absent.id).filter((n) => n.includes('AI interview not completed by'));
  await wait(`${kind} reminder and expiry`, expiryNote, (notes) => notes.length > 0);
  const reminders = (await sesStore()).emails.filter((m) => m.destination.to.includes(absentEmail) && isReminder(m));
  log(`  ${kind}: a candidate who never took the interview was reminded ${reminders.length}× and expired`);
  const expiryNotes = expiryNote().length;

  // The expired candidate is moved on, then back into the stage: one new invitation, which they take.
  await ats.moveCandidate({ applicationId: absent.id, stageName: ADVANCE_STAGE });
  await ats.moveCandidate({ applicationId: absent.id, stageName: 'AI Interview' });
  const again = await wait(
    `${kind} re-invitation`,
    async () => invitesTo(await sesStore(), absentEmail),
    (n) => n >= 2,
  );
  const second = (await sesStore()).emails.filter((m) => m.destination.to.includes(absentEmail) && !isReminder(m))[
    again - 1
  ];
  stack.interview.completeInterview({
    interview_id: /\/invite\/([\w-]+)/.exec(second?.body.text ?? '')?.[1] as string,
    candidate_name: 'Gil Absent',
    candidate_email: absentEmail,
    ai_match_score: 58,
    proctoring_violations: 0,
    delay_ms: 0,
  });
  const gilReport = () => ats.notesOf(absent.id).filter((n) => n.includes('ai-interview-report:'));
  await wait(`${kind} report after the re-invitation`, gilReport, (notes) => notes.length > 0);
  log(`  ${kind}: moved back into the stage after expiring, the candidate was invited once more and took it`);
  return {
    absent: { id: absent.id, email: absentEmail, reminders: reminders.length, expiryNotes },
    left: { id: left.id, email: leftEmail },
  };
}

/** The invitations (not reminders) SES holds for one address. */
const invitesTo = (store: SesStore, address: string) =>
  store.emails.filter((m) => m.destination.to.includes(address) && !isReminder(m)).length;

/** The bytes a sandbox serves at `url`, saved at `path` (relative to here when under it). */
async function saveCopy(url: string, path: string): Promise<{ url: string; saved: string }> {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, Buffer.from(await (await fetch(url)).arrayBuffer()));
  return { url, saved: relative(process.cwd(), path) || path };
}

/**
 * The reminders begun on the five takers' invitations after the connector heard of their reports: the report's webhook
 * marks the invitation before it answers (shared/pipeline/interview-taken.ts), and no reminder begins past that mark.
 * One begun before it is the race no connector closes (the candidate finished while it was on its way), however late
 * its e-mail goes out on a busy machine; it is not counted.
 */
async function remindersAfterTaking(stack: LocalStack, run: AtsDemoRun): Promise<number> {
  const { reports, deliveries } = stack.interview.state;
  let late = 0;
  for (const [i, application] of run.applications.entries()) {
    const theirs = new Set(reports.filter((r) => r.candidate_email_id === run.emails[i]).map((r) => r.report_id));
    const answered = deliveries.flatMap((d) => (theirs.has(d.report_id) && d.answeredAtMs ? [d.answeredAtMs] : []));
    const heardAt = Math.min(...answered);
    const { Items = [] } = await stack.dynamo.send(
      new QueryCommand({
        TableName: stack.tables.applications,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': `${run.connectionId}#${application.id}` }),
        ConsistentRead: true,
      }),
    );
    for (const record of Items.map((item) => toApplication(unmarshall(item))))
      late += Object.entries(record.steps).filter(
        ([name, step]) => /^reminder\d+$/.test(name) && (step?.startedAt ?? 0) > heardAt,
      ).length;
  }
  return late;
}

/** What one ATS and the e-mails show once the pipeline is quiet. */
async function summarise(stack: LocalStack, run: AtsDemoRun): Promise<AtsDemoSummary> {
  const ats = stack.ats[run.kind];
  const callsByRoute = ats.requests();
  const atsCalls = Object.values(callsByRoute).reduce((sum, n) => sum + n, 0);
  const connection = stack.connections.find((c) => c.id === run.connectionId);
  const rate = connection && connectionRate(connection);
  const { emails } = (await (await fetch(`${stack.emulators.endpoints.ses}/store`)).json()) as SesStore;
  const to = (address: string) => emails.filter((m) => m.destination.to.includes(address));
  const reportNotes = run.applications.flatMap((a) =>
    ats.notesOf(a.id).filter((n) => n.includes('ai-interview-report:')),
  );
  const files = run.applications.flatMap((a) =>
    ats.filesOf(a.id).filter((f) => f.name.startsWith('AI interview report ')),
  );
  const statuses: Record<string, number> = {};
  for (const application of [...run.applications, run.lost, run.absent, run.left])
    for (const tag of ats.tagsOf(application.id)) {
      // Keyed by the status, whichever way the ATS spells its tag (Workable's single tokens).
      const status = statusOfTag(tag) ?? tag;
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  return {
    // The stage trigger's interview; an order's test has its own (`…/orders/order-<test>`).
    interviewsCreated: stack.interview.state.interviews.filter(
      (i) => i.interview_name.includes(`(ref ${run.connectionId}/`) && !i.interview_name.includes('/orders/'),
    ).length,
    invitesSent: run.emails.reduce((sum, e) => sum + to(e).filter((m) => !isReminder(m)).length, 0),
    reportsWrittenBack: reportNotes.length,
    stageMoves: run.applications.filter((a) => ats.stageNameOf(a.id) === ADVANCE_STAGE).length,
    flaggedForReview: reportNotes.filter((n) => n.includes('Flagged for review')).length,
    foundBySweep: to(run.lost.email).filter((m) => !isReminder(m)).length,
    // As they stood before the candidate came back into the stage (their second invitation is taken at once).
    remindersSent: run.absent.reminders,
    remindedAfterTaking: await remindersAfterTaking(stack, run),
    expired: run.absent.expiryNotes,
    leftNotContacted:
      to(run.left.email).length === 1 &&
      !ats.notesOf(run.left.id).some((n) => n.includes('AI interview not completed by'))
        ? 1
        : 0,
    reinvited: to(run.absent.email).filter((m) => !isReminder(m)).length - 1,
    statuses,
    reportFiles: files.length,
    reportFile:
      files[0] && (await saveCopy(files[0].url, join(dirname(stack.stackFile), 'report-files', `${run.kind}.pdf`))),
    atsCalls,
    secondsAtRate: rate && Math.round((atsCalls * rate.windowMs) / rate.limit / 1000),
    callsByRoute,
    example: run.applications[0] && { connectionId: run.connectionId, applicationId: run.applications[0].id },
  };
}

/** The demo on every connection of the local config, all ATSs at once. */
export async function runDemo(
  stack: LocalStack,
  log: (line: string) => void = console.log,
  timeoutMs = 90_000,
): Promise<DemoSummary> {
  // The four ATSs' own connections; the customers through Kombo have lines of their own (demo-kombo.ts).
  const atsNames = [...new Set(stack.connections.map((c) => c.ats).filter((kind) => kind !== 'kombo'))].join(', ');
  log(`Moving ${DEMO_CANDIDATES.length} candidates to "AI Interview" in ${atsNames}…`);
  const schedule = reconcileSchedule(stack);
  let runs: AtsDemoRun[];
  let orders: OrdersDemoSummary;
  let kombo: KomboDemoRun[];
  try {
    const waitFor = <T>(step: string, read: () => Promise<T> | T, done: (value: T) => boolean) =>
      until(step, read, done, timeoutMs);
    const direct = stack.connections.filter((c) => c.ats !== 'kombo');
    [orders, kombo, ...runs] = await Promise.all([
      runOrders(stack, log, waitFor),
      runKomboDemo(stack, log, waitFor),
      ...direct.map((c) => runOnAts(stack, c.ats as DirectAtsKind, c.id, log, timeoutMs)),
    ]);
  } catch (error) {
    // A step that did not come says what the pipeline still holds, and why, beside its name.
    if (!(error instanceof DemoStepError)) throw error;
    const depths = await stack.queueDepths();
    const left = stack.watch.describeUnfinished().map((line) => `\n  - ${line}`);
    throw new DemoStepError(
      error.step,
      `${error.detail} (queued: stage ${depths.stage}, report ${depths.report})${left.join('')}`,
    );
  } finally {
    await schedule.stop();
  }
  // Everything each step waited for has happened; what is left (the last statuses) drains, and a last run of the
  // reconciler finds nothing more to do.
  log('Every step done; waiting for the queues to drain, then a last reconciler run…');
  await stack.waitForQuiet(timeoutMs);
  const last = await stack.reconcileNow();
  if (last.enqueued + last.swept + last.followUps > 0)
    throw new DemoStepError(
      'the last reconciler run',
      `it enqueued ${last.enqueued} reports, ${last.swept} stage changes and ${last.followUps} follow-ups`,
    );
  await stack.waitForQuiet(timeoutMs);
  log('Quiet: the last reconciler run found nothing left to do');
  const dlq = await stack.dlqDepths();
  const summaries = await Promise.all(runs.map(async (run) => [run.kind, await summarise(stack, run)] as const));
  // Every call of the run (the doctor's at the start too) is held against the routes its vendor documents.
  const undocumented = [
    ...runs.flatMap((run) => undocumentedCalls(run.kind, stack.ats[run.kind].calls())),
    ...stack.kombo.undocumented.map((call) => `kombo: ${call}`),
  ];
  return {
    byAts: Object.fromEntries(summaries),
    dlqDepth: dlq.stage + dlq.report,
    undocumentedCalls: undocumented,
    orders,
    kombo,
  };
}

/** The reconciler every `RECONCILE_EVERY_MS` while the demo runs, as its schedule would run it. */
function reconcileSchedule(stack: LocalStack): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = stack.reconcileNow().catch((error: unknown) => console.error(`reconciler: ${errorMessage(error)}`));
  }, RECONCILE_EVERY_MS);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export function formatSummary(summary: DemoSummary): string {
  const kinds = Object.keys(summary.byAts) as DirectAtsKind[];
  const rows: [string, Exclude<keyof AtsDemoSummary, 'statuses' | 'reportFile' | 'callsByRoute' | 'example'>][] = [
    ['interviews created', 'interviewsCreated'],
    ['invites sent', 'invitesSent'],
    ['reports written back', 'reportsWrittenBack'],
    ['report files attached', 'reportFiles'],
    ['stage moves (advanced)', 'stageMoves'],
    ['flagged for review', 'flaggedForReview'],
    ['found by the sweep', 'foundBySweep'],
    ['reminders sent', 'remindersSent'],
    ['expired', 'expired'],
    ['left, not contacted', 'leftNotContacted'],
    ['re-invited on re-entry', 'reinvited'],
    ['ATS calls', 'atsCalls'],
    ['seconds at its rate', 'secondsAtRate'],
  ];
  const statuses = [...new Set(kinds.flatMap((k) => Object.keys(summary.byAts[k]?.statuses ?? {})))].sort();
  const width = 22;
  const cell = (text: string | number) => String(text).padStart(11);
  const line = `+-${'-'.repeat(width)}-${kinds.map(() => '+-------------').join('')}+`;
  const header = `| ${''.padEnd(width)} ${kinds.map((k) => `| ${cell(k)} `).join('')}|`;
  const body = rows.map(
    ([label, key]) =>
      `| ${label.padEnd(width)} ${kinds.map((k) => `| ${cell(summary.byAts[k]?.[key] ?? '-')} `).join('')}|`,
  );
  const statusRows = statuses.map(
    (status) =>
      `| ${`status: ${status.replace(' for review', '')}`.padEnd(width)} ` +
      `${kinds.map((k) => `| ${cell(summary.byAts[k]?.statuses[status] ?? 0)} `).join('')}|`,
  );
  const calls = `ATS and Kombo calls outside the vendors' documented routes: ${summary.undocumentedCalls.length}`;
  return [
    line,
    header,
    line,
    ...body,
    ...statusRows,
    line,
    ...kinds.flatMap((k) => {
      const file = summary.byAts[k]?.reportFile;
      return file ? [`a report file on ${k}: ${file.saved} (served at ${file.url} while the stack runs)`] : [];
    }),
    ...formatExample(summary.byAts),
    ...formatSlowest(summary.byAts),
    ...formatOrders(summary.orders),
    ...formatKombo(summary.kombo),
    `messages in the DLQs: ${summary.dlqDepth}`,
    calls,
  ].join('\n');
}

/** Where a person looks at one candidate's story next: the operator's status command, and the console's page. */
function formatExample(byAts: DemoSummary['byAts']): string[] {
  const example = Object.values(byAts).find((result) => result.example)?.example;
  if (!example) return [];
  const { connectionId, applicationId } = example;
  return [
    `one candidate's steps: npm run ops -- status --connection ${connectionId} --application ${applicationId} ` +
      `(while it serves; the console: #/candidates/${connectionId}/${applicationId})`,
  ];
}

/** The ATS whose calls take longest at its rate limit, its calls by route: the floor of the run's length. */
function formatSlowest(byAts: DemoSummary['byAts']): string[] {
  const found = Object.entries(byAts)
    .filter(([, result]) => result.secondsAtRate !== undefined)
    .sort(([, a], [, b]) => (b.secondsAtRate ?? 0) - (a.secondsAtRate ?? 0))[0];
  if (!found) return [];
  const [kind, slowest] = found;
  const routes = Object.entries(slowest.callsByRoute)
    .sort(([, a], [, b]) => b - a)
    .map(([route, calls]) => `${route} ${calls}`);
  return [`${kind}'s ${slowest.atsCalls} calls take ${slowest.secondsAtRate} s at its rate: ${routes.join(', ')}`];
}

/** What `npm start -- --once` requires on every ATS; the first miss names the ATS and the step. */
export function checkSummary(summary: DemoSummary, candidates = DEMO_CANDIDATES.length): string | undefined {
  for (const [kind, result] of Object.entries(summary.byAts)) {
    if (result.interviewsCreated !== 1)
      return `${kind} interview creation: expected 1 interview, got ${result.interviewsCreated}`;
    if (result.invitesSent !== candidates) return `${kind} invites: expected ${candidates}, got ${result.invitesSent}`;
    if (result.reportsWrittenBack !== candidates)
      return `${kind} write-back: expected ${candidates} notes, got ${result.reportsWrittenBack}`;
    if (result.reportFiles !== candidates)
      return `${kind} report files: expected ${candidates}, got ${result.reportFiles}`;
    if (result.foundBySweep !== 1) return `${kind} sweep: expected 1 invitation, got ${result.foundBySweep}`;
    if (result.remindersSent !== 1) return `${kind} reminders: expected 1, got ${result.remindersSent}`;
    if (result.remindedAfterTaking !== 0)
      return `${kind} reminders: ${result.remindedAfterTaking} sent to candidates who had taken the interview`;
    if (result.expired !== 1) return `${kind} expiry: expected 1 note, got ${result.expired}`;
    if (result.leftNotContacted !== 1) return `${kind} rejected candidate: contacted again after the rejection`;
    if (result.reinvited !== 1) return `${kind} re-entry: expected 1 new invitation, got ${result.reinvited}`;
    if (result.statuses.cancelled !== 1) return `${kind} rejected candidate: the status does not show "cancelled"`;
    const tagged = Object.values(result.statuses).reduce((sum, n) => sum + n, 0);
    if (tagged !== candidates + 3) return `${kind} statuses: expected ${candidates + 3} tagged, got ${tagged}`;
  }
  const orders = checkOrders(summary.orders);
  if (orders) return orders;
  const kombo = checkKombo(summary.kombo);
  if (kombo) return kombo;
  if (summary.dlqDepth !== 0) return `dead-letter queues: ${summary.dlqDepth} messages`;
  if (summary.undocumentedCalls.length) return `undocumented ATS calls: ${summary.undocumentedCalls.join('; ')}`;
  return undefined;
}
