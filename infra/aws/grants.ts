import { ArnFormat, type Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { MAPPING_TABLES } from '../../shared/mapping/constants';
import type { ConnectorFunctions } from './connector-functions';
import { type ConnectorTables, indexArn } from './tables';
import type { WorkerQueue } from './worker-queue';

export interface GrantedResources {
  functions: ConnectorFunctions;
  tables: ConnectorTables;
  queues: { stage: WorkerQueue; report: WorkerQueue };
}

export interface GrantSettings {
  secretsPrefix: string;
}

/**
 * Least privilege: each function gets the actions it calls, on the resources it touches, and nothing more (the IAM
 * conformance check holds every call the local runtime records against these, infra/local/iam-conformance.ts).
 */
export function grantLeastPrivilege(stack: Stack, resources: GrantedResources, settings: GrantSettings): void {
  grantWebhooks(resources);
  grantInviteWorker(resources, sesIdentities(stack));
  grantWritebackWorker(resources);
  grantReconciler(resources);
  grantOrders(resources);
  // One grant for any number of connections: the secrets under the connections' common prefix (an ARN per
  // connection passes IAM's 6,144-character managed-policy quota at about 60 connections).
  const secrets = stack.formatArn({
    service: 'secretsmanager',
    resource: 'secret',
    resourceName: `${settings.secretsPrefix}*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  const { adminApi, ...served } = resources.functions;
  for (const handler of Object.values(served)) allow(handler, ['secretsmanager:GetSecretValue'], [secrets]);
  // The admin API rotates the keys the connector issues (a connection's secret read, then written whole), and saves
  // what a customer gives through their connect link: CreateSecret where the connection's secret does not exist yet.
  allow(
    adminApi,
    ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue', 'secretsmanager:CreateSecret'],
    [secrets],
  );
  grantConnections(resources);
  grantConsole(resources);
}

/**
 * The console's records (the activity table): the workers' counts of a batch in one update and its timeline entries
 * (deliveries among them) 25 to a write, the webhook function's last webhook (an update); the admin API reads them,
 * keeps the doctor's results and the connect links, reads an application (Query) and a connection's backlog
 * (GetItem), and works the dead-letter queues: their counts and first messages, a redrive (SQS's message move task,
 * from the DLQ to its queue) and a retry of one.
 */
function grantConsole({ functions, tables, queues }: GrantedResources): void {
  const { adminApi, atsWebhook, inviteWorker, writebackWorker } = functions;
  for (const fn of [inviteWorker, writebackWorker])
    allow(fn, ['dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'], [tables.activity.tableArn]);
  allow(atsWebhook, ['dynamodb:UpdateItem'], [tables.activity.tableArn]);
  allow(
    adminApi,
    [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:Query',
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
    ],
    [tables.activity.tableArn],
  );
  allow(adminApi, ['dynamodb:Query'], [tables.applications.tableArn]);
  allow(adminApi, ['dynamodb:GetItem'], [tables.events.tableArn]);
  for (const { queue, dlq } of [queues.stage, queues.report]) {
    allow(
      adminApi,
      [
        'sqs:GetQueueAttributes',
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:StartMessageMoveTask',
        'sqs:ListMessageMoveTasks',
      ],
      [dlq.queueArn],
    );
    allow(adminApi, ['sqs:GetQueueAttributes', 'sqs:SendMessage'], [queue.queueArn]);
  }
}

/**
 * Every function reads the one connection it serves (GetItem), and none can change one; the reconciler pages them
 * (Scan) and keeps where its next run starts on the events table. The admin API alone writes connections, each
 * change with its audit record in one transaction, and reads the audit back.
 */
function grantConnections({ functions, tables }: GrantedResources): void {
  const { adminApi, reconciler } = functions;
  for (const handler of Object.values(functions)) allow(handler, ['dynamodb:GetItem'], [tables.connections.tableArn]);
  allow(reconciler, ['dynamodb:Scan'], [tables.connections.tableArn]);
  allow(adminApi, ['dynamodb:Scan', 'dynamodb:PutItem', 'dynamodb:DeleteItem'], [tables.connections.tableArn]);
  allow(adminApi, ['dynamodb:PutItem', 'dynamodb:Query'], [tables.connectionAudit.tableArn]);
}

function grantWebhooks({ functions, tables, queues }: GrantedResources): void {
  queues.stage.queue.grantSendMessages(functions.atsWebhook);
  // Replay keys of webhooks that sign a per-delivery token (Lever): recorded before enqueueing, and removed
  // (DeleteItem) when enqueueing fails. The queue ledger: each stage change enqueued is recorded once sent (PutItem),
  // so the sweep does not enqueue it again.
  // GetItem: the stage names the invite worker shared, where a delivery names its stage by id alone (Lever).
  allow(
    functions.atsWebhook,
    ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem'],
    [tables.events.tableArn],
  );
  queues.report.queue.grantSendMessages(functions.interviewWebhook);
  // The queue ledger: a report enqueued is recorded (a conditional put), and taken back when enqueueing fails.
  allow(functions.interviewWebhook, ['dynamodb:PutItem', 'dynamodb:DeleteItem'], [tables.events.tableArn]);
  // Where a trigger follows up, the report's invitation (by the service's candidate id, or interview and e-mail) is
  // marked as taken (UpdateItem), so no reminder or expiry goes while the report waits in the queue.
  const { interviewIndex, serviceCandidateIndex } = MAPPING_TABLES.applications;
  allow(
    functions.interviewWebhook,
    ['dynamodb:Query'],
    [interviewIndex, serviceCandidateIndex].map((index) => indexArn(tables.applications, index.name)),
  );
  allow(functions.interviewWebhook, ['dynamodb:UpdateItem'], [tables.applications.tableArn]);
}

function grantInviteWorker({ functions, tables, queues }: GrantedResources, sesArns: string[]): void {
  const worker = functions.inviteWorker;
  // A worker puts a message back on its own queue with a delay when an outside API asks it to wait.
  queues.stage.queue.grantSendMessages(worker);
  allow(worker, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [tables.jobs.tableArn]);
  allow(
    worker,
    ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:DeleteItem'],
    [tables.applications.tableArn],
  );
  allow(worker, ['dynamodb:Query'], [indexArn(tables.applications, MAPPING_TABLES.applications.candidateIndex.name)]);
  // Deliveries recorded with each claim, the deletion tombstone written on a purge and checked in every claim, the
  // queue ledger's records of a purged candidate deleted, a connection's backlog recorded when a message defers;
  // UpdateItem: a turn reserved on the connection's ATS schedule (shared/mapping/rate-schedule.ts). GetItem and
  // BatchGetItem: a read of changed applications (Kombo) reads its watermark and what it saw of each application.
  allow(
    worker,
    [
      'dynamodb:PutItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:DeleteItem',
      'dynamodb:UpdateItem',
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
    ],
    [tables.events.tableArn],
  );
  allow(worker, ['ses:SendEmail'], sesArns);
}

function grantWritebackWorker({ functions, tables, queues }: GrantedResources): void {
  const worker = functions.writebackWorker;
  queues.report.queue.grantSendMessages(worker);
  const { interviewIndex, serviceCandidateIndex, candidateIndex } = MAPPING_TABLES.applications;
  // GetItem: a report another worker is writing back is waited on by reading its application (held-claim.ts).
  allow(worker, ['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:GetItem'], [tables.applications.tableArn]);
  // The candidate index: where tags belong to the candidate, the status shown is their application furthest along.
  allow(
    worker,
    ['dynamodb:Query'],
    [interviewIndex, serviceCandidateIndex, candidateIndex].map((index) => indexArn(tables.applications, index.name)),
  );
  // Parked reports (and unparked), a connection's backlog recorded when a message defers, turns on the ATS schedule.
  allow(worker, ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'], [tables.events.tableArn]);
}

function grantReconciler({ functions, tables, queues }: GrantedResources): void {
  const reconciler = functions.reconciler;
  queues.report.queue.grantSendMessages(reconciler);
  // The sweep enqueues the stage changes that never arrived, and keeps its place in each trigger's list.
  queues.stage.queue.grantSendMessages(reconciler);
  // A connection's jobs by the connection index, never a scan of every customer's; its open invitations by the
  // state index (keys only, each then read whole with BatchGetItem).
  allow(
    reconciler,
    ['dynamodb:Query'],
    [
      indexArn(tables.applications, MAPPING_TABLES.applications.interviewIndex.name),
      indexArn(tables.applications, MAPPING_TABLES.applications.stateIndex.name),
      indexArn(tables.jobs, MAPPING_TABLES.jobs.connectionIndex.name),
    ],
  );
  // Sweep progress, parked reports and the queue ledger (what was enqueued lately, each connection's backlog);
  // UpdateItem: the sweep's pages take their turns on the connection's ATS schedule.
  allow(
    reconciler,
    [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:UpdateItem',
    ],
    [tables.events.tableArn],
  );
  allow(reconciler, ['dynamodb:BatchGetItem'], [tables.applications.tableArn]);
  // Where an interview's reports are read on from, on its job's record, when a run's share ran out reading them.
  allow(reconciler, ['dynamodb:UpdateItem'], [tables.jobs.tableArn]);
}

/**
 * SES identities the invite worker may send from: every identity of the account and region. A connection's sender is
 * set through the admin API at any time, with no deploy, so the grant cannot list its domain; SES sends only from
 * identities verified in the account, which the operator verifies.
 */
function sesIdentities(stack: Stack): string[] {
  return [stack.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' })];
}

/**
 * Assessment orders: the order API records them (a conditional put), reads them for `test_status` and cancels them;
 * the invite worker works and expires them; the write-back worker finds a report's order and completes it; the
 * reconciler lists those with work left.
 */
function grantOrders({ functions, tables, queues }: GrantedResources): void {
  const { interviewIndex, workIndex } = MAPPING_TABLES.orders;
  queues.stage.queue.grantSendMessages(functions.orderApi);
  allow(functions.orderApi, ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'], [tables.orders.tableArn]);
  allow(functions.inviteWorker, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [tables.orders.tableArn]);
  // A candidate the ATS deleted: their orders are found by the candidate index and deleted with the rest of them.
  allow(functions.inviteWorker, ['dynamodb:DeleteItem'], [tables.orders.tableArn]);
  allow(
    functions.inviteWorker,
    ['dynamodb:Query'],
    [indexArn(tables.orders, MAPPING_TABLES.orders.candidateIndex.name)],
  );
  allow(functions.writebackWorker, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [tables.orders.tableArn]);
  allow(functions.writebackWorker, ['dynamodb:Query'], [indexArn(tables.orders, interviewIndex.name)]);
  // The reconciler lists the orders with work left, and skips a report whose order it completed.
  allow(
    functions.reconciler,
    ['dynamodb:Query'],
    [workIndex, interviewIndex].map((index) => indexArn(tables.orders, index.name)),
  );
  // It also records the Kombo orders missed while the webhook was down, as the webhook would have (a conditional put).
  allow(functions.reconciler, ['dynamodb:GetItem', 'dynamodb:PutItem'], [tables.orders.tableArn]);
}

function allow(fn: IFunction, actions: string[], resources: string[]): void {
  fn.addToRolePolicy(new PolicyStatement({ actions, resources }));
}
