import type { RunTotals } from '../../functions/reconciler/reconciler.handler';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import {
  parseConnections,
  type AtsKind,
  type DirectAtsKind,
  type Connection,
  type ConnectionSecrets,
} from '../../shared/config';
import { PROFILES } from '../../shared/ats/profiles';
import { fillPlaceholders } from '../../shared/config/loader';
import { clearInterviewCache } from '../../shared/pipeline/ensure-interview.use-case';
import { WORKER_TIMING } from '../../shared/pipeline/constants';
import { type AwsCall, recordAwsCalls, runAs } from './aws-calls';
import { holdWorkDir } from './work-dir-lock';
import { FUNCTION_CONCURRENCY, type FunctionName } from '../aws/functions';
import { emulatorEnvironment, startEmulators, type EmulatorEndpoints, type Emulators } from './emulators';
import { type GatewayRoute, type HttpHandler, type StaticFiles, startHttpGateway } from './http-gateway';
import { buildConsoleSync } from '../console/build';
import { asHandler, startLocalFunction, type LocalFunction, type LocalFunctionStats } from './lambda-runtime';
import {
  createQueueWithDlq,
  createTables,
  deleteResources,
  queueDepth,
  type LocalQueue,
  type LocalTables,
} from './provision';
import { startAtsSandboxes, type AtsSandboxView } from './sandbox/ats';
import type { GreenhouseSandbox } from './sandbox/ats/greenhouse/server';
import { PARTNER_CALL_NAMES, type PartnerUrls } from './sandbox/ats/greenhouse/assessments';
import type { LeverSandbox } from './sandbox/ats/lever/server';
import type { RunningServer } from './sandbox/http-kit';
import { startInterviewServiceSandbox, type InterviewServiceSandbox } from './sandbox/interview-service/server';
import {
  eventSourceBatches,
  lambdaContext,
  type SqsEventSource,
  type SqsHandler,
  startSqsEventSource,
} from './sqs-event-source';
import { createQueueWatch, type QueueWatch } from './queue-watch';
import { connectionOfBody } from './fair-buffer';
import { registerWebhooks } from '../../shared/doctor/register';
import { fileSecretStore } from '../../shared/config/secret-store';
import { errorMessage } from '../../shared/errors';
import { issuePartnerKey } from '../../shared/orders/partner-calls';
import type { AshbySandbox } from './sandbox/ats/ashby/server';
import { type KomboSandbox, startKomboSandbox } from './sandbox/kombo/server';
import { komboApiFor } from '../../shared/orders/kombo-orders';
import { publishPackages } from '../../shared/orders/kombo-packages';
import { DynamoConnectionStore } from '../../shared/mapping/connections.records';
import { importConnections } from '../../shared/mapping/connections.import';

export const LOCAL_DEFAULTS = {
  gatewayPort: 3000,
  interviewPort: 4010,
  /** Kombo's sandbox on a fixed port for `npm start` (the ATS sandboxes take 4020–4050). */
  komboPort: 4060,
  configPath: 'config/connections.local.json',
  workDir: '.local',
  /**
   * Locally the workers get 10 s and the queues 6 × that, the same ratio as in AWS, so retries come back within a
   * minute.
   */
  functionTimeoutMs: 10_000,
  reconcileIntervalMs: 30_000,
  /** A change through the admin API is in effect within this on one machine. */
  connectionCacheSeconds: 5,
  mailFrom: 'talent@demo.example.com',
} as const;

