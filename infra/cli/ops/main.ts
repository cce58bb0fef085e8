import {
  type AdminTarget,
  adminCall,
  connectionsCommand,
  connectionsOfFile,
  noSuchFile,
  partnerKeyRefusal,
  tableConnections,
} from './connections';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { dynamoMappingStore } from '../../../shared/mapping';
import { QueuePublisher, type ReportCreatedMessage } from '../../../shared/queue';
import { readOpsOutputs } from '../../aws/stack-outputs';
import {
  applicationStatusLines,
  dlqMessageLine,
  FAILED_HINT,
  failedApplicationLine,
  iso,
  REFUSED_STEP_NAMES,
} from './lines';
import { refusedWriteBackSteps } from '../../../shared/pipeline/records';
import { orderLines, orderUrlLines, printPartnerKey, scanOrders } from './orders';
import { errorMessage } from '../../../shared/errors';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { fileSecretStore, secretsManagerStore } from '../../../shared/config/secret-store';
import { komboPackages } from './kombo';
import { requestOnInvitation, type InvitationRequest } from './invitations';
import { localStackDown } from '../local-stack-down';

/**
 * `npm run ops -- <command>`: the operator's tools. Locally they read `.local/stack.json` (written by
 * `npm start`); on AWS, pass `--aws` with `--outputs FILE` (written by `cdk deploy --outputs-file FILE`) or
 * set the outputs as environment variables (infra/aws/stack-outputs.ts names both).
 */
const USAGE = `usage: npm run ops -- <command> [--stack .local/stack.json | --aws [--outputs FILE] [--stack-name NAME]]
  dlq list --queue stage|report               messages waiting in a dead-letter queue (ids and kinds only)
  dlq redrive --queue stage|report            move them back to their queue (SQS StartMessageMoveTask)
  status --connection C --application A       the application's state and each step's time
  unmatched [--connection C]                  reports parked because no application matched, with the reason
  failed [--connection C]                     applications the ATS or the service refused for good, with the reason
  match --connection C --report R --application A   write a parked report back to application A
  retry --connection C --application A        once the cause is fixed, write back again a failed write-back's report
  resend --connection C --application A       e-mail the invitation's link again (once; not to a candidate who left)
  extend --connection C --application A [--days N]   add N days (default 7) to the invitation's expiry (once)
  purge --connection C --candidate ID         forget a candidate: delete every record held about them
  urls [--connections FILE]                   each connection's webhook URLs and order endpoints (from ApiUrl); the
                                              connections in the table, or those of FILE
  connections list|export                     the connections in the table (export: as a connections file)
  connections get|disable|enable|audit ID     one connection, turned off or on, or its changes (who, what, when)
  connections rotate-keys ID                  new keys the connector issues for it (written to its secret, not shown)
  connections put|import FILE                 each connection of FILE created or replaced (import: unchanged ones
                                              left alone)
  connections import FILE --prune             the same, and the connections the file does not hold deleted
  orders [--connection C]                     assessment orders by source and state; those with work left or failed
  partner-key --connection C                  a new key to give the customer for its ATS's order calls
  kombo-packages --connection C [--connections FILE] [--publish [--remove]]
                                              each Kombo integration's packages against the configured tests;
                                              --publish makes them so, --remove deletes those no longer configured`;

