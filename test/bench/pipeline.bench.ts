import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { startCountingProxy } from '../../infra/local/counting-proxy';
import { startLocalStack } from '../../infra/local/local-stack';
import { measureBundles } from './bundles';
import { ConnectionRegistry, loadConnectionsFile } from '../../shared/config';
import { connectionsDocument } from '../helpers/many-connections';

/**
 * `npm run bench [-- --candidates 200 --concurrency 4 --ats-rate-limit 100000 --ats-rate-window 30 --per-second]`:
 * candidates through the whole local pipeline on Greenhouse (stage change → interview → invite → report →
 * write-back), then the figures; with a rate limit, also the allowed rate, the share of it used and the 429s.
 */
const { values } = parseArgs({
  options: {
    candidates: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '4' },
    'ats-rate-limit': { type: 'string', default: '100000' },
    'ats-rate-window': { type: 'string', default: '30' },
    'skip-bundles': { type: 'boolean', default: false },
    /** Prints the Greenhouse requests answered in each second of the run: how the windows were filled. */
    'per-second': { type: 'boolean', default: false },
  },
});
const candidates = Number(values.candidates);
const TARGETS = { dynamoPerCandidate: 8, sqsPerCandidate: 3, bundleKb: 300, coldInitMs: 200 };
const check = (ok: boolean, target: string) => `${ok ? 'ok' : 'MISSED'} ≤ ${target}`;

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

