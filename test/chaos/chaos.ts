import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { startLocalStack, type LocalRuntime, type LocalStack } from '../../infra/local/local-stack';
import { seededRandom } from '../../infra/local/sandbox/http-kit';
import type { DirectAtsKind } from '../../shared/config';
import { faultInjection, SimulatedCrash, type SideEffectPoint } from '../../shared/pipeline/fault-injection';
import { checkLocalCalls } from '../helpers/iam';
import { statusOfTag } from '../../shared/pipeline/status';
import { undocumentedCalls } from '../../infra/local/sandbox/documented-routes';
import { checkOrders, keptCancelled, orderRecords, placeOrders, takeOrderedInterviews } from './chaos-orders';
import {
  checkLifecycle,
  entriesOf,
  leaveAndUndo,
  pickLifecycleRoles,
  reenter,
  unseenExit,
  writtenBackStatuses,
} from './chaos-lifecycle';
import {
  checkKombo,
  describeKomboFaults,
  komboConnections,
  komboResiduals,
  moveKomboCandidates,
  takeKomboInterviews,
} from './chaos-kombo';
import type { KomboRoles } from './chaos-kombo';

export interface ChaosOptions {
  candidates: number;
  seed: number;
  /** Share of API requests each sandbox answers 429 (with Retry-After), 500, or too late for the client. */
  rate429: number;
  rate500: number;
  slowRate: number;
  /** Share of the service's report webhooks never sent. */
  dropReportRate: number;
  /** Share of reports the service serves with documented-nullable fields null and optional ones missing. */
  sparseReportRate: number;
  /** The most items the service puts on a page whatever `limit` asked (0: no cap). */
  maxPageSize: number;
  /**
   * The ATSs whose connections invite per candidate: each candidate gets their own link and id from the service,
   * and a fifth of them type another e-mail address when they take the interview. The others share one link.
   */
  perCandidateInvites: readonly DirectAtsKind[];
  /** Chance that a worker crashes right after a given side effect, before recording it (once per side effect). */
  crashRate: number;
  /** Share of SQS batches handed to two workers at once. */
  duplicateDeliveryRate: number;
  /**
   * Share of worker invocations that start with only `shortDeadlineMs` left: the sandboxes' slow answers (1 s)
   * then straddle the deadline, which must leave the work retryable, never failed.
   */
  shortDeadlineRate: number;
  shortDeadlineMs: number;
  /** Reports of candidates no ATS knows (must end up unmatched, with a reason). */
  strangers: number;
  /** Share of recruiters' stage changes whose webhook is never sent: the sweep must invite each of them. */
  dropStageChangeRate: number;
  /** Share of invited candidates who never take the interview: each reminded once and expired once. */
  noShowRate: number;
  /**
   * Share of the other invited candidates rejected or withdrawn before they take it (a third of those webhooks lost),
   * four in ten of them unrejected a few seconds later; half the non-completers enter the stage again once expired.
   */
  leaveRate: number;
  /** Assessments ordered from inside the ATS (a third each: Greenhouse Send Test, Ashby Start Assessment, Kombo). */
  orders: number;
  /**
   * Candidates of the two Kombo-connected tools (test/chaos/chaos-kombo.ts): stage entries seen only through Kombo's
   * synced copy, its hints dropped and duplicated, its writes past the concurrency limit, answers lost.
   */
  komboCandidates: number;
  timeoutMs: number;
  /**
   * The queues' visibility timeout, after which a failed message is received again: by default 6 × the functions'
   * 3-s timeout, as the stack sets it on AWS. A shorter one (never under the timeout) retries the same way, sooner.
   */
  visibilityTimeoutSeconds?: number;
  workDir: string;
  /** The functions in their own execution environments (the default), or all in this process (debugging). */
  runtime?: LocalRuntime;
  progress: (line: string) => void;
}

export const CHAOS_DEFAULTS: Omit<ChaosOptions, 'progress'> = {
  candidates: 500,
  seed: 20261121,
  rate429: 0.1,
  rate500: 0.05,
  slowRate: 0.03,
  dropReportRate: 0.2,
  sparseReportRate: 0.15,
  maxPageSize: 10,
  perCandidateInvites: [],
  crashRate: 0.25,
  duplicateDeliveryRate: 0.1,
  shortDeadlineRate: 0.1,
  shortDeadlineMs: 1200,
  strangers: 10,
  dropStageChangeRate: 0.15,
  noShowRate: 0.1,
  leaveRate: 0.06,
  orders: 40,
  komboCandidates: 40,
  timeoutMs: 15 * 60_000,
  workDir: '.local/chaos',
};

export interface Invariant {
  name: string;
  checked: number;
  violations: number;
  detail: string[];
}

export interface ChaosReport {
  options: Omit<ChaosOptions, 'progress'>;
  invariants: Invariant[];
  crashes: Record<SideEffectPoint, number>;
  residuals: { name: string; count: number; meaning: string }[];
  dlq: { queue: string; kind: string; reason: string }[];
  logLines: number;
  logLeaks: string[];
  elapsedMs: number;
  /** Each function's execution environments: cold starts and invocations past the timeout. */
  functions: LocalStack['functions'];
}

const ADVANCE_STAGE = 'Hiring Manager Review';
const JOBS: Record<DirectAtsKind, string[]> = {
  greenhouse: ['3301', '3302'],
  ashby: ['4071538b-backend'],
  lever: ['posting-backend-01', 'posting-data-02'],
  workable: ['GROOV005'],
};

interface Candidate {
  kind: DirectAtsKind;
  applicationId: string;
  email: string;
  name: string;
}