const OPTIONS = {
  aws: { type: 'boolean', default: false },
  stack: { type: 'string', default: '.local/stack.json' },
  outputs: { type: 'string' },
  'stack-name': { type: 'string', default: 'AtsInterviewConnector' },
  queue: { type: 'string' },
  connection: { type: 'string' },
  application: { type: 'string' },
  report: { type: 'string' },
  candidate: { type: 'string' },
  connections: { type: 'string' },
  days: { type: 'string' },
  publish: { type: 'boolean', default: false },
  remove: { type: 'boolean', default: false },
  prune: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** The command line; an unknown option or a missing value is named, with the usage, never a stack trace. */
function parseCommandLine() {
  try {
    return parseArgs({ allowPositionals: true, options: OPTIONS });
  } catch (error) {
    console.error(`ops: ${errorMessage(error)}\n${USAGE}`);
    process.exit(2);
  }
}
const { values, positionals } = parseCommandLine();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

function fail(message: string, code = 2): never {
  console.error(message);
  process.exit(code);
}

interface Target {
  tables: { jobs: string; applications: string; events: string; orders: string };
  queues: Record<'stage' | 'report', { url: string; dlqUrl: string; dlqArn?: string; arn?: string }>;
  dynamo: DynamoDBClient;
  sqs: SQSClient;
}

/** The stack's section of the file `cdk deploy --outputs-file` wrote, when `--outputs` names one. */
function stackOutputs(): Record<string, unknown> | undefined {
  if (!values.outputs) return undefined;
  if (!existsSync(values.outputs))
    fail(`${values.outputs} not found: write it with cdk deploy --outputs-file ${values.outputs}`);
  const file = JSON.parse(readFileSync(values.outputs, 'utf8')) as Record<string, Record<string, unknown>>;
  return (
    file[values['stack-name']] ??
    fail(
      `${values.outputs} has no stack ${values['stack-name']} ` +
        `(it has: ${Object.keys(file).join(', ') || 'none'}); pass --stack-name`,
    )
  );
}

function target(): Target {
  if (values.aws) {
    const outputs = stackOutputs();
    const read = readOpsOutputs(outputs, process.env);
    if ('missing' in read)
      fail(
        `--aws: the deployed stack's outputs are missing: ${read.missing.join(', ')}. ` +
          'Pass --outputs FILE from cdk deploy --outputs-file, or set the variables.',
      );
    const o = read.values;
    return {
      tables: { jobs: o.jobsTable, applications: o.applicationsTable, events: o.eventsTable, orders: o.ordersTable },
      queues: {
        stage: { url: o.stageQueueUrl, dlqUrl: o.stageDlqUrl },
        report: { url: o.reportQueueUrl, dlqUrl: o.reportDlqUrl },
      },
      dynamo: new DynamoDBClient({}),
      sqs: new SQSClient({}),
    };
  }
  if (!existsSync(values.stack)) fail(`${values.stack} not found: start the connector with npm start, or pass --aws`);
  const stack = JSON.parse(readFileSync(values.stack, 'utf8'));
  const local = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  return {
    tables: stack.dynamodb.tables,
    queues: stack.sqs.queues,
    dynamo: new DynamoDBClient({ endpoint: stack.dynamodb.url, ...local }),
    sqs: new SQSClient({ endpoint: stack.sqs.url, ...local }),
  };
}

const require = (name: 'queue' | 'connection' | 'application' | 'report' | 'candidate'): string =>
  values[name] ?? fail(`--${name} is required\n${USAGE}`);
const queueName = (): 'stage' | 'report' => {
  const name = require('queue');
  if (name !== 'stage' && name !== 'report') fail('--queue must be stage or report');
  return name;
};

/** A report queued for write-back again, by an operator: the worker claims it as the reconciler's would be. */
function reportAgain(
  connectionId: string,
  report: Pick<ReportCreatedMessage, 'reportId' | 'interviewId' | 'candidateId' | 'atsApplicationId'>,
): ReportCreatedMessage {
  const envelope = { v: 1, enqueueId: randomUUID(), connectionId, receivedAt: Date.now() } as const;
  return { ...envelope, kind: 'report-created', source: 'reconciler', ...report };
}

async function arnOf(sqs: SQSClient, url: string): Promise<string> {
  const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return attributes.Attributes?.QueueArn as string;
}

/**
 * The URLs to paste into each ATS and into the interview service, one connection a line: the stack has one
 * output (`ApiUrl`), not one per connection. The interview URL's last segment is the connection's secret token,
 * shown as a placeholder, never read.
 */
async function printUrls(): Promise<void> {
  const connections = values.connections
    ? connectionsOfFile(values.connections, localPlaceholders())
    : await tableConnections(adminTarget());
  let apiUrl: unknown;
  if (values.aws) apiUrl = stackOutputs()?.ApiUrl ?? process.env.API_URL;
  else if (existsSync(values.stack)) apiUrl = JSON.parse(readFileSync(values.stack, 'utf8')).connector?.url;
  if (typeof apiUrl !== 'string' || !apiUrl)
    fail('no ApiUrl: pass --aws --outputs FILE (cdk deploy --outputs-file), set API_URL, or run npm start');
  for (const c of connections) {
    console.log(`${c.id} (${c.ats}): ${apiUrl}/webhooks/ats/${c.id}`);
    console.log(`${c.id} (interview service): ${apiUrl}/webhooks/interview/${c.id}/<interviewWebhookToken>`);
    for (const line of orderUrlLines(c, apiUrl)) console.log(line);
  }
}

/** The running local stack's `${…_SANDBOX_URL}` values, for a connections file that names them (none with --aws). */
function localPlaceholders(): Record<string, string> {
  if (values.aws || !existsSync(values.stack)) return {};
  return (
    (JSON.parse(readFileSync(values.stack, 'utf8')) as { placeholders?: Record<string, string> }).placeholders ?? {}
  );
}

/** The connection's Kombo packages: compared, or published (the secret from Secrets Manager with --aws). */
async function publishKomboPackages(): Promise<void> {
  const id = require('connection');
  const local = existsSync(values.stack) ? JSON.parse(readFileSync(values.stack, 'utf8')) : undefined;
  const file = values.connections ?? local?.files?.connections ?? fail(`--connections is required\n${USAGE}`);
  const connection =
    connectionsOfFile(file, localPlaceholders()).find((c) => c.id === id) ?? fail(`no connection ${id} in ${file}`);
  const secrets = values.aws
    ? secretsManagerStore(new SecretsManagerClient({}))
    : fileSecretStore(local?.files?.secrets ?? fail('no local secrets: run npm start, or pass --aws'));
  process.exitCode = await komboPackages(connection, secrets, { publish: values.publish, remove: values.remove }, (l) =>
    console.log(l),
  );
}

/** The admin API: the local stack's key, or SigV4 with the operator's AWS credentials on the deployed ApiUrl. */
function adminTarget(): AdminTarget {
  const found = findAdminTarget();
  return typeof found === 'string' ? fail(found) : found;
}

/** The admin API, or why it cannot be reached. */
function findAdminTarget(): AdminTarget | string {
  if (values.aws) {
    const apiUrl = stackOutputs()?.ApiUrl ?? process.env.API_URL;
    const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    if (typeof apiUrl !== 'string' || !apiUrl) return 'no ApiUrl: pass --aws --outputs FILE, or set API_URL';
    if (!region) return "--aws: set AWS_REGION to the stack's region";
    return { url: `${apiUrl.replace(/\/$/, '')}/admin/connections`, region };
  }
  if (!existsSync(values.stack)) return `${values.stack} not found: start the connector with npm start, or pass --aws`;
  const stack = JSON.parse(readFileSync(values.stack, 'utf8')) as {
    admin?: AdminTarget;
    placeholders?: Record<string, string>;
  };
  if (!stack.admin) return `${values.stack} names no admin API: start the connector again with npm start`;
  return { ...stack.admin, placeholders: stack.placeholders };
}

/**
 * A mistyped `--connection` finds nothing, as a connection with nothing to show does. When a command found nothing,
 * the admin API is asked whether the connection exists; unknown to it, that is said (an admin API out of reach adds
 * nothing). A command that found something asks nothing more.
 */
async function noSuchConnection(): Promise<string | undefined> {
  const id = values.connection;
  const admin = id ? findAdminTarget() : undefined;
  if (!id || !admin || typeof admin === 'string') return undefined;
  const answer = await adminCall(admin, 'GET', `/${encodeURIComponent(id)}`).catch(() => undefined);
  // The admin API's own answer (`no connection C`), not a gateway's 404 for a wrong API URL.
  const unknown = answer?.status === 404 && String(answer.body?.error ?? '').startsWith('no connection');
  return unknown ? `no connection ${id} in the connections table (see: npm run ops -- connections list)` : undefined;
}

/** `fail`, naming a connection that does not exist. */
async function failFinding(message: string): Promise<never> {
  return fail([message, await noSuchConnection()].filter(Boolean).join('\n'));
}

/** A listing that found nothing for a connection that does not exist: said, and exit 1. */
async function flagUnknownConnection(found: number): Promise<void> {
  const line = found ? undefined : await noSuchConnection();
  if (!line) return;
  console.error(line);
  process.exitCode = 1;
}

/**
 * A partner key for a connection that takes orders from inside its ATS. Where the admin API answers (the local stack,
 * or `--aws`), a connection it does not know, or one that takes no such orders, is refused (exit 1), never issued.
 */
async function partnerKey(id: string): Promise<void> {
  const admin = findAdminTarget();
  const answer =
    typeof admin === 'string'
      ? undefined
      : await adminCall(admin, 'GET', `/${encodeURIComponent(id)}`).catch(() => undefined);
  const refused = partnerKeyRefusal(id, answer);
  if (refused) fail(refused, 1);
  printPartnerKey(id);
}

/** How many words each command takes (`dlq list`, `connections get ID`); one more is a mistake, not ignored. */
const WORDS: Record<string, number> = { dlq: 2, connections: 3 };

async function main(): Promise<void> {
  const [command, sub] = positionals;
  const extra = positionals.slice(command ? (WORDS[command] ?? 1) : 0);
  if (extra.length) fail(`ops: unexpected ${extra.join(' ')} after ${command}\n${USAGE}`);
  if (command === 'urls') return printUrls();
  if (command === 'connections') {
    const { lines, code } = await connectionsCommand(adminTarget(), { sub, arg: positionals[2], prune: values.prune });
    // What went wrong to stderr, so a script reading the output (an export) gets only the answer.
    for (const line of lines) (code ? console.error : console.log)(line);
    process.exitCode = code;
    return;
  }
  if (command === 'partner-key') return partnerKey(require('connection'));
  if (command === 'kombo-packages') return publishKomboPackages();
  const t = target();
  const store = dynamoMappingStore({ tables: t.tables, client: t.dynamo });
  if (command === 'dlq' && sub === 'list') {
    const queue = t.queues[queueName()];
    // SQS has no read without a receive: a visibility of 0 leaves each message visible at once (to the next look and
    // to a redrive), and the count is the queue's own, not what one receive happened to return.
    const [attributes, received] = await Promise.all([
      t.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queue.dlqUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
      ),
      t.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queue.dlqUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          AttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      ),
    ]);
    const messages = received.Messages ?? [];
    const count = Number(attributes.Attributes?.ApproximateNumberOfMessages ?? messages.length);
    console.log(
      `${count} message(s) in the ${values.queue} DLQ` +
        (count > messages.length ? `; ${messages.length} shown (SQS returns up to 10 a read)` : ''),
    );
    for (const m of messages) console.log(dlqMessageLine(m));
    return;
  }
  if (command === 'dlq' && sub === 'redrive') {
    const queue = t.queues[queueName()];
    const dlqArn = queue.dlqArn ?? (await arnOf(t.sqs, queue.dlqUrl));
    // The destination is named: a message put in the DLQ by hand has no source queue to go back to.
    const task = await t.sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: dlqArn,
        DestinationArn: queue.arn ?? (await arnOf(t.sqs, queue.url)),
      }),
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      const tasks = await t.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqArn, MaxResults: 1 }));
      const latest = tasks.Results?.[0];
      if (latest?.Status !== 'RUNNING' || Date.now() > deadline) {
        const moved = latest?.ApproximateNumberOfMessagesMoved ?? 0;
        console.log(
          `redrive ${task.TaskHandle ? 'started' : 'requested'}: ${latest?.Status ?? 'unknown'}, ` +
            `${moved} message(s) moved back to the ${values.queue} queue`,
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  if (command === 'status') {
    const records = await store.findApplicationsByAtsId(require('connection'), require('application'));
    if (!records.length) return failFinding(`no application ${values.application} for connection ${values.connection}`);
    for (const r of records) for (const line of applicationStatusLines(r)) console.log(line);
    return;
  }
  if (command === 'unmatched') {
    const items = await store.listParkedReports(values.connection);
    console.log(`${items.length} parked report(s)`);
    for (const i of items)
      console.log(
        `  ${i.connectionId}  report ${i.reportId}  interview ${i.interviewId}  parked ${iso(i.parkedAt)}  ${i.reason}`,
      );
    await flagUnknownConnection(items.length);
    return;
  }
  if (command === 'failed') {
    const failed = await store.listFailedApplications(values.connection);
    console.log(`${failed.length} failed application(s)`);
    for (const r of failed) console.log(failedApplicationLine(r));
    if (failed.length) console.log(FAILED_HINT);
    await flagUnknownConnection(failed.length);
    return;
  }
  if (command === 'retry') {
    const [connectionId, applicationId] = [require('connection'), require('application')];
    const failed = (await store.findApplicationsByAtsId(connectionId, applicationId)).filter(
      (r) => r.state === 'failed' || refusedWriteBackSteps(r).length > 0,
    );
    if (!failed.length)
      return failFinding(`application ${applicationId} of ${connectionId} has nothing failed or refused to retry`);
    for (const r of failed) {
      if (!r.reportId) {
        console.log(`trigger ${r.triggerId}: the invite failed; move the candidate into the stage again to retry it`);
        continue;
      }
      if (!r.reportCandidateId || !r.interviewId) {
        console.log(
          `trigger ${r.triggerId}: report ${r.reportId} was claimed before the connector recorded its candidate; ` +
            'post it by hand',
        );
        continue;
      }
      if (!(await store.reopenWriteBack(r))) {
        console.log(`trigger ${r.triggerId}: changed since it was read (retried already?); nothing done`);
        continue;
      }
      // No atsApplicationId: the worker finds the application by its own mapping, as for a webhook.
      const report = { reportId: r.reportId, interviewId: r.interviewId, candidateId: r.reportCandidateId };
      await new QueuePublisher({ client: t.sqs }).publish(t.queues.report.url, reportAgain(connectionId, report));
      const again = refusedWriteBackSteps(r).map((step) => REFUSED_STEP_NAMES[step]);
      const what = again.length ? ` (the refused ${again.join(', ')}, and the status)` : '';
      console.log(`trigger ${r.triggerId}: report ${r.reportId} queued for write-back again${what}`);
    }
    return;
  }
  if (command === 'resend' || command === 'extend') {
    const days = Number(values.days ?? 7);
    if (command === 'extend' && !(days > 0 && days <= 365)) fail('--days must be a number of days from 1 to 365');
    const request: InvitationRequest = {
      action: command,
      connectionId: require('connection'),
      applicationId: require('application'),
      days,
    };
    const publisher = new QueuePublisher({ client: t.sqs });
    const done = await requestOnInvitation(request, { store, publisher, stageQueueUrl: t.queues.stage.url });
    // Nothing queued (no such application, or no invitation it can act on): refused, exit 2 as for `retry` and
    // `match`, so a script tells it from a failure (exit 1).
    for (const line of done.lines) (done.queued ? console.log : console.error)(line);
    await flagUnknownConnection(done.queued ? 1 : 0);
    if (!done.queued) process.exitCode = 2;
    return;
  }
  if (command === 'match') {
    const [connectionId, reportId, applicationId] = [require('connection'), require('report'), require('application')];
    const parked = await store.parkedReport(connectionId, reportId);
    if (!parked) return failFinding(`report ${reportId} is not parked for connection ${connectionId}`);
    const records = await store.findApplicationsByAtsId(connectionId, applicationId);
    if (!records.length) fail(`no application ${applicationId} for connection ${connectionId}`);
    // The worker writes a report back once per application: one written back with another report would drop it.
    const taken = records.find((r) => r.state === 'written_back' && r.reportId !== reportId);
    if (taken)
      fail(
        `application ${applicationId} was written back with report ${taken.reportId} already: ` +
          `report ${reportId} stays parked; match it to the application it belongs to`,
      );
    const report = { reportId, interviewId: String(parked.interviewId), candidateId: String(parked.candidateId) };
    const message = reportAgain(connectionId, { ...report, atsApplicationId: applicationId });
    await new QueuePublisher({ client: t.sqs }).publish(t.queues.report.url, message);
    console.log(
      `report ${reportId} queued for write-back to application ${applicationId}; ` +
        'it leaves the parked list once written back',
    );
    return;
  }
  if (command === 'orders') {
    const lines = orderLines(await scanOrders(t.dynamo, t.tables.orders), values.connection);
    for (const line of lines) console.log(line);
    await flagUnknownConnection(lines[0] === '0 order(s)' ? 0 : 1);
    return;
  }
  if (command === 'purge') {
    const removed = await store.purgeCandidate(require('connection'), require('candidate'));
    console.log(
      `purged candidate ${values.candidate} of ${values.connection}: ` +
        `${removed.applications} application record(s) and ${removed.orders ?? 0} order(s) deleted`,
    );
    if (!removed.applications && !removed.orders)
      console.error(
        `nothing was held about candidate ${values.candidate} of connection ${values.connection}: check it is the ` +
          "ATS's candidate id (an application id finds nothing). The purge is recorded all the same: this " +
          'connection will not invite that candidate id.',
      );
    await flagUnknownConnection(removed.applications + (removed.orders ?? 0));
    return;
  }
  fail(command ? `ops: unknown command ${[command, sub].filter(Boolean).join(' ')}\n${USAGE}` : USAGE);
}

// The SDK clients keep sockets open; an operator's command ends when its work does, with the code it set (a
// refused change, a difference found), 0 otherwise.
await main().then(
  () => process.exit(Number(process.exitCode ?? 0)),
  (error: unknown) => {
    console.error(
      `ops: ${(!values.aws && localStackDown(error, values.stack)) || noSuchFile(error) || errorMessage(error)}`,
    );
    process.exit(1);
  },
);