export interface LocalStackOptions {
  /** Fixed ports for `npm start`; 0 (the default) picks free ones, as tests do. */
  ports?: { gateway?: number; interview?: number; kombo?: number; dynamodb?: number; sqs?: number; ses?: number };
  /** The ATS sandboxes on their fixed ports (4020 Greenhouse, 4030 Ashby, 4040 Lever, 4050 Workable). */
  fixedAtsPorts?: boolean;
  configPath?: string;
  /** More connections files, their connections added to the first's (`npm start` adds Kombo's two customers). */
  extraConfigPaths?: string[];
  workDir?: string;
  functionTimeoutMs?: number;
  /** Overrides 6 × the function timeout, e.g. to watch redrive to the DLQ within a test. */
  visibilityTimeoutSeconds?: number;
  /** How long each function keeps a connection it read (5 s here; 30 s on AWS by default). */
  connectionCacheSeconds?: number;
  /** 0 turns the timer off; `reconcileNow()` still runs it. */
  reconcileIntervalMs?: number;
  reportDelayMs?: number;
  /** Execution environments per worker (and its event source's pollers, two at least); default: the stack's. */
  maxConcurrency?: number;
  logLevel?: string;
  /** Requests per window of each ATS sandbox (defaults: the documented limits). */
  atsRateLimits?: Partial<Record<AtsKind, number>>;
  /** Each ATS sandbox's rate-limit window in ms (defaults: the documented windows, e.g. Greenhouse's 30 s). */
  atsRateWindowsMs?: Partial<Record<AtsKind, number>>;
  /** Share of batches the event sources hand to two workers at once, as SQS may deliver a message twice. */
  duplicateDeliveryRate?: number;
  /** A share of worker invocations that start with little time left (infra/local/sqs-event-source.ts). */
  shortDeadline?: { rate: number; remainingMs: number };
  /** Lets a caller put something between the SDK clients and the emulators, e.g. the benchmark's request counter. */
  wrapEndpoints?: (endpoints: EmulatorEndpoints) => Promise<EmulatorEndpoints>;
  /** Records every AWS call each function makes (`awsCalls`), for the IAM conformance check. */
  recordAwsCalls?: boolean;
  /** False leaves the ATS webhooks unregistered, as a new customer's account is before the doctor runs. */
  registerAtsWebhooks?: boolean;
  /** False leaves the interview service without this stack's webhooks. */
  registerInterviewWebhooks?: boolean;
  /** Prints the workers' embedded-metric-format lines, as CloudWatch would receive them (off by default). */
  metrics?: boolean;
  /** Sets, on every connection of the file, the status in the ATS and each trigger's reminders and expiry. */
  lifecycle?: LifecycleSettings;
  /**
   * `environments` (the default) runs each function as Lambda does: in its own execution environments (worker
   * threads), up to its concurrency, sharing no module state. `one-process` imports every handler into this
   * process, one module state for all: for debugging with breakpoints, never for figures.
   */
  runtime?: LocalRuntime;
  /**
   * Emulators already running, used instead of starting them (the integration tests start DynamoDB Local and SQS
   * once); the stack's tables and queues then carry `resourcePrefix`, and are deleted when it stops.
   */
  running?: { emulators: Partial<EmulatorEndpoints>; resourcePrefix: string };
}

export type LocalRuntime = 'environments' | 'one-process';

