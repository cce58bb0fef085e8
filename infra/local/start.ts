import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { checkSummary, DEMO_LIFECYCLE, formatSummary, runDemo } from './demo';
import { LOCAL_DEFAULTS, startLocalStack } from './local-stack';
import { errorMessage } from '../../shared/errors';

/**
 * `npm start`: the whole connector on one machine, a demo run through it, then it keeps serving until Ctrl-C.
 * `npm start -- --once`: the demo only; exits 0, or non-zero naming the step that failed.
 */
const USAGE = `usage: npm start [-- options]
  (no option)             the local stack and the demo through it, then serving until Ctrl-C (the connector on
                          :${LOCAL_DEFAULTS.gatewayPort}; details in .local/stack.json)
  --once                  the demo, then exit: 0, or non-zero naming the step that failed (on free ports)
  --no-demo               serve without the demo, the connections as the file sets them (for the demo, every
                          trigger reminds and expires in seconds, and statuses are tags)
  --config FILE           another connections file (the sandboxes' \${…_SANDBOX_URL} are filled in)
  --port N                the connector's port (default ${LOCAL_DEFAULTS.gatewayPort})
  --verbose               the functions' INFO log lines
  --per-candidate         every connection with per-candidate invitations
  --sparse-reports RATE   the interview-service sandbox leaves fields out of this share of its reports
  --page-cap N            the interview-service sandbox answers at most N items a page, whatever the limit asked
  --one-process           every handler in one process, for a debugger's breakpoints; never for figures
  --help, -h              these options`;

/** The command line; an unknown option or a missing value is named, with the usage, never a stack trace. */
function parseCommandLine() {
  try {
    return parseArgs({ options: OPTIONS });
  } catch (error) {
    console.error(`npm start: ${errorMessage(error)}\n${USAGE}`);
    process.exit(2);
  }
}

