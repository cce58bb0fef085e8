import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { synthesizeExampleStack } from '../helpers/cdk-context';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_OUTPUTS } from '../../infra/aws/stack-outputs';
import { DASHBOARD_WIDGETS } from '../../infra/aws/dashboard';
import { METRICS_NAMESPACE, PIPELINE_METRICS } from '../../shared/observability/metrics';
import { visibilityTimeoutSeconds, WORKER_TIMING } from '../../shared/pipeline/constants';

type Resource = { Type: string; Properties: Record<string, any> };

describe('Stack: ConnectorStack', () => {
  let template: Template;
  let resources: Record<string, Resource>;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const functionId = (entryName: string) =>
    ofType('AWS::Lambda::Function').find(([id]) => id.startsWith(entryName))?.[0] as string;

  let outdir: string;
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  beforeAll(() => {
    ({ template, outdir } = synthesizeExampleStack('Test'));
    resources = template.toJSON().Resources as Record<string, Resource>;
  });

  it('logs as Powertools intends: its service and level from the environment, JSON, traced', () => {
    // The connector's seven functions (the deploy-time import and its CDK provider log as one-off tasks do).
    const functions = ofType('AWS::Lambda::Function').filter(
      ([, r]) => r.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME,
    );
    expect(functions).toHaveLength(7);
    for (const [id, fn] of functions) {
      const variables = fn.Properties.Environment.Variables;
      expect(variables.POWERTOOLS_SERVICE_NAME).toBe(id.replace(/[A-F0-9]{8}$/, ''));
      expect(variables.POWERTOOLS_LOG_LEVEL).toBe('INFO');
      expect(variables.LOG_LEVEL).toBeUndefined();
      expect(fn.Properties.LoggingConfig).toMatchObject({ LogFormat: 'JSON', ApplicationLogLevel: 'INFO' });
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
    }
  });

  it('keeps the logical ids of the deployed tables and queues, so that no update replaces them', () => {
    // A table's logical id is its construct path: moving a table into a construct of its own would make
    // CloudFormation create an empty table beside the retained one.
    const stateful = Object.entries(resources)
      .filter(([, r]) => ['AWS::DynamoDB::Table', 'AWS::SQS::Queue'].includes(r.Type))
      .map(([id]) => id)
      .sort();
    expect(stateful).toEqual([
      'ActivityTable0B58B12C',
      'ApplicationsTable27AC2163',
      'ConnectionAuditTable9C9E0A0F',
      'ConnectionsTable8000B8A1',
      'EventsTableD24865E5',
      'JobsTable1970BC16',
      'OrdersTable315BB997',
      'ReconcileScheduleDlq0D4D5BF5',
      'ReportEventsDlq55C92E32',
      'ReportEventsQueue6F8A70A0',
      'StageEventsDlqC229330C',
      'StageEventsQueue440887E2',
    ]);
  });

  it('has one dashboard with the business metrics, the queues, the DLQs and the function errors', () => {
    const dashboards = ofType('AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]?.[1].Properties.DashboardBody);
    for (const title of Object.values(DASHBOARD_WIDGETS)) expect(body).toContain(title);
    for (const metric of PIPELINE_METRICS) expect(body).toContain(`\\"${metric}\\"`);
    expect(body).toContain(METRICS_NAMESPACE);
    expect(body).toContain('ApproximateAgeOfOldestMessage');
    expect(body).toContain('ApproximateNumberOfMessagesVisible');
    expect(body).toContain('stats sum(Invited) as Invited');
    for (const name of ['StageEventsDlq', 'ReportEventsDlq', 'InviteWorker', 'WritebackWorker', 'AtsWebhook'])
      expect(body).toContain(name);
    expect(body).toContain('\\"Errors\\"');
    expect(body).toContain('\\"Throttles\\"');
  });

  it('routes both webhooks through an HTTP API', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'POST /webhooks/ats/{connectionId}' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'POST /webhooks/interview/{connectionId}/{token}',
    });
  });

  it('runs seven functions and the deploy-time import on Node 24, the workers with the shared timeout', () => {
    const functions = ofType('AWS::Lambda::Function').filter(([, r]) => r.Properties.Runtime?.startsWith('nodejs'));
    expect(functions.map(([id]) => id.replace(/[A-F0-9]{8}$/, '')).sort()).toEqual([
      'AdminApi',
      'AtsWebhook',
      'ConnectionsImport',
      'ConnectionsImportProviderframeworkonEvent',
      'InterviewWebhook',
      'InviteWorker',
      'OrderApi',
      'Reconciler',
      'WritebackWorker',
    ]);
    for (const [, fn] of functions) expect(fn.Properties.Runtime).toBe('nodejs24.x');
    // Connection reuse is the SDK v3 default; the v2 variable means nothing to it.
    for (const [, fn] of functions)
      expect(fn.Properties.Environment.Variables).not.toHaveProperty('AWS_NODEJS_CONNECTION_REUSE_ENABLED');
    expect(resources[functionId('InviteWorker')]!.Properties.Timeout).toBe(WORKER_TIMING.workerTimeoutSeconds);
    expect(resources[functionId('WritebackWorker')]!.Properties.Timeout).toBe(WORKER_TIMING.workerTimeoutSeconds);
  });

  it('makes every table on-demand, point-in-time recoverable and encrypted; the mapping tables expire by TTL', () => {
    const tables = ofType('AWS::DynamoDB::Table');
    expect(tables).toHaveLength(7);
    for (const [id, table] of tables) {
      expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
      expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true });
      // A connection and its audit live until deleted.
      if (id.startsWith('Connection')) expect(table.Properties.TimeToLiveSpecification).toBeUndefined();
      else expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    }
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: Match.arrayWith([
        Match.objectLike({ IndexName: 'byInterview' }),
        Match.objectLike({ IndexName: 'byCandidate', Projection: { ProjectionType: 'KEYS_ONLY' } }),
        // The reconciler's open invitations: keys only, an entry changing with the state alone.
        Match.objectLike({
          IndexName: 'byConnectionState',
          KeySchema: [
            { AttributeName: 'connectionId', KeyType: 'HASH' },
            { AttributeName: 'state', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        }),
      ]),
    });
  });

  it('gives each queue a DLQ, a visibility timeout of 6 × the worker timeout and maxReceiveCount ≥ 5', () => {
    const queues = ofType('AWS::SQS::Queue');
    const main = queues.filter(([, q]) => q.Properties.RedrivePolicy);
    const dlqs = queues.filter(([, q]) => !q.Properties.RedrivePolicy);
    expect(main).toHaveLength(2);
    // The two queues' DLQs, and the reconciler schedule target's.
    expect(dlqs).toHaveLength(3);
    for (const [, queue] of main) {
      expect(queue.Properties.VisibilityTimeout).toBe(visibilityTimeoutSeconds());
      expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * WORKER_TIMING.workerTimeoutSeconds);
      expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBeGreaterThanOrEqual(5);
      const dlqId = queue.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0];
      expect(dlqs.map(([id]) => id)).toContain(dlqId);
    }
    for (const [, dlq] of dlqs) expect(dlq.Properties.MessageRetentionPeriod).toBe(14 * 86_400);
    for (const [, queue] of queues) expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
  });

  it('feeds the workers with partial batch responses and a concurrency cap', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(2);
    for (const [, mapping] of mappings) {
      expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
      expect(mapping.Properties.ScalingConfig.MaximumConcurrency).toBeGreaterThanOrEqual(2);
      expect(mapping.Properties.BatchSize).toBe(10);
    }
  });

  it("gathers each worker's batches for its window, the one its turns come back early enough for", () => {
    const windows = ['InviteWorker', 'WritebackWorker'].map((name) => {
      const id = functionId(name);
      const [, mapping] = ofType('AWS::Lambda::EventSourceMapping').find(
        ([, m]) => m.Properties.FunctionName?.Ref === id,
      ) ?? [undefined, undefined];
      return mapping?.Properties.MaximumBatchingWindowInSeconds;
    });
    expect(windows).toEqual([
      WORKER_TIMING.batchingWindowSeconds.invite,
      WORKER_TIMING.batchingWindowSeconds.writeback,
    ]);
    // A message going back for its turn comes back 2 s early (shared/pacing/turn.ts): a window of 1 s at most.
    expect(Math.max(...windows)).toBeLessThanOrEqual(1);
  });

  it('names each function as the service of its log lines', () => {
    for (const name of ['AtsWebhook', 'InterviewWebhook', 'InviteWorker', 'WritebackWorker'])
      expect(resources[functionId(name)]!.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).toBe(name);
  });

  it('runs the reconciler on a schedule', () => {
    const [[, rule] = []] = ofType('AWS::Events::Rule');
    expect(rule?.Properties.ScheduleExpression).toMatch(/^rate\(\d+ minutes\)$/);
    expect(JSON.stringify(rule?.Properties.Targets)).toContain(functionId('Reconciler'));
    // A run the schedule could not deliver is retried and then kept, not dropped.
    expect(rule?.Properties.Targets[0]).toMatchObject({
      RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 600 },
      DeadLetterConfig: { Arn: { 'Fn::GetAtt': [expect.stringMatching(/^ReconcileScheduleDlq/), 'Arn'] } },
    });
  });

  it("lets each function read only the secrets under the connections' prefix, in one statement", () => {
    const policies = ofType('AWS::IAM::Policy');
    const secretStatements = policies
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement)
      .filter((s: any) => [s.Action].flat().includes('secretsmanager:GetSecretValue'));
    // Each of the seven functions; the admin API also writes one, to rotate the keys the connector issues.
    expect(secretStatements).toHaveLength(7);
    const writers = secretStatements.filter((s: any) => [s.Action].flat().includes('secretsmanager:PutSecretValue'));
    expect(writers).toHaveLength(1);
    // It creates a connection's secret on a customer's first save through their link; no other function creates one.
    const creators = secretStatements.filter((s: any) => [s.Action].flat().includes('secretsmanager:CreateSecret'));
    expect(creators).toEqual(writers);
    for (const statement of secretStatements) {
      expect(JSON.stringify(statement.Resource)).toMatch(/:secret:ats-interview-connector\/\*"/);
      expect([statement.Resource].flat()).toHaveLength(1);
    }
  });

  it("logs API access without the path, throttles the stage, reserves the webhooks' concurrency", () => {
    const [[, stage] = []] = ofType('AWS::ApiGatewayV2::Stage');
    const format = JSON.parse(stage!.Properties.AccessLogSettings.Format) as Record<string, string>;
    expect(Object.values(format)).toContain('$context.routeKey');
    expect(JSON.stringify(format)).not.toMatch(/\$context\.(path|resourcePath)/);
    expect(stage!.Properties.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
    for (const name of ['AtsWebhook', 'InterviewWebhook'])
      expect(resources[functionId(name)]!.Properties.ReservedConcurrentExecutions).toBe(10);
    for (const name of ['InviteWorker', 'WritebackWorker', 'Reconciler'])
      expect(resources[functionId(name)]!.Properties).not.toHaveProperty('ReservedConcurrentExecutions');
  });

  it('lets the ATS webhook write replay keys and ledger records, read stage names, in the events table only', () => {
    const role = (resources[functionId('AtsWebhook')]!.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    const statements = ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(role as string))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement)
      .filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('dynamodb:')));
    expect(statements).toHaveLength(3);
    const events = statements.find((s: any) => JSON.stringify(s.Resource).includes('EventsTable'));
    expect([...events.Action].sort()).toEqual(['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem']);
    // The connection it serves, read and never written.
    const connections = statements.find((s: any) => JSON.stringify(s.Resource).includes('ConnectionsTable'));
    expect(connections.Action).toBe('dynamodb:GetItem');
    // What the console shows of its deliveries: the connection's last webhook updated (the worker notes the timeline).
    const activity = statements.find((s: any) => JSON.stringify(s.Resource).includes('ActivityTable'));
    expect([activity.Action].flat()).toEqual(['dynamodb:UpdateItem']);
  });

  it("lets the interview webhook keep its ledger, find a report's invitation and mark it, and nothing more", () => {
    const role = (resources[functionId('InterviewWebhook')]!.Properties.Role as { 'Fn::GetAtt': string[] })[
      'Fn::GetAtt'
    ][0];
    const statements = ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(role as string))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement)
      .filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('dynamodb:')));
    const on = (table: string) =>
      statements
        .filter((s: any) => JSON.stringify(s.Resource).includes(table))
        .map((s: any) => [s.Action].flat().sort().join(' '));
    expect(on('EventsTable')).toEqual(['dynamodb:DeleteItem dynamodb:PutItem']);
    expect(on('ConnectionsTable')).toEqual(['dynamodb:GetItem']);
    // By the interview and e-mail, or the service's candidate id (its two indexes); the mark an UpdateItem.
    expect(on('ApplicationsTable').sort()).toEqual(['dynamodb:Query', 'dynamodb:UpdateItem']);
    const indexes = statements.find((s: any) => [s.Action].flat().includes('dynamodb:Query'));
    expect(JSON.stringify(indexes.Resource)).toMatch(/index\/byInterview.*index\/byServiceCandidate/);
    expect(statements).toHaveLength(4);
  });

  it.each([
    // waitForHolder reads the application another worker is writing back (shared/pipeline/held-claim.ts).
    ['WritebackWorker', 'ApplicationsTable', 'dynamodb:GetItem'],
    // Every claim checks the deletion tombstone in its transaction (shared/mapping/mapping.store.ts).
    ['InviteWorker', 'EventsTable', 'dynamodb:ConditionCheckItem'],
  ])('grants %s on %s the %s its code calls', (fn, table, action) => {
    const role = (resources[functionId(fn)]!.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    const granted = ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(role as string))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement)
      .filter((s: any) => [s.Action].flat().includes(action) && JSON.stringify(s.Resource).includes(table));
    expect(granted).toHaveLength(1);
  });

  it.each([
    ['InviteWorker', 'StageEventsQueue'],
    ['WritebackWorker', 'ReportEventsQueue'],
  ])('lets the %s send only to its own queue (%s), to defer a message', (fn, queue) => {
    const role = (resources[functionId(fn)]!.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    const sends = ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(role as string))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement)
      .filter((s: any) => [s.Action].flat().includes('sqs:SendMessage'));
    expect(sends).toHaveLength(1);
    expect(JSON.stringify(sends[0].Resource)).toContain(queue);
    expect(JSON.stringify(sends[0].Resource)).not.toContain('Dlq');
  });

  it('authorizes the admin API with IAM, and lets only it and the deploy-time import write connections', () => {
    const admin = ofType('AWS::ApiGatewayV2::Route').filter(([, r]) =>
      String(r.Properties.RouteKey).includes('/admin/'),
    );
    expect(admin.length).toBe(15);
    for (const [, route] of admin) expect(route.Properties.AuthorizationType).toBe('AWS_IAM');
    // The console's operator routes take a Cognito token instead (test/infra/console-hosting.test.ts).
    const others = ofType('AWS::ApiGatewayV2::Route').filter(
      ([, r]) => !/\/(admin|console-api)\//.test(String(r.Properties.RouteKey)),
    );
    for (const [, route] of others) expect(route.Properties.AuthorizationType ?? 'NONE').toBe('NONE');
    const roleOf = (name: string) =>
      (resources[functionId(name)]!.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] as string;
    const writers = new Set(
      ofType('AWS::IAM::Policy')
        .filter(([, p]) =>
          p.Properties.PolicyDocument.Statement.some(
            (st: any) =>
              JSON.stringify(st.Resource).includes('ConnectionsTable') &&
              [st.Action].flat().some((a: string) => /PutItem|UpdateItem|DeleteItem|BatchWriteItem/.test(a)),
          ),
        )
        .flatMap(([, p]) => p.Properties.Roles.map((r: { Ref: string }) => r.Ref)),
    );
    expect([...writers].sort()).toEqual([roleOf('AdminApi'), roleOf('ConnectionsImport')].sort());
  });

  it("grants no action on every resource, but X-Ray's two, which take no resource", () => {
    const everywhere = ofType('AWS::IAM::Policy')
      .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement)
      .filter((statement: any) => statement.Resource === '*');
    // Each traced function's: the connector's seven and the deploy-time import.
    expect(everywhere.length).toBe(8);
    for (const statement of everywhere)
      expect([statement.Action].flat().sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
  });

  it('alarms on DLQ depth, the age of the oldest message and function errors, to an SNS topic', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    expect(alarms.filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible')).toHaveLength(3);
    expect(alarms.filter((a) => a.MetricName === 'ApproximateAgeOfOldestMessage')).toHaveLength(2);
    expect(alarms.filter((a) => a.MetricName === 'Errors')).toHaveLength(7);
    expect(alarms.filter((a) => a.MetricName === 'Throttles')).toHaveLength(7);
    expect(alarms.filter((a) => a.MetricName === '5xx' && a.Namespace === 'AWS/ApiGateway')).toHaveLength(1);
    // A failure a function handles (a candidate refused for good, a poison message) is logged at ERROR: alarmed too.
    const filters = ofType('AWS::Logs::MetricFilter').map(([, f]) => f.Properties);
    expect(filters).toHaveLength(7);
    for (const filter of filters) expect(filter.FilterPattern).toBe('{ $.level = "ERROR" }');
    const logged = alarms.filter((a) => String(a.MetricName).endsWith('LoggedErrors'));
    expect(logged.map((a) => a.MetricName).sort()).toEqual(
      filters.map((f) => f.MetricTransformations[0].MetricName).sort(),
    );
    for (const alarm of alarms) expect(alarm.AlarmActions).toHaveLength(1);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@acme.example.com',
    });
  });

  it('names outputs as CloudFormation accepts (alphanumeric) and outputs all that ops --aws reads', () => {
    const outputs = Object.keys(template.toJSON().Outputs as Record<string, unknown>);
    for (const name of outputs) expect(name).toMatch(/^[A-Za-z0-9]{1,255}$/);
    expect(outputs).toEqual(expect.arrayContaining(['ApiUrl', ...Object.values(OPS_OUTPUTS).map((o) => o.output)]));
    // One output for the API, none per connection: CloudFormation allows 200 outputs in all.
    expect(outputs.filter((name) => name.startsWith('AtsWebhookUrl'))).toHaveLength(0);
    // The order endpoints to give Greenhouse's partner team, Ashby and Kombo, once per deployment.
    expect(outputs).toEqual(
      expect.arrayContaining([
        'GreenhousePartnerListTestsUrl',
        'GreenhousePartnerSendTestUrl',
        'GreenhousePartnerTestStatusUrl',
        'GreenhousePartnerResponseErrorUrl',
        'AshbyAssessmentsBaseUrl',
        'KomboWebhookBaseUrl',
      ]),
    );
    const routes = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties.RouteKey);
    expect(routes).toEqual(expect.arrayContaining(['GET /orders/{source}/{call}', 'POST /orders/{source}/{call}']));
  });
});

describe('Command: cdk app with a bad connections file', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'connector-synth-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits non-zero naming the connection and the field', () => {
    const bad = join(dir, 'connections.json');
    writeFileSync(
      bad,
      JSON.stringify({
        connections: [
          {
            id: 'acme-gh',
            ats: 'greenhouse',
            atsBaseUrl: 'https://harvest.greenhouse.io',
            atsUserId: '1',
            interviewService: { baseUrl: 'https://x.example.com' },
            secretRef: 's',
            triggers: [{ id: 't', stage: {}, interview: { questions: [] } }],
          },
        ],
      }),
    );
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'infra/aws/app.ts'], {
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify({ connections: bad, 'aws:cdk:bundling-stacks': [] }),
        CDK_OUTDIR: dir,
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('connections[0] (acme-gh).triggers.0.stage');
  });
});