let dynamoProxy: Awaited<ReturnType<typeof startCountingProxy>> | undefined;
let sqsProxy: Awaited<ReturnType<typeof startCountingProxy>> | undefined;
console.log(
  `Benchmark: ${candidates} candidates, worker concurrency ${values.concurrency}, ` +
    `Greenhouse limit ${values['ats-rate-limit']} per ${values['ats-rate-window']} s`,
);
const stack = await startLocalStack({
  workDir: '.local/bench',
  reconcileIntervalMs: 0,
  maxConcurrency: Number(values.concurrency),
  atsRateLimits: { greenhouse: Number(values['ats-rate-limit']) },
  greenhouseRateWindowMs: Number(values['ats-rate-window']) * 1000,
  logLevel: 'ERROR',
  wrapEndpoints: async (endpoints) => {
    dynamoProxy = await startCountingProxy(endpoints.dynamodb);
    sqsProxy = await startCountingProxy(endpoints.sqs);
    return { ...endpoints, dynamodb: dynamoProxy.url, sqs: sqsProxy.url };
  },
});
// The benchmark's own reads go straight to DynamoDB Local, past the counter.
const direct = new DynamoDBClient({ endpoint: stack.emulators.endpoints.dynamodb });
try {
  dynamoProxy?.reset();
  sqsProxy?.reset();
  const jobs = [3301, 3302];
  const started = Date.now();
  const ghTotal = () => Object.values(stack.greenhouse.state.requests).reduce((a, b) => a + b, 0);
  const samples: number[] = [];
  const sampler = values['per-second'] ? setInterval(() => samples.push(ghTotal()), 1000) : undefined;
  const moveStarted = new Map<number, number>();
  const applications = Array.from({ length: candidates }, (_, i) =>
    stack.greenhouse.addCandidate({
      first_name: 'Bench',
      last_name: String(i),
      email: `bench-${i}@candidates.example.com`,
      job_id: jobs[i % jobs.length] as number,
    }),
  );
  // Stage changes arrive in waves of 20, as an ATS's webhook workers would send them.
  for (let i = 0; i < applications.length; i += 20) {
    await Promise.all(
      applications.slice(i, i + 20).map(async (a) => {
        moveStarted.set(a.id, Date.now());
        await stack.greenhouse.moveCandidate({ application_id: a.id, stage_name: 'AI Interview' });
      }),
    );
    progress(`stage changes sent: ${Math.min(i + 20, candidates)}/${candidates}`);
  }
  const scanApplications = async () =>
    ((await direct.send(new ScanCommand({ TableName: stack.tables.applications }))).Items ?? []).map((item) =>
      unmarshall(item),
    );
  const deadline = Date.now() + 10 * 60_000;
  let invited: Record<string, any>[] = [];
  while (Date.now() < deadline) {
    invited = (await scanApplications()).filter((a) => a.state === 'invited');
    progress(`invited: ${invited.length}/${candidates}`);
    if (invited.length >= candidates) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const reportStarted = new Map<string, number>();
  for (const application of invited) {
    const candidate = stack.greenhouse.state.candidates.find((c) => String(c.id) === application.atsCandidateId);
    reportStarted.set(application.atsApplicationId, Date.now());
    stack.interview.completeInterview({
      interview_id: application.interviewId,
      candidate_name: 'Bench Candidate',
      candidate_email: candidate?.email_addresses[0]?.value as string,
      delay_ms: 0,
    });
  }
  let written: Record<string, any>[] = [];
  while (Date.now() < deadline) {
    written = (await scanApplications()).filter((a) => a.state === 'written_back');
    progress(`written back: ${written.length}/${candidates}`);
    if (written.length >= candidates) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  await stack.waitForQuiet(60_000);
  const elapsedMs = Date.now() - started;
  if (sampler) {
    clearInterval(sampler);
    console.log(`GH requests per second: ${samples.map((v, i) => v - (samples[i - 1] ?? 0)).join(' ')}`);
  }
  if (process.stdout.isTTY) process.stdout.write('\n');

  const stageLatency = written.map(
    (a) => (a.inviteNoteAt ?? a.inviteEmailAt) - (moveStarted.get(Number(a.atsApplicationId)) ?? started),
  );
  const reportLatency = written.map(
    (a) => (a.movedAt ?? a.reportNoteAt) - (reportStarted.get(a.atsApplicationId) ?? started),
  );
  const dynamoTotal = dynamoProxy?.total() ?? NaN;
  const sqsTotal = sqsProxy?.total() ?? NaN;
  const interviewRequests = Object.values(stack.interview.state.requests).reduce((a, b) => a + b, 0);
  const atsRequests = Object.values(stack.greenhouse.state.requests).reduce((a, b) => a + b, 0);
  const dlq = await stack.dlqDepths();

  const row = (label: string, value: string, target = '') =>
    console.log(`| ${label.padEnd(54)} | ${value.padStart(12)} | ${target.padEnd(14)} |`);
  const rule = `+-${'-'.repeat(54)}-+-${'-'.repeat(12)}-+-${'-'.repeat(14)}-+`;
  console.log(rule);
  row('candidates written back', `${written.length}/${candidates}`);
  row('wall time (first stage change → last write-back)', `${(elapsedMs / 1000).toFixed(1)} s`);
  row('end-to-end throughput', `${((written.length / elapsedMs) * 1000).toFixed(1)} cand/s`);
  row('stage flow latency p50 / p95 (ms)', `${percentile(stageLatency, 50)} / ${percentile(stageLatency, 95)}`);
  row('report flow latency p50 / p95 (ms)', `${percentile(reportLatency, 50)} / ${percentile(reportLatency, 95)}`);
  row(
    'DynamoDB requests per candidate',
    (dynamoTotal / candidates).toFixed(2),
    check(dynamoTotal / candidates <= TARGETS.dynamoPerCandidate, String(TARGETS.dynamoPerCandidate)),
  );
  const sent = (sqsProxy?.counts.get('SendMessage') ?? 0) + (sqsProxy?.counts.get('SendMessageBatch') ?? 0);
  row(
    'SQS requests per candidate (sends, receives, deletes)',
    (sqsTotal / candidates).toFixed(2),
    check(sqsTotal / candidates <= TARGETS.sqsPerCandidate, String(TARGETS.sqsPerCandidate)),
  );
  row('  of which sent by the connector', (sent / candidates).toFixed(2));
  row('interview-service requests per candidate', (interviewRequests / candidates).toFixed(2));
  row('ATS (Greenhouse) requests per candidate', (atsRequests / candidates).toFixed(2));
  // The rate the limit allows, and how much of it the run used: requests answered (not 429) over the wall time.
  const allowedPerSecond = Number(values['ats-rate-limit']) / Number(values['ats-rate-window']);
  const answeredPerSecond = ((atsRequests - stack.greenhouse.state.throttled) / elapsedMs) * 1000;
  row('Greenhouse allowed rate (requests per second)', allowedPerSecond.toFixed(2));
  row('  share of it used over the run', `${Math.min(100, (answeredPerSecond / allowedPerSecond) * 100).toFixed(0)} %`);
  row('  429 answers (window spent)', String(stack.greenhouse.state.throttled));
  row('messages in the DLQs', String(dlq.stage + dlq.report));
  console.log(rule);
  console.log(`DynamoDB by operation: ${[...(dynamoProxy?.counts ?? [])].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(`SQS by operation:      ${[...(sqsProxy?.counts ?? [])].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(
    `interview service:     ${Object.entries(stack.interview.state.requests)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  console.log(
    `Greenhouse:            ${Object.entries(stack.greenhouse.state.requests)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
} finally {
  await stack.stop();
  await dynamoProxy?.close();
  await sqsProxy?.close();
}

{
  // Every function parses the connections file once per cold start: measured at a vendor's whole customer base.
  const file = join(mkdtempSync(join(tmpdir(), 'bench-connections-')), 'connections.json');
  writeFileSync(file, JSON.stringify(connectionsDocument(1000)));
  const median = (measure: () => void) => {
    const runs = Array.from({ length: 7 }, () => {
      const started = performance.now();
      measure();
      return performance.now() - started;
    }).sort((a, b) => a - b);
    return (runs[Math.floor(runs.length / 2)] as number).toFixed(1);
  };
  const coldStart = median(() => ConnectionRegistry.fromFile(file).get('customer-500'));
  const whole = median(() => loadConnectionsFile(file));
  console.log(
    `\nConnections file of 1,000 connections (median of 7): a cold start reads it and validates its one connection ` +
      `in ${coldStart} ms; cdk synth validates all 1,000 in ${whole} ms`,
  );
  rmSync(dirname(file), { recursive: true, force: true });
}

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
