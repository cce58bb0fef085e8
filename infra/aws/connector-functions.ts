import { join, resolve } from 'node:path';
import { Duration, RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import {
  ApplicationLogLevel,
  Architecture,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { WORKER_TIMING } from '../../shared/pipeline/constants';
import {
  BUNDLE_SETTINGS,
  ESM_REQUIRE_BANNER,
  FUNCTION_CONCURRENCY,
  FUNCTION_ENTRIES,
  FUNCTION_ENVIRONMENT,
  LAMBDA_RUNTIME_MODULES,
  type FunctionName,
} from './functions';
import type { WorkerQueue } from './worker-queue';

const ROOT = resolve(import.meta.dirname, '../..');

/** The functions' runtime: the newest Node.js the pinned aws-cdk-lib knows (`lambda.Runtime`). */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

/** How every function is bundled (`NodejsFunction`'s `bundling`): ESM, minified, the runtime's SDK left out. */
export function bundlingOptions() {
  return {
    format: OutputFormat.ESM,
    minify: BUNDLE_SETTINGS.minify,
    target: BUNDLE_SETTINGS.target,
    mainFields: [...BUNDLE_SETTINGS.mainFields],
    externalModules: LAMBDA_RUNTIME_MODULES,
    banner: ESM_REQUIRE_BANNER,
    // esbuild's warnings and errors only: each bundle's file list would fill `cdk synth --quiet` with 40 lines.
    logLevel: LogLevel.WARNING,
  };
}

export interface ConnectorFunctions {
  atsWebhook: NodejsFunction;
  interviewWebhook: NodejsFunction;
  inviteWorker: NodejsFunction;
  writebackWorker: NodejsFunction;
  reconciler: NodejsFunction;
  /** The ATSs' assessment-partner calls (Greenhouse Assessment Partner, Ashby Assessments). */
  orderApi: NodejsFunction;
  /** An operator's changes to one connection (IAM-authorized routes of the HTTP API). */
  adminApi: NodejsFunction;
}

export interface FunctionSettings {
  /** Every function's environment: the tables, the queues, the default sender. */
  environment: Record<string, string>;
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** Reserved concurrency of each webhook function; 0 reserves none. */
  webhookConcurrency: number;
}

/**
 * The seven functions: two webhooks and the order API (their concurrency reserved), two workers, the reconciler and
 * the admin API. None holds a connection: each reads the one it serves from the connections table.
 */
export function createFunctions(stack: Stack, settings: FunctionSettings): ConnectorFunctions {
  const fn = (name: FunctionName, timeoutSeconds: number, reserved?: number) =>
    connectorFunction(stack, { name, timeoutSeconds, reserved }, settings);
  return {
    atsWebhook: fn('AtsWebhook', 10, settings.webhookConcurrency),
    interviewWebhook: fn('InterviewWebhook', 10, settings.webhookConcurrency),
    inviteWorker: fn('InviteWorker', WORKER_TIMING.workerTimeoutSeconds),
    writebackWorker: fn('WritebackWorker', WORKER_TIMING.workerTimeoutSeconds),
    reconciler: fn('Reconciler', 300),
    orderApi: fn('OrderApi', 10, settings.webhookConcurrency),
    // The console's doctor and stage lists read the customer's ATS at its rate: the HTTP API's own limit (30 s), less
    // a second for the answer.
    adminApi: fn('AdminApi', 29),
  };
}

function connectorFunction(
  stack: Stack,
  shape: { name: FunctionName; timeoutSeconds: number; reserved: number | undefined },
  settings: FunctionSettings,
): NodejsFunction {
  const { name, logLevel } = { ...shape, ...settings };
  return new NodejsFunction(stack, name, {
    entry: join(ROOT, FUNCTION_ENTRIES[name]),
    handler: 'handler',
    // The newest Node.js runtime the pinned aws-cdk-lib knows (Node 22 functions stop taking updates in 2027).
    runtime: LAMBDA_RUNTIME,
    ...(shape.reserved ? { reservedConcurrentExecutions: shape.reserved } : {}),
    architecture: Architecture.ARM_64,
    memorySize: 512,
    timeout: Duration.seconds(shape.timeoutSeconds),
    // Powertools reads these (the level is never set in code): the service is the function's name.
    environment: {
      ...settings.environment,
      ...FUNCTION_ENVIRONMENT[name],
      POWERTOOLS_LOG_LEVEL: logLevel,
    },
    // Lambda's JSON log format, its level matching Powertools' so that neither drops what the other keeps.
    loggingFormat: LoggingFormat.JSON,
    applicationLogLevelV2: ApplicationLogLevel[logLevel],
    systemLogLevelV2: SystemLogLevel.WARN,
    // X-Ray traces from the runtime, no tracer library (it would double the bundle).
    tracing: Tracing.ACTIVE,
    logGroup: new LogGroup(stack, `${name}Logs`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    }),
    bundling: bundlingOptions(),
  });
}

/**
 * Each worker reads its queue in batches of 10 gathered for its batching window (a message going back for its
 * turn comes back early enough for it: shared/pacing/turn.ts), reporting failures per message, at most
 * `maxConcurrency` at once.
 */
export function connectWorkers(
  functions: ConnectorFunctions,
  queues: { stage: WorkerQueue; report: WorkerQueue },
  maxConcurrency: number = FUNCTION_CONCURRENCY.worker,
): void {
  for (const [worker, queue, windowSeconds] of [
    [functions.inviteWorker, queues.stage.queue, WORKER_TIMING.batchingWindowSeconds.invite],
    [functions.writebackWorker, queues.report.queue, WORKER_TIMING.batchingWindowSeconds.writeback],
  ] as const)
    worker.addEventSource(
      new SqsEventSource(queue, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(windowSeconds),
        reportBatchItemFailures: true,
        maxConcurrency,
      }),
    );
}

/** The reconciler on a schedule; a run the schedule could not deliver is retried, then kept in the returned DLQ. */
export function scheduleReconciler(stack: Stack, reconciler: NodejsFunction, everyMinutes = 10, segments = 1): Queue {
  const scheduleDlq = new Queue(stack, 'ReconcileScheduleDlq', {
    retentionPeriod: Duration.days(14),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  Validations.of(scheduleDlq).acknowledge({
    id: 'AwsSolutions::AwsSolutions-SQS3',
    reason: "It is a dead-letter queue: the reconciler schedule target's, which SQS cannot show as a redrive.",
  });
  // One rule a segment of the connections table (DynamoDB's parallel scan), each run on its own share: the first
  // keeps the id a stack with one segment has, so adding segments replaces no rule.
  for (let segment = 0; segment < segments; segment++)
    new Rule(stack, segment ? `ReconcileSchedule${segment}` : 'ReconcileSchedule', {
      schedule: Schedule.rate(Duration.minutes(everyMinutes)),
      targets: [
        new LambdaFunction(reconciler, {
          deadLetterQueue: scheduleDlq,
          retryAttempts: 2,
          maxEventAge: Duration.minutes(10),
          ...(segments > 1 ? { event: RuleTargetInput.fromObject({ segment, segments }) } : {}),
        }),
      ],
    });
  return scheduleDlq;
}
