import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { addAlarms } from './alarms';
import { acknowledgeFindings } from './checks';
import { connectWorkers, createFunctions, scheduleReconciler } from './connector-functions';
import { type ConsoleHosting, createConsoleHosting } from './console-hosting';
import { defaultDomainPrefix, OPERATORS_GROUP } from './console-sign-in';
import { addOperatorDashboard } from './dashboard';
import { importConnectionsAtDeploy } from './connections-import';
import { FUNCTION_CONCURRENCY } from './functions';
import { grantLeastPrivilege } from './grants';
import { OPS_OUTPUTS, type OpsOutput } from './stack-outputs';
import { type ConnectorTables, createTables } from './tables';
import { addConsoleRoutes, createWebhookApi, FRONT_DOOR } from './webhook-api';
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
  /** The HTTP API's throttle, requests a second (bursts of twice it): FRONT_DOOR by default. */
  webhookRateLimit?: number;
  reconcileEveryMinutes?: number;
  /** The reconciler's schedule in this many segments of the connections table, each run on its own (1). */
  reconcileSegments?: number;
  /** The functions' log level (`POWERTOOLS_LOG_LEVEL`, and Lambda's application log level with it); INFO. */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** Event-source concurrency cap, protecting the ATS and interview-service rate limits. */
  workerMaxConcurrency?: number;
  /**
   * The prefix of the console's sign-in domain, `https://<prefix>.auth.<region>.amazoncognito.com`
   * (`-c consoleDomainPrefix=...`); by default the stack's name and the account (./console-sign-in.ts).
   */
  consoleDomainPrefix?: string;
}

/**
 * Tables, queues with DLQs, the seven functions, the HTTP API, the console (its distribution and sign-in), the
 * reconciler schedule, the alarms and the dashboard, each from its own module. Every resource is made in the
 * stack's own scope, so the logical ids of deployed resources (the tables above all) stay what they were.
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
    const scheduleDlq = scheduleReconciler(
      this,
      functions.reconciler,
      props.reconcileEveryMinutes,
      props.reconcileSegments,
    );
    grantLeastPrivilege(this, { functions, tables, queues }, props);
    const api = createWebhookApi(this, functions, props.webhookRateLimit ?? FRONT_DOOR.rateLimit);
    // The API first (the distribution passes two of its paths to it), then the console and its sign-in, then the
    // console's routes (their authorizer trusts the console's app client, whose callback is the distribution).
    const operatorConsole = createConsoleHosting(this, api, {
      domainPrefix: props.consoleDomainPrefix ?? defaultDomainPrefix(this),
    });
    addConsoleRoutes(api, functions.adminApi, {
      issuer: operatorConsole.issuer,
      clientId: operatorConsole.client.userPoolClientId,
    });
    // Where the admin API sends a customer's connect link, and the API it answers on.
    functions.adminApi.addEnvironment('CONSOLE_URL', operatorConsole.url);
    functions.adminApi.addEnvironment('API_URL', api.apiEndpoint);
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
    this.outputForConsole(operatorConsole);
    acknowledgeFindings(this, props.secretsPrefix);
    // No output per connection (CloudFormation allows 200): each webhook URL is ApiUrl/webhooks/ats/<connection id>,
    // which `npm run ops -- urls` prints for every connection.
  }

  /** Where the console is, and how an operator is added to it (docs/deployment.md, "The console"). */
  private outputForConsole(operatorConsole: ConsoleHosting): void {
    new CfnOutput(this, 'ConsoleUrl', {
      value: operatorConsole.url,
      description: 'The console: operators sign in here',
    });
    const pool = operatorConsole.userPool.userPoolId;
    new CfnOutput(this, 'ConsoleUserPoolId', {
      value: pool,
      description:
        'Add an operator: aws cognito-idp admin-create-user --user-pool-id <this> --username <e-mail> && aws ' +
        'cognito-idp admin-add-user-to-group --user-pool-id <this> --username <e-mail> ' +
        `--group-name ${OPERATORS_GROUP}`,
    });
    const user = `--user-pool-id ${pool} --region ${this.region} --username OPERATOR_EMAIL`;
    new CfnOutput(this, 'ConsoleAddOperatorCommand', {
      value:
        `aws cognito-idp admin-create-user ${user} --user-attributes Name=email,Value=OPERATOR_EMAIL ` +
        `Name=email_verified,Value=true && aws cognito-idp admin-add-user-to-group ${user} ` +
        `--group-name ${OPERATORS_GROUP}`,
      description:
        'Adds an operator (OPERATOR_EMAIL): Cognito e-mails a temporary password; TOTP is set at first sign-in',
    });
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