export interface LocalStack {
  gatewayUrl: string;
  /** The console at `${gatewayUrl}/console/`, signed in with this key (the admin API's). */
  operatorKey: string;
  connections: Connection[];
  secrets: Record<string, ConnectionSecrets>;
  interview: InterviewServiceSandbox;
  greenhouse: GreenhouseSandbox;
  ashby: AshbySandbox;
  lever: LeverSandbox;
  /** Kombo's Assessment API: orders from about seventeen more ATSs, by integration. */
  kombo: KomboSandbox;
  /** The ATSs the connector calls directly; Kombo's unified side is `kombo.unified`. */
  ats: Record<DirectAtsKind, AtsSandboxView>;
  emulators: Emulators;
  tables: LocalTables;
  queues: { stage: LocalQueue; report: LocalQueue };
  sources: { invite: SqsEventSource; writeback: SqsEventSource };
  /** What the workers received and deferred, by message: what is left on the queues, and why. */
  watch: QueueWatch;
  dynamo: DynamoDBClient;
  sqs: SQSClient;
  stackFile: string;
  /** The AWS calls each function made, when `recordAwsCalls` was asked for (infra/local/aws-calls.ts). */
  awsCalls: AwsCall[] | undefined;
  /** How the functions run, and each one's environments, cold starts and timeouts (`environments` runtime). */
  runtime: LocalRuntime;
  functions: Partial<Record<FunctionName, LocalFunctionStats>>;
  /** One reconciler run now (or the one under way): what it enqueued, and the connections it left work for. */
  reconcileNow(): Promise<ReconcileResult>;
  dlqDepths(): Promise<{ stage: number; report: number }>;
  queueDepths(): Promise<{ stage: number; report: number }>;
  /** Both queues empty (nothing visible, in flight or delayed) and no worker busy. */
  isQuiet(): Promise<boolean>;
  /**
   * Resolves once `isQuiet`, or rejects after `timeoutMs` with what is left on each queue and why (the message kinds,
   * their connections, deferrals and reasons).
   */
  waitForQuiet(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** A reconciler run's totals: what it enqueued, and the connections it left work for (failed, unfinished...). */
type ReconcileResult = RunTotals;

/**
 * Everything on one machine: DynamoDB Local, local SQS and SES, the sandboxes of the interview service and
 * of Greenhouse, the HTTP gateway and the SQS event sources, all feeding the same handlers Lambda runs.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const ports = options.ports ?? {};
  const workDir = resolve(options.workDir ?? LOCAL_DEFAULTS.workDir);
  mkdirSync(workDir, { recursive: true });
  const functionTimeoutMs = options.functionTimeoutMs ?? LOCAL_DEFAULTS.functionTimeoutMs;
  const visibility = options.visibilityTimeoutSeconds ?? Math.ceil((functionTimeoutMs / 1000) * 6);
  const cleanups: (() => Promise<void>)[] = [];
  let stopped: Promise<void> | undefined;
  /** Once, however many times asked: the last started first. */
  const stopAll = (): Promise<void> =>
    (stopped ??= (async () => {
      for (const cleanup of [...cleanups].reverse()) await cleanup().catch(() => undefined);
    })());
  try {
    cleanups.push(holdWorkDir(workDir));
    const emulators = await startEmulators(ports, options.running?.emulators);
    cleanups.push(() => emulators.stop());
    const interview = await startInterviewServiceSandbox({
      port: ports.interview ?? 0,
      reportDelayMs: options.reportDelayMs ?? 1000,
      seededReports: 0,
    });
    cleanups.push(() => interview.close());
    const sandboxes = await startAtsSandboxes(options.fixedAtsPorts ?? false, {
      rateLimits: options.atsRateLimits,
      rateWindowsMs: options.atsRateWindowsMs,
    });
    cleanups.push(() => sandboxes.close());
    const { greenhouse } = sandboxes;
    const kombo = await startKomboSandbox(ports.kombo ?? 0);
    cleanups.push(() => kombo.close());

    const sourcePath = options.configPath ?? LOCAL_DEFAULTS.configPath;
    const urls = {
      INTERVIEW_SANDBOX_URL: interview.url,
      GREENHOUSE_SANDBOX_URL: sandboxes.views.greenhouse.url,
      ASHBY_SANDBOX_URL: sandboxes.views.ashby.url,
      LEVER_SANDBOX_URL: sandboxes.views.lever.url,
      WORKABLE_SANDBOX_URL: sandboxes.views.workable.url,
      KOMBO_SANDBOX_URL: kombo.url,
    };
    const readDocument = (path: string): { connections: unknown[] } => {
      if (!existsSync(path)) throw new Error(`the connections file ${path} does not exist`);
      try {
        return JSON.parse(fillPlaceholders(readFileSync(path, 'utf8'), urls));
      } catch (error) {
        throw new Error(`${path} is not valid JSON: ${errorMessage(error)}`);
      }
    };
    const document = readDocument(sourcePath);
    for (const extra of options.extraConfigPaths ?? []) document.connections.push(...readDocument(extra).connections);
    applyLifecycle(document, options.lifecycle);
    applyRateLimits(document, options.atsRateLimits, options.atsRateWindowsMs);
    const connections = parseConnections(document, sourcePath);
    const configPath = join(workDir, 'connections.json');
    writeFileSync(configPath, JSON.stringify(document, null, 2));
    const secrets: Record<string, ConnectionSecrets> = {};
    for (const connection of connections) {
      // Each connection is its own customer of the interview service, with its own key and webhooks.
      const interviewApiKey = connections.length === 1 ? interview.apiKey : `${interview.apiKey}-${connection.id}`;
      interview.addAccount(interviewApiKey);
      secrets[connection.secretRef] = {
        interviewApiKey,
        interviewWebhookToken: randomBytes(24).toString('hex'),
        atsWebhookSecret: randomBytes(24).toString('hex'),
        ...(connection.ats === 'kombo'
          ? // Kombo's API key and its webhook secret: the vendor's Kombo account's, one for all its integrations.
            { atsApiKey: kombo.apiKey, atsWebhookSecret: kombo.webhookSecret }
          : sandboxes.views[connection.ats].credentials),
        // Orders from inside the ATS: the keys the connector issues the customer, and the credential Greenhouse
        // issues the partner for its completion PATCH (never the same).
        ...(connection.orders?.greenhouse
          ? {
              greenhousePartnerKey: issuePartnerKey(connection.id),
              greenhouseCompletionKey: randomBytes(24).toString('base64url'),
            }
          : {}),
        ...(connection.orders?.ashby ? { ashbyPartnerKey: issuePartnerKey(connection.id) } : {}),
        // Kombo: the account's API key and webhook secret, as its dashboard shows them.
        ...(connection.orders?.kombo ? { komboApiKey: kombo.apiKey, komboWebhookSecret: kombo.webhookSecret } : {}),
      };
    }
    const secretsPath = join(workDir, 'secrets.json');
    writeFileSync(secretsPath, JSON.stringify(secrets, null, 2), { mode: 0o600 });

    const endpoints = options.wrapEndpoints ? await options.wrapEndpoints(emulators.endpoints) : emulators.endpoints;
    Object.assign(process.env, emulatorEnvironment(endpoints));
    // Set-up and bookkeeping go straight to the emulators; the functions' traffic goes through `endpoints`.
    const dynamo = new DynamoDBClient({ endpoint: emulators.endpoints.dynamodb });
    const sqs = new SQSClient({ endpoint: emulators.endpoints.sqs });
    const prefix = options.running?.resourcePrefix ?? '';
    const tables = await createTables(dynamo, `${prefix}connector`);
    const queues = {
      stage: await createQueueWithDlq(sqs, `${prefix}stage-events`, visibility),
      report: await createQueueWithDlq(sqs, `${prefix}report-events`, visibility),
    };
    if (options.running) cleanups.push(() => deleteResources(dynamo, sqs, tables, Object.values(queues)));
    // The SQS client sends to the queue URL's host, so the functions get URLs on the (possibly wrapped) endpoint.
    const functionQueueUrl = (url: string): string => new URL(endpoints.sqs).origin + new URL(url).pathname;
    const functionSqs = new SQSClient({});
    // The connections table holds the file's connections, as a deploy's import does (connections.import.ts); the
    // functions read each one from there, and the admin API changes them while the stack runs.
    const connectionStore = new DynamoConnectionStore({
      tables: { connections: tables.connections, audit: tables.connectionAudit },
      client: dynamo,
    });
    await importConnections(connectionStore, (document as { connections: { id: string }[] }).connections, {
      principal: 'local:npm-start',
    });
    Object.assign(process.env, {
      CONNECTIONS_TABLE: tables.connections,
      CONNECTION_AUDIT_TABLE: tables.connectionAudit,
      CONNECTION_CACHE_SECONDS: String(options.connectionCacheSeconds ?? LOCAL_DEFAULTS.connectionCacheSeconds),
      // A disabled connection's queued work looks again each cache time here (every 5 minutes on AWS): sooner, it
      // would read the same cached connection.
      PARKED_RECHECK_SECONDS: String(options.connectionCacheSeconds ?? LOCAL_DEFAULTS.connectionCacheSeconds),
      SECRETS_FILE: secretsPath,
      JOBS_TABLE: tables.jobs,
      APPLICATIONS_TABLE: tables.applications,
      EVENTS_TABLE: tables.events,
      ORDERS_TABLE: tables.orders,
      STAGE_QUEUE_URL: functionQueueUrl(queues.stage.url),
      REPORT_QUEUE_URL: functionQueueUrl(queues.report.url),
      // The admin API's own (the console's failures page): on AWS only it is given them.
      STAGE_DLQ_URL: functionQueueUrl(queues.stage.dlqUrl),
      REPORT_DLQ_URL: functionQueueUrl(queues.report.dlqUrl),
      ACTIVITY_TABLE: tables.activity,
      MAIL_FROM: LOCAL_DEFAULTS.mailFrom,
      POWERTOOLS_LOG_LEVEL: options.logLevel ?? process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
      // EMF lines are for CloudWatch; on one machine they are printed only when asked for.
      POWERTOOLS_METRICS_DISABLED: options.metrics ? 'false' : 'true',
    });
    const awsCalls = options.recordAwsCalls ? recordAwsCalls() : undefined;
    const concurrency = options.maxConcurrency ?? FUNCTION_CONCURRENCY.worker;
    const runtime = options.runtime ?? 'environments';
    const functions: Partial<Record<FunctionName, LocalFunction>> = {};
    const handlers =
      runtime === 'environments'
        ? environmentHandlers(functions, {
            concurrency,
            awsCalls,
          })
        : await oneProcessHandlers();
    cleanups.push(async () => {
      await Promise.all(Object.values(functions).map((fn) => fn.stop()));
    });
    const { atsWebhook, interviewWebhook, inviteWorker, writebackWorker, orderApi, adminApi } = handlers;
    // The admin API's key on one machine (IAM on AWS), checked by the gateway before a body is read.
    const adminKey = randomBytes(24).toString('base64url');
    const reconciler = (event: object) => handlers.reconciler(event, lambdaContext('Reconciler', 300_000));

    const gateway: RunningServer = await startHttpGateway(
      [
        { method: 'POST', pattern: '/webhooks/ats/:connectionId', handler: atsWebhook, functionName: 'AtsWebhook' },
        {
          method: 'POST',
          pattern: '/webhooks/interview/:connectionId/:token',
          handler: interviewWebhook,
          functionName: 'InterviewWebhook',
        },
        ...(['GET', 'POST'] as const).map((method) => ({
          method,
          pattern: '/orders/:source/:call',
          handler: orderApi,
          functionName: 'OrderApi',
        })),
        ...adminRoutes(adminApi, adminKey),
      ],
      ports.gateway ?? 0,
      consoleFiles(workDir),
    );
    cleanups.push(() => gateway.close());
    const watch = createQueueWatch();
    const { deferralObserver } = await import('../../functions/_runtime/deferral');
    deferralObserver.deferred = (message, delaySeconds, code) => watch.deferred(message, delaySeconds, code);
    cleanups.push(async () => {
      deferralObserver.deferred = undefined;
    });
    // Each worker polls its own queue, as its event source mapping does on AWS.
    const worker = (
      name: string,
      queue: { url: string; arn: string },
      handler: typeof inviteWorker,
      waitTimeSeconds: number,
    ) =>
      startSqsEventSource({
        name,
        queueUrl: functionQueueUrl(queue.url),
        queueArn: queue.arn,
        handler,
        functionTimeoutMs,
        maxConcurrency: eventSourceBatches(runtime, concurrency),
        client: functionSqs,
        duplicateRate: options.duplicateDeliveryRate,
        shortDeadline: options.shortDeadline,
        watch,
        tenantOf: connectionOfBody,
        waitTimeSeconds,
      });
    const { batchingWindowSeconds } = WORKER_TIMING;
    const invite = worker('invite-worker', queues.stage, inviteWorker, batchingWindowSeconds.invite);
    const writeback = worker('writeback-worker', queues.report, writebackWorker, batchingWindowSeconds.writeback);
    cleanups.push(
      () => invite.stop(),
      () => writeback.stop(),
    );

    for (const connection of connections) {
      const connectionSecrets = secrets[connection.secretRef] as ConnectionSecrets;
      if (options.registerInterviewWebhooks !== false)
        interview.registerWebhook(
          interviewWebhookUrl(gateway.url, connection.id, connectionSecrets.interviewWebhookToken),
          'interview_report.created',
          connectionSecrets.interviewApiKey,
        );
      if (options.registerAtsWebhooks === false) continue;
      if (connection.ats === 'kombo') {
        // Kombo's webhooks are made in its dashboard, one per Kombo account: each connection's URL here.
        kombo.unified.registerWebhook(`${gateway.url}/webhooks/ats/${connection.id}`, kombo.webhookSecret);
        continue;
      }
      if (connection.ats === 'greenhouse') {
        // Greenhouse has no webhook API: the customer pastes the URL and secret in Dev Center, as here.
        await sandboxes.views.greenhouse.registerWebhook({
          url: `${gateway.url}/webhooks/ats/${connection.id}`,
          secret: connectionSecrets.atsWebhookSecret as string,
        });
        continue;
      }
      // The others through their own APIs, as `npm run doctor -- --register-webhooks` does: what the ATS issues
      // (Lever's tokens, Workable's signing key) is written to the secrets file before any delivery.
      const lines = await registerWebhooks(connection, { secrets: fileSecretStore(secretsPath), apiUrl: gateway.url });
      const failed = lines.find((line) => line.status === 'fail');
      if (failed) throw new Error(`${connection.id}: ${failed.what}`);
    }
    Object.assign(secrets, JSON.parse(readFileSync(secretsPath, 'utf8')) as Record<string, ConnectionSecrets>);
    registerOrderPartners(connections, secrets, { gatewayUrl: gateway.url, sandboxes });
    await publishKomboPackages(connections, secrets, gateway.url, kombo);

    let reconciling: Promise<ReconcileResult> | undefined;
    const reconcileNow = (): Promise<ReconcileResult> => {
      reconciling ??= reconciler({}).finally(() => (reconciling = undefined));
      return reconciling;
    };
    const interval = options.reconcileIntervalMs ?? LOCAL_DEFAULTS.reconcileIntervalMs;
    if (interval > 0) {
      const timer = setInterval(
        () => void reconcileNow().catch((error: unknown) => console.error(`reconciler: ${errorMessage(error)}`)),
        interval,
      );
      cleanups.push(async () => clearInterval(timer));
    }

    const stackFile = join(workDir, 'stack.json');
    writeFileSync(
      stackFile,
      JSON.stringify(
        {
          connector: { url: gateway.url },
          // The admin API's key: `npm run ops -- connections …` sends it (on AWS, SigV4 with the operator's role).
          admin: { url: `${gateway.url}/admin/connections`, key: adminKey },
          // The console: signed in with the same key on one machine (a Cognito user of the operators' group on AWS).
          console: { url: `${gateway.url}/console/`, key: adminKey },
          files: { connections: configPath, secrets: secretsPath },
          // The local connections file's `${…}` placeholders: `ops connections put FILE` fills them in from here.
          placeholders: urls,
          connections: connections.map((c) => ({
            id: c.id,
            ats: c.ats,
            webhookUrl: `${gateway.url}/webhooks/ats/${c.id}`,
            webhookSecret: secrets[c.secretRef]?.atsWebhookSecret,
            webhookSecrets: secrets[c.secretRef]?.atsWebhookSecrets,
            interviewWebhookUrl: interviewWebhookUrl(gateway.url, c.id, secrets[c.secretRef]?.interviewWebhookToken),
            interviewApiKey: secrets[c.secretRef]?.interviewApiKey,
            ...(c.orders ? { orders: orderEndpoints(c, secrets[c.secretRef], gateway.url) } : {}),
          })),
          sandboxes: {
            interviewService: { url: interview.url, apiKey: interview.apiKey },
            ats: Object.fromEntries(Object.entries(sandboxes.views).map(([kind, view]) => [kind, { url: view.url }])),
          },
          ses: { url: emulators.endpoints.ses },
          dynamodb: { url: emulators.endpoints.dynamodb, tables },
          sqs: { url: emulators.endpoints.sqs, queues },
        },
        null,
        2,
      ),
      { mode: 0o600 },
    );

    const depths = async (which: 'url' | 'dlqUrl') => ({
      stage: await queueDepth(sqs, queues.stage[which]),
      report: await queueDepth(sqs, queues.report[which]),
    });
    const isQuiet = async (): Promise<boolean> => {
      const queued = await depths('url');
      return queued.stage + queued.report === 0 && invite.stats.inFlight + writeback.stats.inFlight === 0;
    };
    return {
      gatewayUrl: gateway.url,
      operatorKey: adminKey,
      connections,
      secrets,
      interview,
      greenhouse,
      ashby: sandboxes.ashby,
      lever: sandboxes.lever,
      kombo,
      ats: sandboxes.views,
      emulators,
      tables,
      queues,
      sources: { invite, writeback },
      watch,
      dynamo,
      sqs,
      stackFile,
      awsCalls,
      runtime,
      functions: Object.fromEntries(Object.entries(functions).map(([name, fn]) => [name, fn.stats])),
      reconcileNow,
      dlqDepths: () => depths('dlqUrl'),
      queueDepths: () => depths('url'),
      isQuiet,
      async waitForQuiet(timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        while (!(await isQuiet())) {
          if (Date.now() > deadline) {
            const queued = await depths('url');
            const left = watch.describeUnfinished();
            throw new Error(
              `queues still busy after ${timeoutMs} ms (stage ${queued.stage}, report ${queued.report})` +
                (left.length ? `; what the workers left:\n${left.map((line) => `  - ${line}`).join('\n')}` : ''),
            );
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

interface Handlers {
  atsWebhook: HttpHandler;
  interviewWebhook: HttpHandler;
  orderApi: HttpHandler;
  adminApi: HttpHandler;
  inviteWorker: SqsHandler | LocalFunction;
  writebackWorker: SqsHandler | LocalFunction;
  reconciler: (event: object, context: Context) => Promise<ReconcileResult>;
}

/**
 * The admin API's routes, each authorized by the operator's key before the body is read, as API Gateway's IAM
 * authorizer does with a SigV4 signature: the function gets the caller as the authorizer's principal.
 */
function adminRoutes(handler: HttpHandler, key: string): GatewayRoute[] {
  const expected = createHash('sha256').update(key).digest();
  const authorize = (authorization: string | undefined) => {
    const given = createHash('sha256')
      .update(/^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '')
      .digest();
    return timingSafeEqual(given, expected) ? 'local:operator-key' : undefined;
  };
  const patterns = ['/admin/connections', '/admin/connections/:id', '/admin/connections/:id/:action'];
  const methods = ['GET', 'PUT', 'PATCH', 'POST', 'DELETE'];
  return [
    ...methods.flatMap((method) =>
      [...patterns, '/console-api/*'].map((pattern) => ({
        method,
        pattern,
        handler,
        functionName: 'AdminApi',
        authorize,
      })),
    ),
    // A customer's connect link: its token, in the path, is checked by the function (no authorizer on AWS either).
    ...methods.map((method) => ({ method, pattern: '/connect-api/*', handler, functionName: 'AdminApi' })),
  ];
}

/**
 * The console, built from console/src into the work directory and served at `/console` as CloudFront serves it on
 * AWS; its sign-in here is the operator's key (`npm start` prints where it is), Cognito's on AWS.
 */
function consoleFiles(workDir: string): StaticFiles {
  const dir = join(workDir, 'console');
  buildConsoleSync(dir);
  return { prefix: '/console', dir, generated: { 'config.json': JSON.stringify({ mode: 'local' }) } };
}

/** Each function in its own execution environments: the workers up to the event sources' concurrency. */
function environmentHandlers(
  functions: Partial<Record<FunctionName, LocalFunction>>,
  options: {
    concurrency: number;
    awsCalls: AwsCall[] | undefined;
  },
): Handlers {
  const start = (name: FunctionName, maxEnvironments: number) =>
    (functions[name] = startLocalFunction({ name, maxEnvironments, awsCalls: options.awsCalls }));
  return {
    atsWebhook: asHandler(start('AtsWebhook', FUNCTION_CONCURRENCY.webhook)),
    interviewWebhook: asHandler(start('InterviewWebhook', FUNCTION_CONCURRENCY.webhook)),
    orderApi: asHandler(start('OrderApi', FUNCTION_CONCURRENCY.webhook)),
    adminApi: asHandler(start('AdminApi', 1)),
    inviteWorker: start('InviteWorker', options.concurrency),
    writebackWorker: start('WritebackWorker', options.concurrency),
    // The schedule starts one run at a time.
    reconciler: asHandler(start('Reconciler', 1)),
  };
}

/**
 * Every handler imported here, one module state for all (for debugging): each handler runs as its function, and the
 * two workers share one gate per connection.
 */
async function oneProcessHandlers(): Promise<Handlers> {
  const { resetConnectionCaches } = await import('../../functions/_runtime/connections');
  resetConnectionCaches();
  clearInterviewCache();
  const as =
    <E, R>(fn: FunctionName, handler: (event: E, context: Context) => Promise<R>) =>
    (event: E, context: Context): Promise<R> =>
      runAs(fn, () => handler(event, context));
  return {
    atsWebhook: as('AtsWebhook', (await import('../../functions/ats-webhook/ats-webhook.handler')).handler),
    interviewWebhook: as(
      'InterviewWebhook',
      (await import('../../functions/interview-webhook/interview-webhook.handler')).handler,
    ),
    orderApi: as('OrderApi', (await import('../../functions/order-api/order-api.handler')).handler),
    adminApi: as('AdminApi', (await import('../../functions/admin-api/admin-api.handler')).handler),
    inviteWorker: as('InviteWorker', (await import('../../functions/invite-worker/invite-worker.handler')).handler),
    writebackWorker: as(
      'WritebackWorker',
      (await import('../../functions/writeback-worker/writeback-worker.handler')).handler,
    ),
    reconciler: as('Reconciler', (await import('../../functions/reconciler/reconciler.handler')).handler),
  };
}

export interface LifecycleSettings {
  status?: 'tags' | 'off';
  reminders?: { afterHours: number; max?: number };
  expireAfterDays?: number;
  /** How often each connection's stages are swept (`sweep.everyMinutes`), in minutes. */
  sweepEveryMinutes?: number;
}

/**
 * Each sandbox's window unless it is given another: the one its ATS's profile documents (Ashby publishes none; its
 * sandbox counts 10-s windows).
 */
const SANDBOX_WINDOWS_MS = Object.fromEntries(
  Object.entries(PROFILES).map(([kind, profile]) => [
    kind,
    'windowMs' in profile.rate ? profile.rate.windowMs : 10_000,
  ]),
) as Record<AtsKind, number>;

/**
 * A connection paces itself to its `atsRateLimit`, else to its ATS's documented rate (which each sandbox keeps by
 * default): when a sandbox is given another limit (the chaos run lifts them, a benchmark sets one), the connection
 * says the same, as a customer with that account's limit would.
 */
function applyRateLimits(
  document: unknown,
  limits: Partial<Record<AtsKind, number>> | undefined,
  windowsMs: Partial<Record<AtsKind, number>> | undefined,
): void {
  for (const connection of (document as { connections?: Record<string, unknown>[] }).connections ?? []) {
    const kind = connection.ats as AtsKind;
    const requests = limits?.[kind];
    if (requests === undefined) continue;
    const windowMs = windowsMs?.[kind] ?? SANDBOX_WINDOWS_MS[kind];
    connection.atsRateLimit = { requests, perSeconds: windowMs / 1000 };
  }
}

/** Writes `lifecycle` into the connections document (before it is validated, as a file would carry it). */
function applyLifecycle(document: unknown, lifecycle: LifecycleSettings | undefined): void {
  if (!lifecycle) return;
  const connections = (document as { connections?: Record<string, unknown>[] }).connections ?? [];
  for (const connection of connections) {
    if (lifecycle.status)
      connection.writeBack = { ...(connection.writeBack as object | undefined), status: lifecycle.status };
    if (lifecycle.sweepEveryMinutes !== undefined)
      connection.sweep = { ...(connection.sweep as object | undefined), everyMinutes: lifecycle.sweepEveryMinutes };
    for (const trigger of (connection.triggers as Record<string, unknown>[] | undefined) ?? []) {
      if (lifecycle.reminders) trigger.reminders = lifecycle.reminders;
      if (lifecycle.expireAfterDays !== undefined) trigger.expireAfterDays = lifecycle.expireAfterDays;
    }
  }
}

/** The URL the interview service calls for a connection: its secret token is the last segment. */
function interviewWebhookUrl(gatewayUrl: string, connectionId: string, token: string | undefined): string {
  return `${gatewayUrl}/webhooks/interview/${connectionId}/${token}`;
}

/** The URLs an ATS calls for a connection's orders, with the key it sends: what a person needs to play the ATS. */
function orderEndpoints(connection: Connection, secrets: ConnectionSecrets | undefined, gatewayUrl: string) {
  return {
    ...(connection.orders?.greenhouse
      ? {
          greenhouse: {
            urls: Object.fromEntries(
              PARTNER_CALL_NAMES.map((call) => [call, `${gatewayUrl}/orders/greenhouse/${call}`]),
            ) as PartnerUrls,
            key: secrets?.greenhousePartnerKey,
          },
        }
      : {}),
    ...(connection.orders?.ashby
      ? { ashby: { baseUrl: `${gatewayUrl}/orders/ashby`, key: secrets?.ashbyPartnerKey } }
      : {}),
    ...(connection.orders?.kombo
      ? { kombo: { webhookUrl: `${gatewayUrl}/orders/kombo/${connection.id}`, secret: secrets?.komboWebhookSecret } }
      : {}),
  };
}

/**
 * Kombo learns the connection's webhook URL (the vendor enters it in Kombo's dashboard) and gets its packages, as
 * `npm run ops -- kombo-packages --publish` publishes them in AWS.
 */
async function publishKomboPackages(
  connections: Connection[],
  secrets: Record<string, ConnectionSecrets>,
  gatewayUrl: string,
  kombo: KomboSandbox,
): Promise<void> {
  for (const connection of connections) {
    const config = connection.orders?.kombo;
    const api = config && komboApiFor(connection, secrets[connection.secretRef] ?? {});
    if (!config || !api) continue;
    kombo.register(`${gatewayUrl}/orders/kombo/${connection.id}`);
    await publishPackages(api, config, { remove: false });
  }
}

/** Each sandbox learns its partner's URLs and keys, as the ATS's partnerships team and the customer enter them. */
function registerOrderPartners(
  connections: Connection[],
  secrets: Record<string, ConnectionSecrets>,
  stack: { gatewayUrl: string; sandboxes: { greenhouse: GreenhouseSandbox; ashby: AshbySandbox } },
): void {
  for (const connection of connections) {
    const own = secrets[connection.secretRef];
    const endpoints = orderEndpoints(connection, own, stack.gatewayUrl);
    if (endpoints.greenhouse?.key && own?.greenhouseCompletionKey)
      stack.sandboxes.greenhouse.assessments.register({
        urls: endpoints.greenhouse.urls,
        key: endpoints.greenhouse.key,
        completionKey: own.greenhouseCompletionKey,
      });
    if (endpoints.ashby?.key)
      stack.sandboxes.ashby.assessments.register({ baseUrl: endpoints.ashby.baseUrl, key: endpoints.ashby.key });
  }
}
