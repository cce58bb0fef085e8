import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { addAlarms } from './alarms';
import { acknowledgeFindings } from './checks';
import { connectWorkers, createFunctions, scheduleReconciler } from './connector-functions';
import { addOperatorDashboard } from './dashboard';
import { importConnectionsAtDeploy } from './connections-import';
import { FUNCTION_CONCURRENCY } from './functions';
import { grantLeastPrivilege } from './grants';
import { OPS_OUTPUTS, type OpsOutput } from './stack-outputs';
import { type ConnectorTables, createTables } from './tables';
import { createWebhookApi } from './webhook-api';
import { createWorkerQueue, type WorkerQueue } from './worker-queue';

export { LAMBDA_RUNTIME } from './connector-functions';
export { FRONT_DOOR } from './webhook-api';

export interface ConnectorStackProps extends StackProps {
  /** The validated connections file: imported into the connections table at deploy (./connections-import.ts). */
  connectionsFile: string;
  /** Whether the import deletes connections the file does not hold (`-c pruneConnections=true`); never by default. */
  pruneConnections?: boolean;
  /** The SES sender used when a trigger names none (a verified identity). */
  mailFrom: string;
  /** Who the alarms reach. */
  alarmEmail: string;
  /** The name prefix of every connection's secret; the functions may read the secrets under it. */
  secretsPrefix: string;
  /**
   * Reserved concurrency of each webhook function: a flood of deliveries (or of unauthenticated POSTs) takes at
   * most this many of the account's executions and never starves the workers. 0 reserves none (an account whose
   * concurrency quota is still the new-account 10 cannot reserve any).
   */
  webhookConcurrency?: number;
  reconcileEveryMinutes?: number;
  /** The functions' log level (`POWERTOOLS_LOG_LEVEL`, and Lambda's application log level with it); INFO. */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** Event-source concurrency cap, protecting the ATS and interview-service rate limits. */
  workerMaxConcurrency?: number;
}

/**
 * Tables, queues with DLQs, the six functions, the HTTP API, the reconciler schedule, the alarms and the
 * dashboard, each from its own module. Every resource is made in the stack's own scope, so the logical ids of
 * deployed resources (the tables above all) stay what they were.
 */
export class ConnectorStack extends Stack {
  public constructor(scope: Construct, id: string, props: ConnectorStackProps) {
    super(scope, id, props);
    const tables = createTables(this);
    const queues = { stage: createWorkerQueue(this, 'StageEvents'), report: createWorkerQueue(this, 'ReportEvents') };
    const functions = createFunctions(this, {
      environment: functionEnvironment(tables, queues, props.mailFrom),
      logLevel: props.logLevel ?? 'INFO',
      webhookConcurrency: props.webhookConcurrency ?? FUNCTION_CONCURRENCY.webhook,
    });
    connectWorkers(functions, queues, props.workerMaxConcurrency);
    functions.adminApi.addEnvironment('CONNECTION_AUDIT_TABLE', tables.connectionAudit.tableName);
    functions.adminApi.addEnvironment('SECRETS_PREFIX', props.secretsPrefix);
    // The console's failures page works the dead-letter queues; no other function is given them.
    functions.adminApi.addEnvironment('STAGE_DLQ_URL', queues.stage.dlq.queueUrl);
    functions.adminApi.addEnvironment('REPORT_DLQ_URL', queues.report.dlq.queueUrl);
    importConnectionsAtDeploy(this, tables, {
      connectionsFile: props.connectionsFile,
      prune: props.pruneConnections ?? false,
    });
    const scheduleDlq = scheduleReconciler(this, functions.reconciler, props.reconcileEveryMinutes);
    grantLeastPrivilege(this, { functions, tables, queues }, props);
    const api = createWebhookApi(this, functions);
    const byName = { StageEvents: queues.stage, ReportEvents: queues.report };
    addAlarms(this, props.alarmEmail, { functions, queues: byName, scheduleDlq, api });
    addOperatorDashboard(this, { functions, queues: byName });
    new CfnOutput(this, 'ApiUrl', { value: api.apiEndpoint });
    // What a customer sends Greenhouse's partner team (one URL per call) and Ashby (one base URL).
    for (const call of ['list_tests', 'send_test', 'test_status', 'response_error'])
      new CfnOutput(this, `GreenhousePartner${call.replace(/(^|_)(\w)/g, (_, _s, c: string) => c.toUpperCase())}Url`, {
        value: `${api.apiEndpoint}/orders/greenhouse/${call}`,
        description: `Greenhouse Assessment Partner: the ${call} URL`,
      });
    new CfnOutput(this, 'AshbyAssessmentsBaseUrl', {
      value: `${api.apiEndpoint}/orders/ashby`,
      description: 'Ashby Assessments: the base URL Ashby calls assessment.list, .start and .cancel on',
    });
    // Kombo: one webhook per Kombo account (a connection taking Kombo orders): the base, then the connection's id.
    new CfnOutput(this, 'KomboWebhookBaseUrl', {
      value: `${api.apiEndpoint}/orders/kombo`,
      description: "Kombo: the order webhook's URL is this, a slash, and the connection's id",
    });
    this.outputForOps(tables, queues);
    acknowledgeFindings(this, props.secretsPrefix);
    // No output per connection (CloudFormation allows 200): each webhook URL is ApiUrl/webhooks/ats/<connection id>,
    // which `npm run ops -- urls` prints for every connection.
  }

  /** What `npm run ops -- --aws` needs (infra/aws/stack-outputs.ts). */
  private outputForOps(tables: ConnectorTables, queues: { stage: WorkerQueue; report: WorkerQueue }): void {
    const values: Record<OpsOutput, string> = {
      jobsTable: tables.jobs.tableName,
      applicationsTable: tables.applications.tableName,
      eventsTable: tables.events.tableName,
      ordersTable: tables.orders.tableName,
      connectionsTable: tables.connections.tableName,
      stageQueueUrl: queues.stage.queue.queueUrl,
      reportQueueUrl: queues.report.queue.queueUrl,
      stageDlqUrl: queues.stage.dlq.queueUrl,
      reportDlqUrl: queues.report.dlq.queueUrl,
    };
    for (const [key, { output, env }] of Object.entries(OPS_OUTPUTS) as [OpsOutput, (typeof OPS_OUTPUTS)[OpsOutput]][])
      new CfnOutput(this, `Ops${output}`, {
        key: output,
        value: values[key],
        description: `npm run ops -- --aws reads it (or ${env})`,
      });
  }
}

function functionEnvironment(
  tables: ConnectorTables,
  queues: { stage: WorkerQueue; report: WorkerQueue },
  mailFrom: string,
): Record<string, string> {
  return {
    JOBS_TABLE: tables.jobs.tableName,
    APPLICATIONS_TABLE: tables.applications.tableName,
    EVENTS_TABLE: tables.events.tableName,
    ORDERS_TABLE: tables.orders.tableName,
    CONNECTIONS_TABLE: tables.connections.tableName,
    ACTIVITY_TABLE: tables.activity.tableName,
    STAGE_QUEUE_URL: queues.stage.queue.queueUrl,
    REPORT_QUEUE_URL: queues.report.queue.queueUrl,
    MAIL_FROM: mailFrom,
  };
}
