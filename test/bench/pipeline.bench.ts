import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { FUNCTION_CONCURRENCY } from '../../infra/aws/functions';
import { startCountingProxy } from '../../infra/local/counting-proxy';
import { type LocalStack, startLocalStack } from '../../infra/local/local-stack';
import type { AtsSandboxView } from '../../infra/local/sandbox/ats';
import { measureBundles } from './bundles';
import { CONNECTION_CACHE, type DirectAtsKind } from '../../shared/config';
import { documentedRate } from '../../shared/ats';
import { WORKER_TIMING } from '../../shared/pipeline/constants';
import { benchConnections } from './connections.bench';
import { benchKombo } from './kombo.bench';

/**
 * `npm run bench [-- --ats greenhouse|ashby|lever|workable --candidates 200 --concurrency 4
 *   --ats-rate-limit N --ats-rate-window S --per-second --reports-after-all --trickle ashby --warm-up N]`:
 * candidates through the whole local pipeline on one ATS (stage change → interview → invite → report →
 * write-back), then the figures. Unthrottled, a warm-up of 40 candidates goes first, not measured: it starts each
 * function's environments, whose cold starts share this machine's cores (on Lambda each has its own); `--warm-up 0`
 * measures from cold. With a rate limit (N requests per fixed window of S seconds, S defaulting to the
 * ATS's documented window), the same candidates first run unthrottled, and the run prints the allowed rate, the
 * share of it used, the 429s and the requests per candidate against the unthrottled run. With `--trickle`, a
 * burst of candidates on the rate-limited ATS runs beside a trickle on another connection, and the bench prints
 * the trickle's latencies alone and beside the burst.
 */
const USAGE =
  'usage: npm run bench [-- --ats greenhouse|ashby|lever|workable|kombo --candidates N --concurrency N ' +
  '--ats-rate-limit N --ats-rate-window S --per-second --reports-after-all --trickle KIND --warm-up N ' +
  '--worker-timeout S --one-process --skip-bundles --connections N]';
