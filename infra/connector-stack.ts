import { join, resolve } from 'node:path';
import { ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { type CfnStage, HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { addOperatorDashboard } from './dashboard';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import {
  ApplicationLogLevel,
  Architecture,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
  type IFunction,
} from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { FilterPattern, LogGroup, MetricFilter, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { Connection } from '../shared/config';
import { MAPPING_TABLES } from '../shared/mapping/constants';
import { visibilityTimeoutSeconds, WORKER_TIMING } from '../shared/pipeline/constants';
import { acknowledgeFindings } from './checks';
import { OPS_OUTPUTS, type OpsOutput } from './stack-outputs';
import {
  BUNDLE_SETTINGS,
  ESM_REQUIRE_BANNER,
  FUNCTION_CONCURRENCY,
  FUNCTION_ENTRIES,
  LAMBDA_RUNTIME_MODULES,
  type FunctionName,
} from './functions';

export interface ConnectorStackProps extends StackProps {
  connections: Connection[];
  /** The validated connections file; copied into each bundle as connections.json. */
  connectionsFile: string;
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

const ROOT = resolve(import.meta.dirname, '..');

/** The functions' runtime: the newest Node.js the pinned aws-cdk-lib knows (`lambda.Runtime`). */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;
/** Distinct sender domains listed one by one in the invite worker's SES grant; more are granted as identity/*. */
const MAX_SES_IDENTITY_ARNS = 20;
/** The webhook API's default-stage throttle: far above any ATS's delivery rate, far below a flood. */
export const FRONT_DOOR = { rateLimit: 100, burst: 200 } as const;

/** Tables, queues with DLQs, the five functions, the HTTP API, the reconciler schedule and the alarms. */
export class ConnectorStack extends Stack {
  public constructor(scope: Construct, id: string, props: ConnectorStackProps) {
    super(scope, id, props);
    const tables = this.createTables();
    const stageQueues = this.createQueue('StageEvents');
    const reportQueues = this.createQueue('ReportEvents');
    const alarmTopic = new Topic(this, 'AlarmTopic', {
      displayName: 'ATS interview connector alarms',
      enforceSSL: true,
    });
    alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));

    const environment = {
      JOBS_TABLE: tables.jobs.tableName,
      APPLICATIONS_TABLE: tables.applications.tableName,
      EVENTS_TABLE: tables.events.tableName,
      STAGE_QUEUE_URL: stageQueues.queue.queueUrl,
      REPORT_QUEUE_URL: reportQueues.queue.queueUrl,
      MAIL_FROM: props.mailFrom,
    };
    const logLevel = props.logLevel ?? 'INFO';
    const fn = (name: FunctionName, timeoutSeconds: number, reservedConcurrentExecutions?: number) =>
      new NodejsFunction(this, name, {
        entry: join(ROOT, FUNCTION_ENTRIES[name]),
        handler: 'handler',
        // The newest Node.js runtime the pinned aws-cdk-lib knows (Node 22 functions stop taking updates in 2027).
        runtime: LAMBDA_RUNTIME,
        ...(reservedConcurrentExecutions ? { reservedConcurrentExecutions } : {}),
        architecture: Architecture.ARM_64,
        memorySize: 512,
        timeout: Duration.seconds(timeoutSeconds),
        environment: {
          ...environment,
          // Powertools reads these (the level is never set in code): the service is the function's name.
          POWERTOOLS_SERVICE_NAME: name,
          POWERTOOLS_LOG_LEVEL: logLevel,
        },
        // Lambda's JSON log format, its level matching Powertools' so that neither drops what the other keeps.
        loggingFormat: LoggingFormat.JSON,
        applicationLogLevelV2: ApplicationLogLevel[logLevel],
        systemLogLevelV2: SystemLogLevel.WARN,
        // X-Ray traces from the runtime, no tracer library (it would double the bundle).
        tracing: Tracing.ACTIVE,
        logGroup: new LogGroup(this, `${name}Logs`, {
          retention: RetentionDays.ONE_MONTH,
          removalPolicy: RemovalPolicy.DESTROY,
        }),
        bundling: {
          format: OutputFormat.ESM,
          minify: BUNDLE_SETTINGS.minify,
          target: BUNDLE_SETTINGS.target,
          mainFields: [...BUNDLE_SETTINGS.mainFields],
          externalModules: LAMBDA_RUNTIME_MODULES,
          banner: ESM_REQUIRE_BANNER,
          commandHooks: {
            beforeBundling: () => [],
            beforeInstall: () => [],
            afterBundling: (_input: string, output: string) => [
              `cp "${props.connectionsFile}" "${join(output, 'connections.json')}"`,
            ],
          },
        },
      });

    const webhookConcurrency = props.webhookConcurrency ?? FUNCTION_CONCURRENCY.webhook;
    const atsWebhook = fn('AtsWebhook', 10, webhookConcurrency);
    const interviewWebhook = fn('InterviewWebhook', 10, webhookConcurrency);
    const inviteWorker = fn('InviteWorker', WORKER_TIMING.workerTimeoutSeconds);
    const writebackWorker = fn('WritebackWorker', WORKER_TIMING.workerTimeoutSeconds);
    const reconciler = fn('Reconciler', 300);

    const maxConcurrency = props.workerMaxConcurrency ?? FUNCTION_CONCURRENCY.worker;
    inviteWorker.addEventSource(
      new SqsEventSource(stageQueues.queue, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(1),
        reportBatchItemFailures: true,
        maxConcurrency,
      }),
    );
    writebackWorker.addEventSource(
      new SqsEventSource(reportQueues.queue, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(1),
        reportBatchItemFailures: true,
        maxConcurrency,
      }),
    );
    // A run the schedule could not deliver is retried, then kept in a dead-letter queue (alarmed on below).
    const scheduleDlq = new Queue(this, 'ReconcileScheduleDlq', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    Validations.of(scheduleDlq).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason: "It is a dead-letter queue: the reconciler schedule target's, which SQS cannot show as a redrive.",
    });
    new Rule(this, 'ReconcileSchedule', {
      schedule: Schedule.rate(Duration.minutes(props.reconcileEveryMinutes ?? 10)),
      targets: [
        new LambdaFunction(reconciler, {
          deadLetterQueue: scheduleDlq,
          retryAttempts: 2,
          maxEventAge: Duration.minutes(10),
        }),
      ],
    });

    // Least privilege: each function gets the actions it calls, on the resources it touches.
    const index = `${tables.applications.tableArn}/index/${MAPPING_TABLES.applications.interviewIndex.name}`;
    stageQueues.queue.grantSendMessages(atsWebhook);
    // Replay keys of webhooks that sign a per-delivery token (Lever): recorded, and removed when enqueueing fails.
    // The queue ledger (PutItem): each stage change enqueued is recorded, so the sweep does not enqueue it again.
    allow(atsWebhook, ['dynamodb:PutItem', 'dynamodb:DeleteItem'], [tables.events.tableArn]);
    reportQueues.queue.grantSendMessages(interviewWebhook);
    // The queue ledger: a report enqueued is recorded (a conditional put), and taken back when enqueueing fails.
    allow(interviewWebhook, ['dynamodb:PutItem', 'dynamodb:DeleteItem'], [tables.events.tableArn]);
    reportQueues.queue.grantSendMessages(reconciler);
    // The sweep enqueues the stage changes that never arrived, and keeps its place in each trigger's list.
    stageQueues.queue.grantSendMessages(reconciler);
    // A worker puts a message back on its own queue with a delay when an outside API asks it to wait.
    stageQueues.queue.grantSendMessages(inviteWorker);
    reportQueues.queue.grantSendMessages(writebackWorker);
    allow(inviteWorker, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [tables.jobs.tableArn]);
    allow(
      inviteWorker,
      ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:DeleteItem'],
      [tables.applications.tableArn],
    );
    allow(
      inviteWorker,
      ['dynamodb:Query'],
      [`${tables.applications.tableArn}/index/${MAPPING_TABLES.applications.candidateIndex.name}`],
    );
    // Deliveries recorded with each claim, the deletion tombstone written on a purge and checked in every claim, the
    // queue ledger's records of a purged candidate deleted, a connection's backlog recorded when a message defers;
    // UpdateItem: a turn reserved on the connection's ATS schedule (shared/mapping/rate-schedule.ts).
    allow(
      inviteWorker,
      ['dynamodb:PutItem', 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'],
      [tables.events.tableArn],
    );
    allow(inviteWorker, ['ses:SendEmail'], this.sesIdentities(props));
    // GetItem: a report another worker is writing back is waited on by reading its application (held-claim.ts).
    allow(
      writebackWorker,
      ['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:GetItem'],
      [tables.applications.tableArn],
    );
    // The candidate index: where tags belong to the candidate, the status shown is their application furthest along.
    allow(
      writebackWorker,
      ['dynamodb:Query'],
      [
        index,
        `${tables.applications.tableArn}/index/${MAPPING_TABLES.applications.serviceCandidateIndex.name}`,
        `${tables.applications.tableArn}/index/${MAPPING_TABLES.applications.candidateIndex.name}`,
      ],
    );
    // Parked reports (and unparked), a connection's backlog recorded when a message defers, turns on the ATS schedule.
    allow(
      writebackWorker,
      ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'],
      [tables.events.tableArn],
    );
    // A connection's jobs by the connection index, never a scan of every customer's.
    allow(
      reconciler,
      ['dynamodb:Query'],
      [index, `${tables.jobs.tableArn}/index/${MAPPING_TABLES.jobs.connectionIndex.name}`],
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
    // One grant for any number of connections: the secrets under the connections' common prefix (an ARN per
    // connection passes IAM's 6,144-character managed-policy quota at about 60 connections).
    const secrets = this.formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${props.secretsPrefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    for (const handler of [atsWebhook, interviewWebhook, inviteWorker, writebackWorker, reconciler])
      allow(handler, ['secretsmanager:GetSecretValue'], [secrets]);

    const api = new HttpApi(this, 'WebhookApi', { description: 'Webhooks from the ATSs and the interview service' });
    this.guardFrontDoor(api);
    api.addRoutes({
      path: '/webhooks/ats/{connectionId}',
      methods: [HttpMethod.POST],
      integration: new HttpLambdaIntegration('AtsWebhookIntegration', atsWebhook),
    });
    api.addRoutes({
      path: '/webhooks/interview/{connectionId}/{token}',
      methods: [HttpMethod.POST],
      integration: new HttpLambdaIntegration('InterviewWebhookIntegration', interviewWebhook),
    });

    const alarm = (
      name: string,
      metric: import('aws-cdk-lib/aws-cloudwatch').Metric,
      threshold: number,
      description: string,
    ) =>
      new Alarm(this, name, {
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      }).addAlarmAction(new SnsAction(alarmTopic));
    alarm(
      'ReconcileScheduleDlqDepth',
      scheduleDlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      1,
      'The reconciler schedule could not start the reconciler: reports whose webhook was lost wait',
    );
    for (const [name, queues] of [
      ['StageEvents', stageQueues],
      ['ReportEvents', reportQueues],
    ] as const) {
      alarm(
        `${name}DlqDepth`,
        queues.dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
        1,
        `${name}: messages in the dead-letter queue need an operator (npm run ops -- dlq list)`,
      );
      alarm(
        `${name}OldestMessage`,
        queues.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5) }),
        15 * 60,
        `${name}: a message has waited over 15 minutes`,
      );
    }
    alarm(
      'WebhookApi5xx',
      api.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }),
      1,
      'The webhook API answered 5xx: a sender will retry, but something is down (the log says what)',
    );
    for (const [name, handler] of [
      ['AtsWebhook', atsWebhook],
      ['InterviewWebhook', interviewWebhook],
      ['InviteWorker', inviteWorker],
      ['WritebackWorker', writebackWorker],
      ['Reconciler', reconciler],
    ] as const) {
      alarm(`${name}Errors`, handler.metricErrors({ period: Duration.minutes(5) }), 1, `${name} failed`);
      alarm(
        `${name}Throttles`,
        handler.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }),
        1,
        `${name} was throttled: its concurrency (or the account's) is spent`,
      );
      // A function that handles a failure does not fail, so these would otherwise reach nobody: an application the
      // ATS or the service refused for good (a revoked key, a missing permission), a poison message, a delivery
      // that could not be enqueued, a connection the reconciler could not read. Each is logged at ERROR.
      const errorLines = new MetricFilter(this, `${name}ErrorLines`, {
        logGroup: handler.logGroup,
        filterPattern: FilterPattern.stringValue('$.level', '=', 'ERROR'),
        metricNamespace: this.stackName,
        metricName: `${name}LoggedErrors`,
        metricValue: '1',
      });
      alarm(
        `${name}LoggedErrors`,
        errorLines.metric({ statistic: 'Sum', period: Duration.minutes(5) }),
        1,
        `${name} logged an error an operator must act on; the log line says what ` +
          '(npm run ops -- failed lists refused applications)',
      );
    }

    addOperatorDashboard(this, {
      functions: { atsWebhook, interviewWebhook, inviteWorker, writebackWorker, reconciler },
      queues: { StageEvents: stageQueues, ReportEvents: reportQueues },
    });

    new CfnOutput(this, 'ApiUrl', { value: api.apiEndpoint });
    // What `npm run ops -- --aws` needs (infra/stack-outputs.ts).
    const opsValues: Record<OpsOutput, string> = {
      jobsTable: tables.jobs.tableName,
      applicationsTable: tables.applications.tableName,
      eventsTable: tables.events.tableName,
      stageQueueUrl: stageQueues.queue.queueUrl,
      reportQueueUrl: reportQueues.queue.queueUrl,
      stageDlqUrl: stageQueues.dlq.queueUrl,
      reportDlqUrl: reportQueues.dlq.queueUrl,
    };
    for (const [key, { output, env }] of Object.entries(OPS_OUTPUTS) as [
      OpsOutput,
      (typeof OPS_OUTPUTS)[OpsOutput],
    ][]) {
      new CfnOutput(this, `Ops${output}`, {
        key: output,
        value: opsValues[key],
        description: `npm run ops -- --aws reads it (or ${env})`,
      });
    }
    acknowledgeFindings(this, props.secretsPrefix);
    // No output per connection (CloudFormation allows 200): each webhook URL is ApiUrl/webhooks/ats/<connection id>,
    // which `npm run ops -- urls` prints for every connection.
  }

  /**
   * Access logs without the path (the interview webhook's path carries its token) and a throttle on the default
   * stage: what reaches the functions is bounded before any of it is authenticated.
   */
  private guardFrontDoor(api: HttpApi): void {
    const accessLogs = new LogGroup(this, 'WebhookApiAccessLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = api.defaultStage?.node.defaultChild as CfnStage;
    stage.accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      format: JSON.stringify({
        requestId: '$context.requestId',
        time: '$context.requestTime',
        routeKey: '$context.routeKey',
        status: '$context.status',
        latencyMs: '$context.responseLatency',
        integrationError: '$context.integrationErrorMessage',
        sourceIp: '$context.identity.sourceIp',
      }),
    };
    stage.defaultRouteSettings = { throttlingRateLimit: FRONT_DOOR.rateLimit, throttlingBurstLimit: FRONT_DOOR.burst };
  }

  private createTables(): { jobs: Table; applications: Table; events: Table } {
    const common = {
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: MAPPING_TABLES.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
      partitionKey: { name: 'pk', type: AttributeType.STRING },
    };
    const jobs = new Table(this, 'JobsTable', common);
    const connectionIndex = MAPPING_TABLES.jobs.connectionIndex;
    jobs.addGlobalSecondaryIndex({
      indexName: connectionIndex.name,
      partitionKey: { name: connectionIndex.partitionKey, type: AttributeType.STRING },
    });
    const applications = new Table(this, 'ApplicationsTable', {
      ...common,
      sortKey: { name: 'sk', type: AttributeType.STRING },
    });
    const index = MAPPING_TABLES.applications.interviewIndex;
    applications.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
      sortKey: { name: index.sortKey, type: AttributeType.STRING },
    });
    const candidateIndex = MAPPING_TABLES.applications.candidateIndex;
    applications.addGlobalSecondaryIndex({
      indexName: candidateIndex.name,
      partitionKey: { name: candidateIndex.partitionKey, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    });
    const serviceCandidateIndex = MAPPING_TABLES.applications.serviceCandidateIndex;
    applications.addGlobalSecondaryIndex({
      indexName: serviceCandidateIndex.name,
      partitionKey: { name: serviceCandidateIndex.partitionKey, type: AttributeType.STRING },
    });
    const events = new Table(this, 'EventsTable', common);
    return { jobs, applications, events };
  }

  private createQueue(name: string): { queue: Queue; dlq: Queue } {
    const dlq = new Queue(this, `${name}Dlq`, {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    const queue = new Queue(this, `${name}Queue`, {
      visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds()),
      retentionPeriod: Duration.days(4),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: dlq, maxReceiveCount: WORKER_TIMING.maxReceiveCount },
    });
    return { queue, dlq };
  }

  /**
   * SES identities of every sender the connections use: the domains of the `from` addresses; past
   * MAX_SES_IDENTITY_ARNS distinct domains, every identity of the account and region (SES still sends only from
   * verified ones), so the policy stays within IAM's size quota whatever the number of customers.
   */
  private sesIdentities(props: ConnectorStackProps): string[] {
    const domains = new Set(
      [
        props.mailFrom,
        ...props.connections.flatMap((c) =>
          c.triggers.map((t) => t.invite.from).filter((f): f is string => Boolean(f)),
        ),
      ].map((address) => address.split('@')[1] as string),
    );
    const names = domains.size > MAX_SES_IDENTITY_ARNS ? ['*'] : [...domains];
    return names.map((name) => this.formatArn({ service: 'ses', resource: 'identity', resourceName: name }));
  }
}

function allow(fn: IFunction, actions: string[], resources: string[]): void {
  fn.addToRolePolicy(new PolicyStatement({ actions, resources }));
}