const OPTIONS = {
  once: { type: 'boolean', default: false },
  config: { type: 'string', default: LOCAL_DEFAULTS.configPath },
  port: { type: 'string', default: String(LOCAL_DEFAULTS.gatewayPort) },
  'no-demo': { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
  'per-candidate': { type: 'boolean', default: false },
  'sparse-reports': { type: 'string', default: '0' },
  'page-cap': { type: 'string', default: '0' },
  // Every handler in this process, one module state for all: for a debugger, never for figures.
  'one-process': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;
const { values } = parseCommandLine();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
for (const [flag, ok] of [
  ['--port', /^\d+$/.test(values.port) && Number(values.port) < 65_536],
  ['--sparse-reports', Number(values['sparse-reports']) >= 0 && Number(values['sparse-reports']) <= 1],
  ['--page-cap', /^\d+$/.test(values['page-cap'])],
] as const)
  if (!ok) {
    const kind = flag === '--sparse-reports' ? 'a share from 0 to 1' : 'a whole number';
    console.error(`npm start: ${flag} ${values[flag.slice(2) as 'port']}: expected ${kind}\n${USAGE}`);
    process.exit(2);
  }

/** `--per-candidate`: the same connections with per-candidate invitations, written beside the local state. */
function configFor(path: string): string {
  if (!existsSync(path)) {
    console.error(`npm start: --config ${path}: no such file`);
    process.exit(2);
  }
  if (!values['per-candidate']) return path;
  const document = JSON.parse(readFileSync(path, 'utf8')) as { connections: { interviewService: object }[] };
  for (const connection of document.connections)
    connection.interviewService = { ...connection.interviewService, invites: { mode: 'per-candidate' } };
  mkdirSync('.local', { recursive: true });
  writeFileSync('.local/connections.per-candidate.json', JSON.stringify(document, null, 2));
  return '.local/connections.per-candidate.json';
}

const started = Date.now();
console.log(
  'Starting DynamoDB Local, local SQS, local SES, the interview-service sandbox ' +
    'and the Greenhouse, Ashby, Lever, Workable and Kombo sandboxes…',
);
const stack = await startLocalStack({
  configPath: configFor(values.config),
  // Two customers through Kombo's unified ATS API beside the four ATSs, unless another file is given.
  extraConfigPaths: values.config === LOCAL_DEFAULTS.configPath ? ['config/connections.kombo.json'] : [],
  ports: values.once
    ? {}
    : { gateway: Number(values.port), interview: LOCAL_DEFAULTS.interviewPort, kombo: LOCAL_DEFAULTS.komboPort },
  fixedAtsPorts: !values.once,
  logLevel: values.verbose ? 'INFO' : 'WARN',
  reconcileIntervalMs: values.once ? 0 : LOCAL_DEFAULTS.reconcileIntervalMs,
  // For the demo only: statuses as tags in every ATS, and reminders and expiry in seconds instead of days, so it shows
  // them. Without it (`--no-demo`), the connections are served as the file sets them.
  ...(values['no-demo'] ? {} : { lifecycle: { ...DEMO_LIFECYCLE, reminders: { ...DEMO_LIFECYCLE.reminders } } }),
  runtime: values['one-process'] ? 'one-process' : 'environments',
}).catch((error: unknown) => {
  // A bad connections file, a port in use, Java missing: one clear line, no stack trace.
  console.error(`Could not start: ${errorMessage(error)}`);
  process.exit(1);
});
// The interview-service sandbox's documented oddities, on demand: sparse reports, pages capped below `limit`.
stack.interview.setFaults({
  sparseReportRate: Number(values['sparse-reports']),
  maxPageSize: Number(values['page-cap']),
});
console.log(
  `Connector listening on ${stack.gatewayUrl} (${Date.now() - started} ms); stack details in ${stack.stackFile}`,
);
if (!values['no-demo'])
  console.log(
    `For the demo, every trigger reminds after ${DEMO_LIFECYCLE.reminders.afterHours * 3600} s and expires after ` +
      `${Math.round(DEMO_LIFECYCLE.expireAfterDays * 86_400)} s, every stage is swept each ` +
      `${DEMO_LIFECYCLE.sweepEveryMinutes * 60} s and statuses are tags (--no-demo: as the connections file sets them)`,
  );
// The operator's console on one machine: its local sign-in is this key (Cognito's on AWS).
console.log(`Console: ${stack.gatewayUrl}/console/ (sign in with the operator key ${stack.operatorKey})`);
console.log(
  stack.runtime === 'environments'
    ? 'Each function runs in its own execution environments (worker threads), as on Lambda'
    : 'Every function in this one process, one module state for all (--one-process: for debugging)',
);

let exitCode = 0;
/** Its state is in memory only, so nothing is drained: what has not stopped by then ends with the process. */
const STOP_WAIT_MS = 5_000;
let stopping: Promise<never> | undefined;
/** Stops the stack once, however many times it is asked (a signal during the demo, then the demo's end). */
const shutdown = (code: number): Promise<never> =>
  (stopping ??= (async () => {
    const stopped = stack.stop().then(() => true);
    const waited = new Promise<false>((resolve) => setTimeout(() => resolve(false), STOP_WAIT_MS).unref());
    if (!(await Promise.race([stopped, waited]))) console.log(`Stopped after ${STOP_WAIT_MS / 1000} s, work in flight`);
    process.exit(code);
  })());
// A terminal's Ctrl-C reaches npm, tsx and this process at once: the first signal stops it, the rest find it stopping.
const onSignal = (signal: NodeJS.Signals) => {
  if (stopping !== undefined) return;
  console.log(`${signal === 'SIGINT' ? 'Ctrl-C' : signal}: stopping the local stack…`);
  void shutdown(signal === 'SIGINT' ? 130 : 143);
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

if (!values['no-demo']) {
  try {
    // Each step's line says when it came, in seconds from the start: where a run's time goes.
    const at = (line: string) => console.log(`${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`);
    const summary = await runDemo(stack, at);
    console.log(formatSummary(summary));
    const problem = checkSummary(summary);
    if (problem) {
      console.error(`Demo failed at ${problem}`);
      exitCode = 1;
    }
  } catch (error) {
    // Stopped under it (Ctrl-C): its calls fail as the stack goes, which says nothing of the connector.
    if (stopping === undefined) console.error(`Demo failed at ${errorMessage(error)}`);
    exitCode = 1;
  }
}

if (values.once || stopping !== undefined) await shutdown(exitCode);
console.log('Serving until Ctrl-C. Send your own webhooks: URLs and secrets are in', stack.stackFile);
console.log('Check every connection end to end (credentials, stages, webhooks): npm run doctor');