/** A mistake on the command line: named, with the usage, never a stack trace. */
function refuse(message: string): never {
  console.error(`bench: ${message}\n${USAGE}`);
  process.exit(2);
}
const OPTIONS = {
  ats: { type: 'string', default: 'greenhouse' },
  candidates: { type: 'string' },
  /** Execution environments per worker (default: the stack's). */
  concurrency: { type: 'string', default: String(FUNCTION_CONCURRENCY.worker) },
  /** Every function in the bench's own process, one module state for all: for debugging, never for figures. */
  'one-process': { type: 'boolean', default: false },
  'ats-rate-limit': { type: 'string' },
  'ats-rate-window': { type: 'string' },
  'skip-bundles': { type: 'boolean', default: false },
  /** The workers' timeout in seconds (default: the stack's); the queues' visibility is 6 × it, as in the stack. */
  'worker-timeout': { type: 'string', default: String(WORKER_TIMING.workerTimeoutSeconds) },
  /** Prints the ATS requests answered in each second of the run: how the windows were filled. */
  'per-second': { type: 'boolean', default: false },
  /**
   * Candidates through the pipeline before the measured ones, not measured (default: 40 unthrottled, none with a
   * rate limit, whose windows they would spend).
   */
  'warm-up': { type: 'string' },
  /** Every candidate is invited before any takes the interview (by default each takes it once invited). */
  'reports-after-all': { type: 'boolean', default: false },
  /** The connection whose trickle of candidates runs beside the burst, alone first. */
  trickle: { type: 'string' },
  'trickle-candidates': { type: 'string', default: '30' },
  'trickle-every': { type: 'string', default: '1' },
  /** Internal: the unthrottled comparison runs in a process of its own and writes its figures here. */
  'figures-to': { type: 'string' },
  /** N connections in the table: a cold start's read and one reconciler cycle (./connections.bench.ts). */
  connections: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;
const { values } = (() => {
  try {
    return parseArgs({ options: OPTIONS });
  } catch (error) {
    return refuse(error instanceof Error ? error.message : String(error));
  }
})();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
// A warm-up spends a rate limit's windows, and the other modes have their own (or none).
if (values['warm-up'] !== undefined) {
  const other = [
    ['--ats-rate-limit', values['ats-rate-limit']],
    ['--trickle', values.trickle],
    ['--connections', values.connections],
    ['--ats kombo', values.ats === 'kombo' ? 'kombo' : undefined],
  ].find(([, value]) => value !== undefined);
  if (other) refuse(`--warm-up: only for an unthrottled run, not with ${other[0]}`);
  if (!/^\d+$/.test(values['warm-up'])) refuse('--warm-up: expected a whole number of candidates');
}
if (values.connections !== undefined) {
  const count = Number(values.connections);
  if (!Number.isInteger(count) || count < 1) refuse('--connections: expected a whole number of connections');
  await benchConnections(count);
  process.exit(0);
}
if (values.ats === 'kombo') {
  await benchKombo(Number(values.candidates ?? 20));
  process.exit(process.exitCode ?? 0);
}
const KINDS: DirectAtsKind[] = ['greenhouse', 'ashby', 'lever', 'workable'];
const asKind = (value: string, flag: string): DirectAtsKind => {
  if (!KINDS.includes(value as DirectAtsKind))
    refuse(`${flag}: expected one of ${KINDS.join(', ')}${flag === '--ats' ? ', kombo' : ''}, got ${value}`);
  return value as DirectAtsKind;
};
const ats = asKind(values.ats, '--ats');
const trickleKind = values.trickle === undefined ? undefined : asKind(values.trickle, '--trickle');
if (trickleKind === ats) refuse('--trickle: the trickle runs on another connection than --ats');
/** Each ATS's documented window, as its profile declares it (Ashby publishes none: 10 s). */
const documentedWindowS = (kind: DirectAtsKind) => (documentedRate(kind)?.windowMs ?? 10_000) / 1000;
const NAMES: Record<DirectAtsKind, string> = {
  greenhouse: 'Greenhouse',
  ashby: 'Ashby',
  lever: 'Lever',
  workable: 'Workable',
};
const UNLIMITED = 100_000;
const limited = values['ats-rate-limit'] !== undefined;
const rateLimit = Number(values['ats-rate-limit'] ?? UNLIMITED);
const windowSeconds = Number(values['ats-rate-window'] ?? documentedWindowS(ats));
const candidates = Number(values.candidates ?? (trickleKind ? 500 : 200));
for (const [flag, value] of [
  ['--candidates', values.candidates],
  ['--ats-rate-limit', values['ats-rate-limit']],
  ['--ats-rate-window', values['ats-rate-window']],
  ['--concurrency', values.concurrency],
  ['--worker-timeout', values['worker-timeout']],
])
  if (value !== undefined && !(Number(value) > 0)) refuse(`${flag} ${value}: expected a positive number`);
for (const [flag, value] of [
  ['--candidates', values.candidates],
  ['--concurrency', values.concurrency],
])
  if (value !== undefined && !/^\d+$/.test(value)) refuse(`${flag} ${value}: expected a whole number`);
const warmUp = Number(values['warm-up'] ?? (limited || trickleKind ? 0 : 40));
const TARGETS = {
  dynamoPerCandidate: 8,
  sqsPerCandidate: 3,
  bundleKb: 300,
  coldInitMs: 200,
  /**
   * Unthrottled, the report flow's p95 (the issue's bar): from the interview's completion, which the service's
   * webhook follows at once, to the report's note (or the stage move after it).
   */
  reportP95Ms: 5000,
  /** The issue's bars: 90 % of the allowed rate, 85 % at 10-s windows; 429s at most 2 % of the calls. */
  limited: { share: 90, shareAt10s: 85, atsRatio: 1.1, sqsPerCandidate: 4, dynamoPerCandidate: 12, throttled: 0.02 },
  trickleRatio: 1.5,
};
const check = (ok: boolean, target: string) => `${ok ? 'ok' : 'MISSED'} ${target}`;

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
let lastProgress = 0;
/** One updating line on a terminal; in a log, a line every two seconds at most. */
const progress = (line: string) => {
  if (process.stdout.isTTY) return void process.stdout.write(`\r${line.padEnd(78)}`);
  if (Date.now() - lastProgress < 2000) return;
  lastProgress = Date.now();
  console.log(line);
};
const endProgress = () => process.stdout.isTTY && process.stdout.write('\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Candidates of one connection, from their stage change to their write-back. */
interface Cohort {
  kind: DirectAtsKind;
  view: AtsSandboxView;
  jobs: string[];
  moved: Map<string, number>;
  emails: Map<string, string>;
  invited: Map<string, Record<string, any>>;
  reportStarted: Map<string, number>;
  written: Map<string, Record<string, any>>;
  reportsAfterAll: boolean;
  /** What the cohort's e-mail addresses start with: `warm` for a warm-up's, which is never measured. */
  prefix: 'bench' | 'warm';
  /** How many candidates the cohort will have once every stage change is sent. */
  expected: number;
}
const cohortOf = (
  stack: LocalStack,
  kind: DirectAtsKind,
  expected: number,
  reportsAfterAll = false,
  prefix: Cohort['prefix'] = 'bench',
): Cohort => ({
  kind,
  view: stack.ats[kind],
  // Greenhouse's sandbox has two jobs, the others one: one interview per job.
  jobs: kind === 'greenhouse' ? ['3301', '3302'] : [stack.ats[kind].demoJobId],
  moved: new Map(),
  emails: new Map(),
  invited: new Map(),
  reportStarted: new Map(),
  written: new Map(),
  reportsAfterAll,
  prefix,
  expected,
});
/** Candidates numbered apart: the measured ones from 0 whatever the warm-up, so each gets the same score every run. */
const added = { bench: 0, warm: 0 };
const moveIn = async (cohort: Cohort, count: number) => {
  const applications = Array.from({ length: count }, () => {
    const n = added[cohort.prefix]++;
    const email = `${cohort.prefix}-${n}@candidates.example.com`;
    const created = cohort.view.addCandidate({
      firstName: 'Bench',
      lastName: String(n),
      email,
      jobId: cohort.jobs[n % cohort.jobs.length],
    });
    cohort.emails.set(created.id, email);
    return created;
  });
  await Promise.all(
    applications.map(async (a) => {
      cohort.moved.set(a.id, Date.now());
      await cohort.view.moveCandidate({ applicationId: a.id, stageName: 'AI Interview' });
    }),
  );
};
/**
 * The cohort's stage changes, in waves of 20 as an ATS's webhook workers would send them; run beside `follow`, so
 * each candidate takes the interview once invited, while later ones are still coming in.
 */
const sendStageChanges = async (cohort: Cohort, label: string) => {
  for (let i = 0; i < cohort.expected; i += 20) {
    await moveIn(cohort, Math.min(20, cohort.expected - i));
    progress(`${label}: stage changes sent ${Math.min(i + 20, cohort.expected)}/${cohort.expected}`);
  }
};
/** 60, 70 or 80 by the candidate's number: the advance rule (75 and over) moves one candidate in three. */
const scoreOf = (email: string) => 60 + 10 * (Number(/(?:bench|warm)-(\d+)@/.exec(email)?.[1] ?? 0) % 3);
const latencies = (cohort: Cohort) => {
  const written = [...cohort.written.values()];
  return {
    stage: written.map(
      (a) =>
        (a.steps.inviteNote?.doneAt ?? a.steps.inviteEmail?.doneAt) - (cohort.moved.get(a.atsApplicationId) ?? NaN),
    ),
    report: written.map(
      (a) =>
        (a.steps.stageMove?.doneAt ?? a.steps.reportNote?.doneAt) -
        (cohort.reportStarted.get(a.atsApplicationId) ?? NaN),
    ),
  };
};

/**
 * Watches the applications table: a candidate takes the interview once invited (or once the whole cohort is,
 * with `reportsAfterAll`), and counts as done once written back. Resolves when every cohort in `until` is done.
 */
const follow = async (stack: LocalStack, direct: DynamoDBClient, cohorts: Cohort[], until: Cohort[], label: string) => {
  const byConnection = new Map(cohorts.map((c) => [stack.connections.find((k) => k.ats === c.kind)?.id, c]));
  const deadline = Date.now() + 20 * 60_000;
  const done = () => until.every((c) => c.written.size >= c.expected);
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${label}: not every candidate was written back within 20 minutes`);
    let startKey: Record<string, any> | undefined;
    for (let page = 0; page < 1000; page++) {
      const answer = await direct.send(
        new ScanCommand({ TableName: stack.tables.applications, ExclusiveStartKey: startKey }),
      );
      for (const item of answer.Items ?? []) {
        const record = unmarshall(item);
        const cohort = byConnection.get(record.connectionId);
        if (!cohort?.moved.has(record.atsApplicationId)) continue;
        if (record.state === 'invited') cohort.invited.set(record.atsApplicationId, record);
        if (record.state === 'written_back') cohort.written.set(record.atsApplicationId, record);
      }
      startKey = answer.LastEvaluatedKey;
      if (!startKey) break;
    }
    for (const cohort of cohorts) {
      if (cohort.reportsAfterAll && cohort.invited.size + cohort.written.size < cohort.expected) continue;
      for (const [id, record] of cohort.invited) {
        if (cohort.reportStarted.has(id)) continue;
        cohort.reportStarted.set(id, Date.now());
        const email = cohort.emails.get(id) as string;
        stack.interview.completeInterview({
          interview_id: record.interviewId,
          candidate_name: 'Bench Candidate',
          candidate_email: email,
          // The same score for the same candidate in every run: the rule moves the same share (a third of them),
          // so a rate-limited run and its unthrottled comparison make the same writes.
          ai_match_score: scoreOf(email),
          proctoring_violations: 0,
          delay_ms: 0,
        });
      }
    }
    const counts = until.map(
      (c) => `${NAMES[c.kind]} invited ${c.reportStarted.size}, written back ${c.written.size}/${c.expected}`,
    );
    progress(`${label}: ${counts.join('; ')}`);
    await sleep(250);
  }
};

interface RunFigures {
  written: number;
  elapsedMs: number;
  /** From the ATS's first request for the candidates to its last. */
  atsBusyMs: number;
  /** The requests of the connection's setup (its webhooks), before the candidates'. */
  setupRequests: number;
  stage: number[];
  report: number[];
  dynamo: number;
  sqs: number;
  sent: number;
  interviewRequests: number;
  atsRequests: number;
  throttled: number;
  dlq: number;
  breakdown: string[];
  perSecond?: number[];
  /** Each function's environments started (cold inits) and invocations past the timeout. */
  environments: string;
  /** The workers' invocations, added up (Lambda's billed duration): what holding a message for its turn costs. */
  workerBusyMs: number;
}

/** A local stack whose DynamoDB and SQS traffic is counted, with `limit` per `windowS` on `kind`'s sandbox. */
const startCounted = async (kind: DirectAtsKind, limit: number, windowS: number) => {
  let dynamoProxy: Awaited<ReturnType<typeof startCountingProxy>> | undefined;
  let sqsProxy: Awaited<ReturnType<typeof startCountingProxy>> | undefined;
  const limits: Partial<Record<DirectAtsKind, number>> = { [kind]: limit };
  const stack = await startLocalStack({
    workDir: '.local/bench',
    // The workers' timeout and the queues' visibility are the stack's, not the shorter local ones: how long a worker
    // may wait for a turn, and when a message comes back, are what the figures measure.
    functionTimeoutMs: Number(values['worker-timeout']) * 1000,
    // The connection cache is the stack's too (its default): how often a long run reads each connection is a figure.
    connectionCacheSeconds: CONNECTION_CACHE.defaultSeconds,
    reconcileIntervalMs: 0,
    maxConcurrency: Number(values.concurrency),
    runtime: values['one-process'] ? 'one-process' : 'environments',
    atsRateLimits: limits,
    atsRateWindowsMs: { [kind]: windowS * 1000 },
    logLevel: process.env.POWERTOOLS_LOG_LEVEL ?? 'ERROR',
    wrapEndpoints: async (endpoints) => {
      dynamoProxy = await startCountingProxy(endpoints.dynamodb);
      sqsProxy = await startCountingProxy(endpoints.sqs);
      return { ...endpoints, dynamodb: dynamoProxy.url, sqs: sqsProxy.url };
    },
  });
  const counters = {
    dynamo: dynamoProxy as NonNullable<typeof dynamoProxy>,
    sqs: sqsProxy as NonNullable<typeof sqsProxy>,
  };
  const stop = async () => {
    await stack.stop();
    await counters.dynamo.close();
    await counters.sqs.close();
  };
  return { stack, counters, stop };
};

/** `candidates` through the pipeline on `kind`, at `limit` requests per `windowS`. */
const runPipeline = async (kind: DirectAtsKind, limit: number, windowS: number, label: string): Promise<RunFigures> => {
  const { stack, counters, stop } = await startCounted(kind, limit, windowS);
  // The benchmark's own reads go straight to DynamoDB Local, past the counter.
  const direct = new DynamoDBClient({ endpoint: stack.emulators.endpoints.dynamodb });
  try {
    const view = stack.ats[kind];
    if (warmUp > 0) {
      const warm = cohortOf(stack, kind, warmUp, false, 'warm');
      await Promise.all([sendStageChanges(warm, 'warm-up'), follow(stack, direct, [warm], [warm], 'warm-up')]);
      await settle(stack);
    }
    // What the warm-up left in the counts (nothing without one): the figures are the measured candidates'. Without
    // one, the connection's setup stays in, as `setupRequests` below.
    const before =
      warmUp > 0
        ? {
            ats: { ...view.requests() },
            interview: { ...stack.interview.state.requests },
            throttled: view.throttled(),
            workerBusyMs: workerBusyMs(stack),
            starts: startCounts(stack),
          }
        : { ats: {}, interview: {}, throttled: 0, workerBusyMs: 0, starts: undefined };
    counters.dynamo.reset();
    counters.sqs.reset();
    const cohort = cohortOf(stack, kind, candidates, values['reports-after-all']);
    const atsTotal = () => sum(since(view.requests(), before.ats));
    const samples: number[] = [];
    const sampler = values['per-second'] ? setInterval(() => samples.push(atsTotal()), 1000) : undefined;
    // When the ATS took the candidates' first and last request, to within 100 ms: the connection's setup (its
    // webhooks, registered when the stack starts) is not part of the burst.
    const setupRequests = atsTotal();
    const busy = { first: 0, last: 0, seen: setupRequests };
    const watcher = setInterval(() => {
      const total = atsTotal();
      if (total === busy.seen) return;
      if (busy.first === 0) busy.first = Date.now();
      busy.last = Date.now();
      busy.seen = total;
    }, 100);
    const started = Date.now();
    await Promise.all([sendStageChanges(cohort, label), follow(stack, direct, [cohort], [cohort], label)]);
    const elapsedMs = Date.now() - started;
    await stack.waitForQuiet(60_000);
    if (sampler) clearInterval(sampler);
    clearInterval(watcher);
    endProgress();
    const { stage, report } = latencies(cohort);
    const dlq = await stack.dlqDepths();
    const counts = (name: string, map: Map<string, number> | Record<string, number>) => {
      const entries = [...(map instanceof Map ? map : Object.entries(map))];
      return `${name.padEnd(22)} ${entries.map(([k, v]) => `${k} ${v}`).join(', ')}`;
    };
    return {
      written: cohort.written.size,
      elapsedMs,
      atsBusyMs: busy.last - busy.first,
      setupRequests,
      stage,
      report,
      dynamo: counters.dynamo.total(),
      sqs: counters.sqs.total(),
      sent: (counters.sqs.counts.get('SendMessage') ?? 0) + (counters.sqs.counts.get('SendMessageBatch') ?? 0),
      interviewRequests: sum(since(stack.interview.state.requests, before.interview)),
      atsRequests: atsTotal(),
      throttled: view.throttled() - before.throttled,
      dlq: dlq.stage + dlq.report,
      breakdown: [
        counts('DynamoDB by operation:', counters.dynamo.counts),
        counts('  by table:', new Map([...counters.dynamo.byTable].sort((a, b) => b[1] - a[1]))),
        counts('SQS by operation:', counters.sqs.counts),
        counts('  by queue:', new Map([...counters.sqs.byQueue].sort((a, b) => b[1] - a[1]))),
        counts('interview service:', since(stack.interview.state.requests, before.interview)),
        counts(`${NAMES[kind]}:`, since(view.requests(), before.ats)),
      ],
      perSecond: sampler ? samples.map((v, i) => v - (samples[i - 1] ?? 0)) : undefined,
      environments: describeEnvironments(stack, before.starts),
      workerBusyMs: workerBusyMs(stack) - before.workerBusyMs,
    };
  } finally {
    await stop();
  }
};

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
/** Counts by name since `before`, the names with none left out. */
const since = (counts: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(counts)
      .map(([name, n]) => [name, n - (before[name] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  );
const workerBusyMs = (stack: LocalStack) =>
  (['InviteWorker', 'WritebackWorker'] as const).reduce((ms, name) => ms + (stack.functions[name]?.busyMs ?? 0), 0);

/** Each function's environments started and invocations timed out so far. */
type StartCounts = Record<string, { coldStarts: number; timeouts: number }>;
const startCounts = (stack: LocalStack): StartCounts =>
  Object.fromEntries(
    Object.entries(stack.functions).map(([name, f]) => [name, { coldStarts: f.coldStarts, timeouts: f.timeouts }]),
  );
/** Every function's invocations begun and time spent: unchanged for a second, none began or ended in it. */
const activity = (stack: LocalStack) =>
  Object.values(stack.functions)
    .map((f) => `${f.invocations}:${f.busyMs}`)
    .join(' ');

/**
 * After a warm-up: its queues drained and its workers idle, with no invocation begun or ended for a second (the ATS's
 * webhooks of its last writes), so none of its work runs into the measured run's counts; said when 15 s were not
 * enough.
 */
const settle = async (stack: LocalStack) => {
  await stack.waitForQuiet(60_000);
  const deadline = Date.now() + 15_000;
  for (let seen = activity(stack); Date.now() < deadline; ) {
    await sleep(1000);
    const now = activity(stack);
    if (now === seen && (await stack.isQuiet())) return;
    seen = now;
  }
  console.log('warm-up: still busy after 15 s; the measured counts may include the end of its work');
};

/**
 * The cold inits of each function that ran: how many environments it started (of them, during the measured run,
 * where a warm-up went first), their median init.
 */
const describeEnvironments = (stack: LocalStack, beforeRun?: StartCounts): string => {
  const used = Object.entries(stack.functions).filter(([, f]) => f.invocations > 0);
  if (!used.length) return 'every function in the bench process (--one-process)';
  return used
    .map(([name, f]) => {
      // Timeouts are the measured run's only, where a warm-up went first.
      const before = beforeRun?.[name] ?? { coldStarts: 0, timeouts: 0 };
      const measured = beforeRun ? `, ${f.coldStarts - before.coldStarts} during the measured run` : '';
      const init = `init p50 ${percentile(f.initMs, 50)} ms${measured}`;
      return `${name} ${f.coldStarts} (${init}, ${f.timeouts - before.timeouts} timed out)`;
    })
    .join(', ');
};

/** This benchmark again, unthrottled, in a child process; its figures come back through a file. */
const unthrottledRun = async (): Promise<RunFigures> => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-baseline-'));
  const file = join(dir, 'figures.json');
  const args = ['--ats', ats, '--candidates', String(candidates), '--concurrency', String(values.concurrency)];
  args.push('--warm-up', '0');
  args.push('--worker-timeout', String(values['worker-timeout']));
  if (values['reports-after-all']) args.push('--reports-after-all');
  if (values['one-process']) args.push('--one-process');
  try {
    const child = spawn(
      process.execPath,
      [...process.execArgv, process.argv[1] as string, ...args, '--skip-bundles', '--figures-to', file],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code !== 0) throw new Error(`the unthrottled run exited with ${code}`);
    return JSON.parse(readFileSync(file, 'utf8')) as RunFigures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

const row = (label: string, value: string, target = '') =>
  console.log(`| ${label.padEnd(56)} | ${value.padStart(13)} | ${target.padEnd(16)} |`);
const rule = `+-${'-'.repeat(56)}-+-${'-'.repeat(13)}-+-${'-'.repeat(16)}-+`;
const p50p95 = (values: number[]) => `${percentile(values, 50)} / ${percentile(values, 95)}`;

const topology = values['one-process']
  ? 'Topology: every function in this one process, one module state for all (--one-process: not for figures)'
  : `Topology: each function in its own execution environments (worker threads), as on Lambda: ` +
    `InviteWorker ≤ ${values.concurrency}, WritebackWorker ≤ ${values.concurrency} ` +
    `(their event sources read up to ${Math.max(2, Number(values.concurrency))} batches at once; ` +
    `an SQS event source reads 2 at the least), ` +
    `each webhook function ≤ ${FUNCTION_CONCURRENCY.webhook}; the workers' timeout ${values['worker-timeout']} s`;
if (trickleKind) {
  console.log(topology);
  // Tenant isolation: the trickle alone, then the same trickle beside a burst on the rate-limited connection.
  const trickleCount = Number(values['trickle-candidates']);
  const everyMs = Number(values['trickle-every']) * 1000;
  console.log(
    `Tenant isolation: a trickle of ${trickleCount} ${NAMES[trickleKind]} candidates, one every ${everyMs / 1000} s, ` +
      `alone and beside a burst of ${candidates} on ${NAMES[ats]} at ${rateLimit} per ${windowSeconds} s`,
  );
  const { stack, stop } = await startCounted(ats, rateLimit, windowSeconds);
  const direct = new DynamoDBClient({ endpoint: stack.emulators.endpoints.dynamodb });
  try {
    const trickle = async (cohort: Cohort) => {
      for (let i = 0; i < trickleCount; i++) {
        await moveIn(cohort, 1);
        await sleep(everyMs);
      }
    };
    // Not measured: each function's first environments, each job's interview and each kind's cost on both
    // connections, so neither the trickle alone nor the trickle beside the burst pays for a cold start the other
    // does not.
    const warm = [cohortOf(stack, trickleKind, 10), cohortOf(stack, ats, 10)];
    for (const cohort of warm) await moveIn(cohort, 10);
    await follow(stack, direct, warm, warm, 'warm-up');
    endProgress();
    const alone = cohortOf(stack, trickleKind, trickleCount);
    await Promise.all([trickle(alone), follow(stack, direct, [alone], [alone], 'trickle alone')]);
    endProgress();
    const burst = cohortOf(stack, ats, candidates);
    const beside = cohortOf(stack, trickleKind, trickleCount);
    const burstStarted = Date.now();
    for (let i = 0; i < candidates; i += 20) await moveIn(burst, Math.min(20, candidates - i));
    await Promise.all([trickle(beside), follow(stack, direct, [burst, beside], [beside], 'trickle beside the burst')]);
    endProgress();
    const [a, b] = [latencies(alone), latencies(beside)];
    console.log(rule);
    row(`${NAMES[trickleKind]} trickle`, 'alone', 'beside the burst');
    console.log(rule);
    row('written back', `${alone.written.size}/${trickleCount}`, `${beside.written.size}/${trickleCount}`);
    row('stage flow latency p50 / p95 (ms)', p50p95(a.stage), p50p95(b.stage));
    row('report flow latency p50 / p95 (ms)', p50p95(a.report), p50p95(b.report));
    const ratio = (x: number[], y: number[]) => percentile(y, 95) / percentile(x, 95);
    const stageRatio = ratio(a.stage, b.stage);
    const reportRatio = ratio(a.report, b.report);
    const within = (ratio: number) => check(ratio <= TARGETS.trickleRatio, `≤ ${TARGETS.trickleRatio}`);
    row('p95 beside ÷ alone: stage flow', stageRatio.toFixed(2), within(stageRatio));
    row('p95 beside ÷ alone: report flow', reportRatio.toFixed(2), within(reportRatio));
    console.log(rule);
    console.log(
      `${NAMES[ats]} burst meanwhile: ${burst.moved.size} moved, ${burst.reportStarted.size} invited, ` +
        `${burst.written.size} written back in ${((Date.now() - burstStarted) / 1000).toFixed(0)} s; ` +
        `429s ${stack.ats[ats].throttled()}`,
    );
  } finally {
    await stop();
  }
} else {
  const limitText = limited ? `${rateLimit} per ${windowSeconds} s` : 'no rate limit';
  console.log(
    `Benchmark: ${candidates} candidates on ${NAMES[ats]}, ${limitText}` +
      (values['reports-after-all'] ? ', every candidate invited before any report' : ''),
  );
  if (!values['figures-to']) console.log(topology);
  if (warmUp > 0)
    console.log(
      `Warm-up, not measured: ${warmUp} candidates first, whose invocations start each function's environments ` +
        "(their cold starts share this machine's cores; on Lambda each has its own). `--warm-up 0` measures from cold.",
    );
  // The comparison the rate limit is judged by: the same candidates, unthrottled, in a process of its own (the
  // handlers keep the clients of the stack they were first loaded with).
  const baseline = limited ? await unthrottledRun() : undefined;
  const run = await runPipeline(ats, rateLimit, windowSeconds, limited ? 'rate-limited run' : 'unthrottled run');
  if (values['figures-to']) {
    writeFileSync(values['figures-to'], JSON.stringify(run));
    process.exit(0);
  }
  if (run.perSecond) console.log(`${NAMES[ats]} requests per second: ${run.perSecond.join(' ')}`);
  const per = (n: number) => n / candidates;
  const dynamoTarget = limited ? TARGETS.limited.dynamoPerCandidate : TARGETS.dynamoPerCandidate;
  const sqsTarget = limited ? TARGETS.limited.sqsPerCandidate : TARGETS.sqsPerCandidate;
  console.log(rule);
  row('candidates written back', `${run.written}/${candidates}`);
  row('wall time (first stage change → last write-back)', `${(run.elapsedMs / 1000).toFixed(1)} s`);
  row('end-to-end throughput', `${((run.written / run.elapsedMs) * 1000).toFixed(1)} cand/s`);
  row('stage flow latency p50 / p95 (ms)', p50p95(run.stage));
  // With a rate limit, a report waits for its turns: the bar is the unthrottled flow's.
  const reportP95 = percentile(run.report, 95);
  row(
    'report flow latency p50 / p95 (ms)',
    p50p95(run.report),
    limited ? '' : check(reportP95 <= TARGETS.reportP95Ms, `p95 ≤ ${TARGETS.reportP95Ms / 1000} s`),
  );
  row(
    'DynamoDB requests per candidate',
    per(run.dynamo).toFixed(2),
    check(per(run.dynamo) <= dynamoTarget, `≤ ${dynamoTarget}`),
  );
  row(
    'SQS requests per candidate (sends, receives, deletes)',
    per(run.sqs).toFixed(2),
    check(per(run.sqs) <= sqsTarget, `≤ ${sqsTarget}`),
  );
  row('  of which sent by the connector', per(run.sent).toFixed(2));
  // Per environment only: in one process (--one-process) no invocation is timed.
  if (run.workerBusyMs > 0) row('worker invocation time per candidate (s)', per(run.workerBusyMs / 1000).toFixed(2));
  row('interview-service requests per candidate', per(run.interviewRequests).toFixed(2));
  row(`${NAMES[ats]} requests per candidate`, per(run.atsRequests).toFixed(2));
  if (baseline) {
    const ratio = run.atsRequests / baseline.atsRequests;
    row('  unthrottled run', per(baseline.atsRequests).toFixed(2));
    row('  rate-limited ÷ unthrottled', ratio.toFixed(2), check(ratio <= TARGETS.limited.atsRatio, '≤ 1.10'));
    // The rate the limit allows, and how much of it the run used: requests answered (not 429) over the wall time.
    const allowedPerSecond = rateLimit / windowSeconds;
    const taken = run.atsRequests - run.setupRequests - run.throttled;
    const shareOver = (ms: number) => ((taken / ms) * 1000 * 100) / allowedPerSecond;
    const share = shareOver(run.atsBusyMs);
    const shareTarget = windowSeconds === 10 ? TARGETS.limited.shareAt10s : TARGETS.limited.share;
    row(`${NAMES[ats]} allowed rate (requests per second)`, allowedPerSecond.toFixed(2));
    row(
      '  share of it used, first ATS request to the last',
      `${Math.min(100, share).toFixed(0)} %`,
      check(share >= shareTarget, `≥ ${shareTarget} %`),
    );
    row('  share of it over the wall time', `${Math.min(100, shareOver(run.elapsedMs)).toFixed(0)} %`);
    row(
      '  429 answers (window spent)',
      String(run.throttled),
      check(run.throttled <= TARGETS.limited.throttled * run.atsRequests, '≤ 2 % of requests'),
    );
    row('unthrottled run: wall time', `${(baseline.elapsedMs / 1000).toFixed(1)} s`);
  }
  row('messages in the DLQs', String(run.dlq));
  console.log(rule);
  console.log(`Environments started (cold inits): ${run.environments}`);
  for (const line of run.breakdown) console.log(line);
  if (baseline) for (const line of baseline.breakdown) console.log(`unthrottled: ${line}`);
}

console.log(
  '\nConnections: every function reads the one it serves from the connections table; ' +
    '`npm run bench -- --connections 10000` measures a cold start and a reconciler cycle at 10,000 customers.',
);

if (!values['skip-bundles']) {
  console.log('\nBundles (esbuild, as cdk synth builds them) and cold init (fresh node process, median of 15):');
  const widths = [18, 10, 15, 10, 15];
  const line = (cells: string[]) =>
    console.log(
      `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`,
    );
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  console.log(rule);
  line(['function', 'bundle', 'target', 'cold init', 'target']);
  console.log(rule);
  for (const bundle of await measureBundles()) {
    const kb = bundle.bytes / 1024;
    line([
      bundle.name,
      `${kb.toFixed(1)} KB`,
      check(kb <= TARGETS.bundleKb, `${TARGETS.bundleKb} KB`),
      `${bundle.coldInitMs.toFixed(0)} ms`,
      check(bundle.coldInitMs <= TARGETS.coldInitMs, `${TARGETS.coldInitMs} ms`),
    ]);
  }
  console.log(rule);
}