async function scan(stack: LocalStack, table: string): Promise<Record<string, any>[]> {
  const items: Record<string, any>[] = [];
  let start: Record<string, any> | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await stack.dynamo.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
    items.push(...(result.Items ?? []).map((i) => unmarshall(i)));
    start = result.LastEvaluatedKey;
    if (!start) break;
  }
  return items;
}

/** Webhooks, the reconciler and the deferrals together: a report's write-back costs about one message. */
const MAX_REPORT_MESSAGES_PER_REPORT = 1.2;

/** Checks in a row that find the pipeline idle before a phase stops waiting for what can no longer come. */
const SETTLED_CHECKS = 3;

/**
 * Polls `check` once a second until it is done. When `settled` says three times in a row that nothing is left
 * to happen (no message queued, delayed or in flight), the phase ends undone and the invariants report what
 * is missing and why (a message in a DLQ, say) instead of a timeout.
 */
async function until(
  what: string,
  check: () => Promise<[done: boolean, status: string]>,
  deadline: number,
  progress: (line: string) => void,
  tick?: () => Promise<void>,
  settled?: () => Promise<boolean>,
): Promise<void> {
  let last = 0;
  let idle = 0;
  for (;;) {
    const [done, status] = await check();
    if (Date.now() - last > 5000 || done) {
      progress(`${what}: ${status}`);
      last = Date.now();
    }
    if (done) return;
    idle = settled && (await settled()) ? idle + 1 : 0;
    if (idle >= SETTLED_CHECKS) {
      progress(`${what}: ${status}; the pipeline is idle, so no more will come: checking the invariants`);
      return;
    }
    if (Date.now() > deadline) {
      // Out of time: the invariants still say what is missing and why, and the table prints.
      progress(`${what}: ${status}; not done in time: checking the invariants`);
      return;
    }
    await tick?.();
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * Captures every line written to stdout and stderr while the run lasts (Powertools writes INFO to stdout and
 * WARN/ERROR to stderr). Log lines are the JSON ones; the local event source's own lines are scanned too.
 */
function captureOutput(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((stream) => stream.write.bind(stream));
  streams.forEach((stream, i) => {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = String(chunk);
      lines.push(...text.split('\n').filter(Boolean));
      // The functions' JSON log lines are kept for the scan, not echoed: thousands of them would bury the table.
      if (text.trimStart().startsWith('{"level"')) return true;
      return (originals[i] as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
  });
  return {
    lines,
    restore: () => {
      for (const [i, stream] of streams.entries()) stream.write = originals[i] as typeof stream.write;
    },
  };
}

/**
 * The connector under every fault at once, on the real local services: then the invariants are checked from
 * what the ATS sandboxes, the interview service, SES and the mapping tables hold.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const random = seededRandom(options.seed);
  const crashes: Record<SideEffectPoint, number> = {
    'interview-created': 0,
    'service-invited': 0,
    'invite-emailed': 0,
    'invite-note-posted': 0,
    'report-link-attached': 0,
    'report-note-posted': 0,
    'report-attached': 0,
    'stage-moved': 0,
    'reminder-emailed': 0,
    'expiry-note-posted': 0,
    'failure-note-posted': 0,
    'status-shown': 0,
    'order-announced': 0,
  };
  const crashed = new Set<string>();
  faultInjection.afterSideEffect = (point, key) => {
    if (crashed.has(`${point}|${key}`)) return;
    crashed.add(`${point}|${key}`);
    if (random() < options.crashRate) {
      crashes[point]++;
      throw new SimulatedCrash(point);
    }
  };

  mkdirSync(options.workDir, { recursive: true });
  const configPath = join(options.workDir, 'connections.template.json');
  const template = JSON.parse(readFileSync('config/connections.local.json', 'utf8')) as {
    connections: Record<string, any>[];
  };
  if (options.komboCandidates > 0) template.connections.push(...komboConnections());
  for (const connection of template.connections) {
    connection.interviewService.timeoutMs = 700;
    connection.atsTimeoutMs = 700;
    if (options.perCandidateInvites.includes(connection.ats))
      connection.interviewService.invites = { mode: 'per-candidate' };
    // The status as tags; one reminder after 30 s and the expiry after about 100 s: the run's compressed days.
    connection.writeBack = { ...connection.writeBack, status: 'tags' };
    for (const trigger of connection.triggers) {
      trigger.reminders = { afterHours: 30 / 3600, max: 1 };
      trigger.expireAfterDays = 100 / 86_400;
    }
    // Ordered assessments expire as the invitations do, counted from the order: their invitations queue behind the
    // stage flow's, so the window grows with the run (half a second a candidate) for the takers to take them first.
    for (const source of Object.values(connection.orders ?? {}) as { tests: Record<string, any>[] }[])
      for (const test of source.tests) test.expireAfterDays = (100 + options.candidates / 2) / 86_400;
  }
  writeFileSync(configPath, JSON.stringify(template));

  const capture = captureOutput();
  let stack: LocalStack | undefined;
  try {
    stack = await startLocalStack({
      configPath,
      workDir: options.workDir,
      functionTimeoutMs: 3000,
      ...(options.visibilityTimeoutSeconds ? { visibilityTimeoutSeconds: options.visibilityTimeoutSeconds } : {}),
      reconcileIntervalMs: 0,
      reportDelayMs: 0,
      runtime: options.runtime ?? 'environments',
      duplicateDeliveryRate: options.duplicateDeliveryRate,
      shortDeadline: { rate: options.shortDeadlineRate, remainingMs: options.shortDeadlineMs },
      atsRateLimits: { greenhouse: 100_000, ashby: 100_000, lever: 100_000, workable: 100_000 },
      logLevel: 'INFO',
      recordAwsCalls: true,
    });
    const s = stack;
    const faults = { rate429: options.rate429, rate500: options.rate500, slowRate: options.slowRate, slowMs: 1000 };
    s.interview.setFaults({
      ...faults,
      retryAfterSeconds: 1,
      dropWebhookRate: options.dropReportRate,
      sparseReportRate: options.sparseReportRate,
      maxPageSize: options.maxPageSize,
    });
    for (const ats of Object.values(s.ats))
      ats.setFaults({ ...faults, dropStageChangeRate: options.dropStageChangeRate });

    // Candidates across every ATS and several jobs; each stage change delivered two or three times, concurrently.
    const kinds = Object.keys(s.ats) as DirectAtsKind[];
    const candidates: Candidate[] = [];
    for (let i = 0; i < options.candidates; i++) {
      const kind = kinds[i % kinds.length] as DirectAtsKind;
      const jobs = JOBS[kind];
      const name = `Chaos${i} Candidate${i}`;
      const email = `chaos-${i}+${kind}@candidates.example.com`;
      const application = s.ats[kind].addCandidate({
        firstName: `Chaos${i}`,
        lastName: `Candidate${i}`,
        email,
        jobId: jobs[Math.floor(i / kinds.length) % jobs.length],
      });
      candidates.push({ kind, applicationId: application.id, email, name });
    }
    const dropped = new Set<string>();
    for (let i = 0; i < candidates.length; i += 25) {
      await Promise.all(
        candidates.slice(i, i + 25).map(async (c) => {
          const deliveries = await s.ats[c.kind].moveCandidate({
            applicationId: c.applicationId,
            stageName: 'AI Interview',
            repeat: 2 + Math.floor(random() * 2),
          });
          if (deliveries.every((d) => d.dropped)) dropped.add(c.applicationId);
        }),
      );
    }
    for (const ats of Object.values(s.ats)) ats.setFaults({ dropStageChangeRate: 0 });
    const kombo = moveKomboCandidates(s, options.komboCandidates);
    const byKombo = new Set(kombo.map((c) => c.applicationId));
    const komboRecords = async () =>
      (await scan(s, s.tables.applications)).filter((r) => byKombo.has(r.atsApplicationId));
    // Recruiters order the assessment from inside Greenhouse, Ashby and (through Kombo) other ATSs, each order sent
    // more than once.
    // Kombo: one write at a time per integration, each slow (a second one meets the 429, a wait), and a quarter of
    // the results' answers lost after Kombo took them.
    s.kombo.concurrencyLimit = 1;
    s.kombo.writeDelayMs = 400;
    s.kombo.lostAnswerRate = 0.25;
    s.kombo.random = random;
    const ordered = await placeOrders(s, options.orders, random, options.noShowRate);
    // Until the last order's expiry is due (as the invitations' below), an idle pipeline is only waiting for it.
    const ordersExpiryDue = Date.now() + (100 + options.candidates / 2) * 1000 + 10_000;
    options.progress(
      `${ordered.length} assessments ordered from inside Greenhouse, Ashby and Kombo, each more than once`,
    );
    // Some deliveries again later, out of order with everything sent since.
    for (const c of candidates.filter(() => random() < 0.1)) await s.ats[c.kind].resendStageChange(c.applicationId);
    options.progress(
      `${candidates.length} candidates moved; deliveries sent ${candidates.length * 2}+ times; ` +
        `${dropped.size} stage changes never sent (the sweep must find them)`,
    );
    // The reconciler's schedule, compressed: reports whose webhook never came, stage changes the sweep finds,
    // reminders and expiries. The pipeline has settled when it is idle and a whole run found nothing more to
    // enqueue: a run that failed, or left a list unread (a 429, a backlog it yielded to), found nothing yet.
    let lastReconcile = 0;
    let lastEnqueued = Number.POSITIVE_INFINITY;
    const reconcile = async (everyMs: number): Promise<void> => {
      if (Date.now() - lastReconcile <= everyMs) return;
      lastReconcile = Date.now();
      lastEnqueued = await s.reconcileNow().then(
        (r) =>
          r.failed.length + r.unfinished.length + r.notStarted.length
            ? Number.POSITIVE_INFINITY
            : r.enqueued + r.swept + r.followUps,
        () => Number.POSITIVE_INFINITY,
      );
    };
    const settled = async () => lastEnqueued === 0 && (await s.isQuiet());

    const byApplication = new Map(candidates.map((c) => [c.applicationId, c]));
    await until(
      'invites',
      async () => {
        const records = (await scan(s, s.tables.applications)).filter((r) => byApplication.has(r.atsApplicationId));
        const invited = records.filter((r) => r.state !== 'claimed').length;
        return [invited >= candidates.length, `${invited}/${candidates.length}`];
      },
      deadline,
      options.progress,
      () => reconcile(4000),
      settled,
    );

    const scanTable = (table: string) => scan(s, table);
    const orderInvited = (r: Record<string, any>) => !['received', 'interview_created'].includes(r.state);
    await until(
      'order invitations',
      async () => {
        const invited = (await scanTable(s.tables.orders)).filter(orderInvited).length;
        return [invited >= ordered.length, `${invited}/${ordered.length}`];
      },
      deadline,
      options.progress,
      () => reconcile(4000),
      settled,
    );
    await takeOrderedInterviews(s, ordered, await orderRecords(scanTable, s), random);

    // Every invited candidate takes the interview; a few strangers take one too. An application with no interview
    // (never invited in time) has none to take: the invariants below say why.
    const records = (await scan(s, s.tables.applications)).filter(
      (r) => byApplication.has(r.atsApplicationId) && r.interviewId !== undefined,
    );
    const expected = new Map<string, { applicationId: string; kind: DirectAtsKind; connectionId: string }>();
    const noShows = new Set<string>();
    // Some never take the interview: reminded once, then their invitation expires.
    for (const record of records) if (random() < options.noShowRate) noShows.add(record.atsApplicationId);
    const roles = pickLifecycleRoles(
      records.map((r) => r.atsApplicationId as string).filter((id) => !noShows.has(id)),
      [...noShows],
      options.leaveRate,
      random,
    );
    /** The candidate takes the interview their record invites them to; its report is expected written back. */
    const take = (record: Record<string, any>) => {
      const candidate = byApplication.get(record.atsApplicationId) as Candidate;
      // A per-candidate link carries the candidate's id; some candidates type another address on it.
      const typedOther = options.perCandidateInvites.includes(candidate.kind) && random() < 0.2;
      const { report_id } = s.interview.completeInterview({
        interview_id: record.interviewId,
        candidate_id: record.serviceCandidateId,
        candidate_name: candidate.name,
        candidate_email: typedOther ? `other.${candidate.email}` : candidate.email,
        ai_match_score: Math.round(40 + random() * 60),
        proctoring_violations: random() < 0.2 ? 1 : 0,
        delay_ms: 0,
      });
      expected.set(report_id, {
        applicationId: record.atsApplicationId,
        kind: candidate.kind,
        connectionId: record.connectionId,
      });
    };
    for (const record of records)
      if (!noShows.has(record.atsApplicationId) && !roles.leavers.has(record.atsApplicationId)) take(record);
    // The leavers leave instead (some of their webhooks lost); some are unrejected and carry on as non-completers.
    const exits = await leaveAndUndo(s, candidates, roles, random);
    for (const id of roles.undone) noShows.add(id);
    options.progress(
      `${roles.leavers.size} candidates left the process after their invitation ` +
        `(${exits.lost.size} of those webhooks lost), ${roles.undone.size} came back`,
    );
    const strangers: { reportId: string; connectionId: string }[] = [];
    // Strangers take an interview someone was invited to; with no invitation at all there is none to take.
    for (let i = 0; i < (records.length ? options.strangers : 0); i++) {
      const record = records[i % records.length] as Record<string, any>;
      const { report_id } = s.interview.completeInterview({
        interview_id: record.interviewId,
        candidate_name: 'Nobody Known',
        candidate_email: `stranger-${i}@nowhere.example.com`,
        delay_ms: 0,
      });
      strangers.push({ reportId: report_id, connectionId: record.connectionId });
    }
    options.progress(
      `${expected.size} interviews completed (+${strangers.length} by strangers); ` +
        `${Math.round(options.dropReportRate * 100)}% of report webhooks dropped`,
    );
    // Kombo's candidates once the direct ATSs' have taken theirs: a slow Kombo never holds back their lifecycle.
    await until(
      'Kombo invites',
      async () => {
        const invited = (await komboRecords()).filter((r) => r.state !== 'claimed').length;
        return [invited >= kombo.length, `${invited}/${kombo.length}`];
      },
      deadline,
      options.progress,
      () => reconcile(4000),
      settled,
    );

    // The Kombo candidates' roles from a stream of their own: the run's stream is drawn from as the run's timing goes.
    const komboRoles: KomboRoles = takeKomboInterviews(s, kombo, await komboRecords(), {
      random: seededRandom(options.seed + 1),
      noShowRate: options.noShowRate,
    });
    options.progress(
      `Kombo: ${komboRoles.reports.size} interviews completed, ${komboRoles.noShows.size} never taken, ` +
        `${komboRoles.decliners.size} declined in the ATS`,
    );

    /** Waits until `total` items of `table` match, reconciling every `reconcileMs` meanwhile, or the pipeline idles. */
    const untilCounted = (
      what: string,
      count: { table: string; match: (item: Record<string, any>) => boolean; total: number },
      reconcileMs: number,
      idle: () => Promise<boolean> = settled,
    ) =>
      until(
        what,
        async () => {
          const done = (await scan(s, count.table)).filter(count.match).length;
          return [done >= count.total, `${done}/${count.total}`];
        },
        deadline,
        options.progress,
        () => reconcile(reconcileMs),
        idle,
      );
    const written = (r: Record<string, any>) => r.state === 'written_back' && expected.has(r.reportId);
    await untilCounted('write-backs', { table: s.tables.applications, match: written, total: expected.size }, 4000);
    const komboWritten = (r: Record<string, any>) => r.state === 'written_back' && komboRoles.reports.has(r.reportId);
    await untilCounted(
      'Kombo write-backs',
      { table: s.tables.applications, match: komboWritten, total: komboRoles.reports.size },
      4000,
    );
    const parked = (e: Record<string, any>) =>
      strangers.some((x) => e.pk === `unmatched#${x.connectionId}#${x.reportId}`);
    await untilCounted('strangers parked', { table: s.tables.events, match: parked, total: strangers.length }, 0);
    // Until the last invitation's expiry is due, an idle pipeline is only waiting for it.
    const expiryDue = Date.now() + 110_000;
    const expired = (r: Record<string, any>) =>
      noShows.has(r.atsApplicationId) && r.state === 'expired' && r.steps?.expiryNote?.doneAt !== undefined;
    await untilCounted(
      'expiries of those who never took the interview',
      { table: s.tables.applications, match: expired, total: noShows.size },
      3000,
      async () => Date.now() > expiryDue && (await settled()),
    );
    const komboEnded = (r: Record<string, any>) =>
      (komboRoles.noShows.has(r.atsApplicationId) && r.state === 'expired' && r.steps?.expiryNote?.doneAt) ||
      (komboRoles.decliners.has(r.atsApplicationId) && r.state === 'left');
    await untilCounted(
      'Kombo expiries and exits',
      { table: s.tables.applications, match: komboEnded, total: komboRoles.noShows.size + komboRoles.decliners.size },
      3000,
      async () => Date.now() > expiryDue && (await settled()),
    );
    // A leaver whose exit the connector cannot know (lost, and expired already) ends expired, checked below.
    const stayedOut = (r: Record<string, any>) =>
      roles.leavers.has(r.atsApplicationId) &&
      !roles.undone.has(r.atsApplicationId) &&
      (r.state === 'left' || unseenExit(exits, r));
    const leftTotal = roles.leavers.size - roles.undone.size;
    await untilCounted('exits recorded', { table: s.tables.applications, match: stayedOut, total: leftTotal }, 3000);
    // The expired who enter the stage again: one new invitation each, which they take.
    await reenter(s, candidates, roles, random);
    const reinvited = (r: Record<string, any>) =>
      roles.reentrants.has(r.atsApplicationId) && r.reinvitations === 1 && !['claimed', 'expired'].includes(r.state);
    await untilCounted(
      're-invitations',
      { table: s.tables.applications, match: reinvited, total: roles.reentrants.size },
      3000,
    );
    for (const record of (await scan(s, s.tables.applications)).filter(reinvited)) take(record);
    const reentered = (r: Record<string, any>) => reinvited(r) && r.state === 'written_back';
    await untilCounted(
      're-entrants written back',
      { table: s.tables.applications, match: reentered, total: roles.reentrants.size },
      3000,
    );
    const told = (r: Record<string, any>) => ['completed', 'expired'].includes(r.state) && r.announced === r.state;
    await untilCounted(
      'orders ended and told',
      { table: s.tables.orders, match: told, total: ordered.length },
      3000,
      async () => Date.now() > ordersExpiryDue && (await settled()),
    );
    // Greenhouse reads a told end by calling `test_status` after the PATCH: what it shows is final once those finish.
    await s.greenhouse.assessments.settled(30_000);
    // A message that failed comes back after the visibility timeout: wait two at least, and
    // until the last copy sent back to wait is due and taken (at most three minutes past the run's deadline).
    const visibilityMs = (options.visibilityTimeoutSeconds ?? 6 * 3) * 1000;
    const copiesDue = (s.watch.lastDueAt() ?? 0) - Date.now() + 2 * visibilityMs;
    await s.waitForQuiet(Math.min(180_000, Math.max(2 * visibilityMs, deadline - Date.now(), copiesDue)));

    // ----- invariants
    const finalRecords = (await scan(s, s.tables.applications)).filter((r) => byApplication.has(r.atsApplicationId));
    const finalEvents = await scan(s, s.tables.events);
    const allEmails = (
      (await (await fetch(`${s.emulators.endpoints.ses}/store`)).json()) as {
        emails: { destination: { to: string[] }; subject?: string; at?: number }[];
      }
    ).emails;
    const isReminder = (m: { subject?: string }) => (m.subject ?? '').startsWith('Reminder');
    const emails = allEmails.filter((m) => !isReminder(m));
    const invariants: Invariant[] = [];
    const check = (name: string, items: unknown[], bad: (item: any) => string | undefined): void => {
      const detail = items.map(bad).filter((d): d is string => d !== undefined);
      invariants.push({ name, checked: items.length, violations: detail.length, detail: detail.slice(0, 10) });
    };
    const jobRefs = [...new Set(finalRecords.map((r) => `${r.connectionId}/${r.atsJobId}/${r.triggerId}`))];
    check('exactly one interview per job × trigger', jobRefs, (ref) => {
      const count = s.interview.state.interviews.filter((i) => i.interview_name.endsWith(`(ref ${ref})`)).length;
      return count === 1 ? undefined : `${ref}: ${count} interviews`;
    });
    check('one invite e-mail at most per stage entry (re-entries included)', candidates, (c: Candidate) => {
      const count = emails.filter((m) => m.destination.to.includes(c.email)).length;
      const again = finalRecords.find((r) => r.atsApplicationId === c.applicationId)?.reinvitations ?? 0;
      const entries = entriesOf(roles, c);
      return count <= entries && again <= entries - 1
        ? undefined
        : `${c.kind} ${c.applicationId}: ${count} e-mails, ${again} re-invitations for ${entries} entries`;
    });
    check('one invite note at most per stage entry (re-entries included)', candidates, (c: Candidate) => {
      const invites = s.ats[c.kind].notesOf(c.applicationId).filter((n) => n.includes('ai-interview-invite:'));
      const entries = entriesOf(roles, c);
      // Each note's marker (ids and the invitation's round, no candidate data) says which entry had two.
      const markers = invites.map((n) => /ai-interview-invite:[^\s<"\]]*/.exec(n)?.[0]).join(', ');
      return invites.length <= entries
        ? undefined
        : `${c.kind} ${c.applicationId}: ${invites.length} invite notes for ${entries} entries (${markers})`;
    });
    check('every claimed application invited', candidates, (c: Candidate) => {
      const record = finalRecords.find((r) => r.atsApplicationId === c.applicationId);
      if (!record) return `${c.kind} ${c.applicationId}: never claimed`;
      return ['invited', 'completed', 'written_back', 'expired', 'left'].includes(record.state)
        ? undefined
        : `${c.kind} ${c.applicationId}: ${record.state} ${record.failureReason ?? ''}`;
    });
    const reports: [string, { applicationId: string; kind: DirectAtsKind; connectionId: string }][] = [
      ...expected.entries(),
    ];
    check('exactly one note per report', reports, ([reportId, e]: (typeof reports)[number]) => {
      const count = s.ats[e.kind]
        .notesOf(e.applicationId)
        .filter((n: string) => n.includes(`ai-interview-report:${reportId}`)).length;
      return count === 1 ? undefined : `${e.kind} report ${reportId}: ${count} notes`;
    });
    check('at most one report file per report', reports, ([reportId, e]: (typeof reports)[number]) => {
      const name = `AI interview report ${reportId}.pdf`;
      const count = s.ats[e.kind].filesOf(e.applicationId).filter((f: { name: string }) => f.name === name).length;
      return count <= 1 ? undefined : `${e.kind} report ${reportId}: ${count} files`;
    });
    check('at most one stage move per report', reports, ([reportId, e]: (typeof reports)[number]) => {
      const count = s.ats[e.kind].movesOf(e.applicationId).filter((m: string) => m === ADVANCE_STAGE).length;
      // A re-entrant was moved there once by the run itself (out of the stage, then back in).
      const own = roles.reentrants.has(e.applicationId) ? 1 : 0;
      return count - own <= 1 ? undefined : `${e.kind} report ${reportId}: ${count} moves`;
    });
    check(
      'every completed report written back, or unmatched with its reason',
      [...reports.map(([id, e]) => ({ id, e })), ...strangers.map((x) => ({ id: x.reportId, stranger: x }))],
      (item: any) => {
        if (item.stranger) {
          const parked = finalEvents.find((e) => e.pk === `unmatched#${item.stranger.connectionId}#${item.id}`);
          return parked?.reason ? undefined : `stranger report ${item.id}: not parked`;
        }
        const record = finalRecords.find((r) => r.atsApplicationId === item.e.applicationId);
        return record?.state === 'written_back' && record.reportId === item.id
          ? undefined
          : `report ${item.id}: application ${record?.state ?? 'missing'}`;
      },
    );

    check(
      'every stage change whose webhook was dropped invited by the sweep',
      candidates.filter((c) => dropped.has(c.applicationId)),
      (c: Candidate) => {
        const record = finalRecords.find((r) => r.atsApplicationId === c.applicationId);
        const invites = emails.filter((m) => m.destination.to.includes(c.email)).length;
        return record && record.state !== 'claimed' && record.state !== 'failed' && invites <= entriesOf(roles, c)
          ? undefined
          : `${c.kind} ${c.applicationId}: ${record?.state ?? 'never claimed'}, ${invites} invite e-mails`;
      },
    );
    check(
      'every non-completer reminded once, expired once, no report note',
      candidates.filter((c) => noShows.has(c.applicationId) && !roles.reentrants.has(c.applicationId)),
      (c: Candidate) => {
        const record = finalRecords.find((r) => r.atsApplicationId === c.applicationId);
        const reminders = allEmails.filter((m) => isReminder(m) && m.destination.to.includes(c.email)).length;
        const notes = s.ats[c.kind].notesOf(c.applicationId);
        const expiries = notes.filter((n) => n.includes('AI interview not completed by')).length;
        const reportNotes = notes.filter((n) => n.includes('ai-interview-report:')).length;
        // A reminder begun before a crash and never sent is counted as sent by design (never twice). Each invitation
        // (a leaver's undo into the stage after the expiry invites anew) is reminded and expires once.
        const rounds = 1 + (record?.reinvitations ?? 0);
        const begun = record?.steps?.reminder1?.startedAt !== undefined;
        const remindedOnce = reminders === rounds || (reminders === rounds - 1 && begun);
        return remindedOnce && expiries === rounds && reportNotes === 0 && record?.state === 'expired'
          ? undefined
          : `${c.kind} ${c.applicationId}: ${reminders} reminders, ${expiries} expiry notes, ` +
              `${reportNotes} report notes, ${record?.state}`;
      },
    );
    check("every status tag matches the application's final state", candidates, (c: Candidate) => {
      const record = finalRecords.find((r) => r.atsApplicationId === c.applicationId);
      const expected =
        record?.state === 'written_back'
          ? writtenBackStatuses(record)
          : record?.state === 'expired'
            ? 'expired'
            : record?.state === 'left'
              ? 'cancelled'
              : record?.state === 'invited'
                ? 'invited'
                : undefined;
      const tags = s.ats[c.kind].tagsOf(c.applicationId).filter((t) => statusOfTag(t) !== undefined);
      return expected && tags.length === 1 && [expected].flat().includes(statusOfTag(tags[0] as string) as string)
        ? undefined
        : `${c.kind} ${c.applicationId}: ${record?.state} shows ${JSON.stringify(tags)} (claim ` +
            `${record?.steps?.status?.value}, exit ${record?.exit?.kind ?? '-'} ${record?.exit?.at ?? '-'}, ` +
            `expired ${record?.expiredAt ?? '-'}, move ${record?.steps?.stageMove?.value ?? '-'}, ` +
            `from ${record?.leftFrom ?? '-'}, re-invitations ${record?.reinvitations ?? 0}; ` +
            `tags as written: ${s.ats[c.kind].tagHistoryOf(c.applicationId).join(' | ')})`;
    });

    if (options.perCandidateInvites.length) {
      const perCandidate = (kind: DirectAtsKind) => options.perCandidateInvites.includes(kind);
      const invitedEach = candidates.filter((c) => perCandidate(c.kind));
      check('per-candidate: one invitation per application on the service', invitedEach, (c: Candidate) => {
        const record = finalRecords.find((r) => r.atsApplicationId === c.applicationId);
        const count = s.interview.state.invites.filter(
          (i) => i.interview_id === record?.interviewId && i.candidate_email_id === c.email,
        ).length;
        return count === 1 && record?.serviceCandidateId ? undefined : `${c.kind} ${c.applicationId}: ${count}`;
      });
      const ownReports = reports.filter(([, e]) => perCandidate(e.kind));
      check("per-candidate: no candidate's report parked as unmatched", ownReports, ([reportId, e]) => {
        const parked = finalEvents.some((event) => event.pk === `unmatched#${e.connectionId}#${reportId}`);
        return parked ? `report ${reportId}: parked` : undefined;
      });
    }

    checkLifecycle(check, s, { candidates, roles, exits, records: finalRecords, emails: allEmails });
    const komboFinal = await komboRecords();
    if (kombo.length)
      checkKombo(check, s, { candidates: kombo, roles: komboRoles, records: komboFinal, emails: allEmails });

    const orderRecordsAtEnd = await orderRecords(scanTable, s);
    checkOrders(
      check,
      s,
      ordered,
      orderRecordsAtEnd,
      (address) => emails.filter((m) => m.destination.to.includes(address)).length,
    );

    const dlq: ChaosReport['dlq'] = [];
    for (const [queue, url] of [
      ['stage-events-dlq', s.queues.stage.dlqUrl],
      ['report-events-dlq', s.queues.report.dlqUrl],
    ] as const) {
      for (let i = 0; i < 20; i++) {
        const received = await s.sqs.send(
          new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 30 }),
        );
        if (!received.Messages?.length) break;
        for (const m of received.Messages) {
          let kind = 'not JSON';
          try {
            kind = String((JSON.parse(m.Body ?? '') as { kind?: string }).kind ?? 'unknown');
          } catch {
            /* counted as not JSON */
          }
          dlq.push({ queue, kind, reason: 'failed maxReceiveCount times' });
        }
      }
    }
    invariants.push({
      name: 'DLQs empty (or poison by construction, listed)',
      checked: 2,
      violations: dlq.length,
      detail: dlq.map((d) => `${d.queue}: ${d.kind}`),
    });
    // A pending write-back is not enqueued again (the queue ledger): about one message per report, whatever the
    // reconciler's pace, the repeated webhooks and the deferrals (a deferred copy is the same message).
    // Reports of orders travel the same queue: counted with the write-backs they are; so are the strangers' reports,
    // each a message of its own before it is parked.
    const ordersCompleted = (await scan(s, s.tables.orders)).filter((o) => o.state === 'completed').length;
    const strangersParked = finalEvents.filter(parked).length;
    const handled =
      finalRecords.filter((r) => r.state === 'written_back' && expected.has(r.reportId)).length +
      komboFinal.filter(komboWritten).length +
      ordersCompleted +
      strangersParked;
    const reportMessages = s.watch.distinctReceived('report-created');
    const messagesPerReport = handled ? reportMessages / handled : 0;
    invariants.push({
      name: `at most ${MAX_REPORT_MESSAGES_PER_REPORT} report messages per report written back or parked`,
      checked: handled,
      violations: messagesPerReport > MAX_REPORT_MESSAGES_PER_REPORT ? 1 : 0,
      detail:
        messagesPerReport > MAX_REPORT_MESSAGES_PER_REPORT
          ? [`${reportMessages} report messages for ${handled} reports written back or parked`]
          : [],
    });
    // Every ATS call the run made (adapters, sweeps, under every fault), against the vendors' documented routes.
    const undocumented = (Object.keys(s.ats) as DirectAtsKind[]).flatMap((kind) =>
      undocumentedCalls(kind, s.ats[kind].calls()),
    );
    invariants.push({
      name: 'every ATS call a route, parameter and field the vendor documents',
      checked: (Object.keys(s.ats) as DirectAtsKind[]).reduce((sum, kind) => sum + s.ats[kind].calls().length, 0),
      violations: undocumented.length,
      detail: undocumented,
    });
    // The emulators check no permission: every distinct AWS call a function made, against its synthesized policy.
    const iam = checkLocalCalls(s, options.workDir);
    invariants.push({
      name: "every AWS call granted by the function's IAM policy",
      checked: iam.checked,
      violations: iam.violations.length,
      detail: iam.violations.map((v) => v.reason),
    });

    const residuals: ChaosReport['residuals'] = [
      {
        name: 'invite e-mails recorded as uncertain',
        count: finalRecords.filter((r) => r.steps?.inviteEmail?.outcome === 'uncertain').length,
        meaning: "a worker stopped after sending, before the next step's write, or SES did not answer; never resent",
      },
      {
        name: 'of those, candidates SES holds no invitation for',
        count: finalRecords.filter(
          (r) =>
            r.steps?.inviteEmail?.outcome === 'uncertain' &&
            !emails.some((m) => m.destination.to.includes(r.candidateEmail)),
        ).length,
        meaning: 'the call cut before SES took it: an invitation an operator resends (npm run ops -- resend)',
      },
      {
        name: 'Kombo orders fetched by the reconciler',
        count: ordered.filter((o) => o.kombo && o.kombo.deliveries.length === 0).length,
        meaning: 'their webhook never came (the endpoint down); one order each, checked above',
      },
      {
        name: 'Kombo orders taken after their expiry was told',
        count: ordered.filter((o) => keptCancelled(o, orderRecordsAtEnd.get(o.email)?.[0])).length,
        meaning: 'Kombo keeps them CANCELLED (a result only while OPEN): logged, not PUT again',
      },
      {
        name: 'Kombo results taken, their answer lost',
        count: s.kombo.calls.filter((c) => c.route.endsWith('/result') && c.status === 502).length,
        meaning: 'found taken when looked up again: never PUT a second time',
      },
      {
        name: 'Kombo writes refused 429 (concurrency)',
        count: s.kombo.calls.filter((c) => c.status === 429).length,
        meaning: 'put back with a delay, as the deferrals above',
      },
      {
        name: 'interviews adopted by name after a lost answer',
        count: capture.lines.filter((l) => l.includes('adopted an interview created by an earlier attempt')).length,
        meaning: 'a second create avoided',
      },
      {
        name: 'messages deferred (an API asked to wait)',
        count: capture.lines.filter((l) => l.includes('message deferred')).length,
        meaning: 'put back with a delay instead of failing toward the DLQ',
      },
      {
        name: 'stage changes found by the sweep (webhook never sent)',
        count: dropped.size,
        meaning: 'invited by the sweep; each one checked above',
      },
      {
        name: 'report messages per report written back or parked',
        count: Number(messagesPerReport.toFixed(2)),
        meaning: `${reportMessages} messages for ${handled} reports (the strangers' included)`,
      },
      {
        name: 'reminders begun and not sent (a crash in between)',
        count: finalRecords.filter((r) =>
          Object.entries(r.steps ?? {}).some(
            ([name, step]: [string, any]) => name.startsWith('reminder') && !step.doneAt,
          ),
        ).length,
        meaning: 'not sent again: never a second reminder',
      },
      ...(kombo.length ? komboResiduals(s, komboFinal) : []),
      {
        name: 'duplicate interviews, invites, notes or moves',
        count: invariants.slice(0, 6).reduce((sum, i) => sum + i.violations, 0),
        meaning: 'a crash window the design could not close',
      },
    ];

    capture.restore();
    const logLeaks = scanLogs(capture.lines, s, [...candidates, ...ordered, ...kombo]);
    return {
      options: { ...options, progress: undefined } as never,
      invariants,
      crashes,
      residuals,
      dlq,
      logLines: capture.lines.length,
      logLeaks,
      elapsedMs: Date.now() - started,
      functions: s.functions,
    };
  } finally {
    capture.restore();
    // The functions' log lines, kept for a reader when asked (CHAOS_LOG_FILE), a failed run's too: ids only.
    if (process.env.CHAOS_LOG_FILE) writeFileSync(process.env.CHAOS_LOG_FILE, capture.lines.join('\n'));
    faultInjection.afterSideEffect = undefined;
    await stack?.stop();
  }
}

/** Every secret, candidate e-mail, name and phone number that must never appear in a log line. */
function scanLogs(lines: string[], stack: LocalStack, candidates: Pick<Candidate, 'email' | 'name'>[]): string[] {
  const needles: { what: string; value: string }[] = [];
  for (const secrets of Object.values(stack.secrets)) {
    for (const [field, value] of Object.entries(secrets))
      if (typeof value === 'string' && value.length >= 8) needles.push({ what: `secret ${field}`, value });
  }
  for (const c of candidates)
    needles.push({ what: 'candidate e-mail', value: c.email }, { what: 'candidate name', value: c.name });
  const leaks: string[] = [];
  for (const line of lines) {
    for (const needle of needles)
      if (line.includes(needle.value)) leaks.push(`${needle.what} in: ${line.slice(0, 160)}`);
    if (/\+\d[\d\s-]{7,}\d/.test(line)) leaks.push(`phone number in: ${line.slice(0, 160)}`);
  }
  return leaks;
}

export function formatChaosReport(report: ChaosReport): string {
  const o = report.options;
  const lines = [
    `Chaos run: ${o.candidates} candidates on greenhouse, ashby, lever, workable, ` +
      `${o.komboCandidates} on two tools through Kombo; seed ${o.seed}; ` +
      `${(report.elapsedMs / 1000).toFixed(0)} s`,
    `Faults: ${o.rate429 * 100}% 429 + Retry-After, ${o.rate500 * 100}% 500, ` +
      `${o.slowRate * 100}% answers after the client's timeout (every sandbox); ` +
      'ATS webhooks delivered 2-3 times, 10% resent out of order; ' +
      (o.komboCandidates ? `Kombo: ${describeKomboFaults()}; ` : '') +
      `${o.dropReportRate * 100}% of report webhooks dropped; ` +
      `${o.dropStageChangeRate * 100}% of stage-change webhooks never sent; ` +
      `${o.noShowRate * 100}% of candidates never take the interview (reminder at 30 s, expiry at 100 s); ` +
      `${o.sparseReportRate * 100}% of reports sparse (nulls, missing optional fields); ` +
      `service pages capped at ${o.maxPageSize || 'no'} items; ` +
      (o.perCandidateInvites.length
        ? `per-candidate invitations on ${o.perCandidateInvites.join(', ')} (a fifth typing another e-mail); `
        : '') +
      `${o.duplicateDeliveryRate * 100}% of SQS batches taken by two workers at once; ` +
      `${o.shortDeadlineRate * 100}% of invocations with only ${o.shortDeadlineMs} ms left; ` +
      `crash after a side effect with p=${o.crashRate}`,
    `Runtime: ${
      Object.keys(report.functions).length
        ? Object.entries(report.functions)
            .map(([name, f]) => `${name} ${f.coldStarts} environments (${f.timeouts} timed out)`)
            .join(', ')
        : 'every function in one process (--one-process)'
    }`,
    `Crashes injected: ${Object.entries(report.crashes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    '',
    `| ${'invariant'.padEnd(66)} | checked | violations |`,
    `|${'-'.repeat(68)}|---------|------------|`,
    ...report.invariants.map(
      (i) => `| ${i.name.padEnd(66)} | ${String(i.checked).padStart(7)} | ${String(i.violations).padStart(10)} |`,
    ),
    '',
    ...report.invariants.filter((i) => i.violations).flatMap((i) => [`${i.name}:`, ...i.detail.map((d) => `  - ${d}`)]),
    `| ${'residual (counted, never hidden)'.padEnd(50)} | count | meaning`,
    ...report.residuals.map((r) => `| ${r.name.padEnd(50)} | ${String(r.count).padStart(5)} | ${r.meaning}`),
    '',
    `Log lines scanned: ${report.logLines}; ` +
      `secrets, candidate e-mails, names or phone numbers found: ${report.logLeaks.length}`,
    ...report.logLeaks.slice(0, 10).map((l) => `  - ${l}`),
  ];
  return lines.join('\n');
}
