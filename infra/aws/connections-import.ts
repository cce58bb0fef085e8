import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CustomResource, Duration, RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import { Architecture, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { bundlingOptions, LAMBDA_RUNTIME } from './connector-functions';
import type { ConnectorTables } from './tables';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The connections file given to `cdk deploy`, imported into the connections table on every deploy whose file
 * changed (its hash is the resource's property): one function and one custom resource whatever the number of
 * connections, so the template does not grow with customers. The file is bundled into this function alone.
 */
export function importConnectionsAtDeploy(
  stack: Stack,
  tables: Pick<ConnectorTables, 'connections' | 'connectionAudit'>,
  settings: { connectionsFile: string; prune: boolean },
): void {
  const importer = new NodejsFunction(stack, 'ConnectionsImport', {
    entry: join(ROOT, 'functions/connections-import/connections-import.handler.ts'),
    handler: 'handler',
    runtime: LAMBDA_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: 256,
    // A first import of thousands of connections, 16 at a time (shared/mapping/connections.import.ts): Lambda's most.
    timeout: Duration.minutes(15),
    tracing: Tracing.ACTIVE,
    environment: {
      CONNECTIONS_TABLE: tables.connections.tableName,
      CONNECTION_AUDIT_TABLE: tables.connectionAudit.tableName,
    },
    logGroup: new LogGroup(stack, 'ConnectionsImportLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    }),
    bundling: {
      ...bundlingOptions(),
      commandHooks: {
        beforeBundling: () => [],
        beforeInstall: () => [],
        afterBundling: (_input: string, output: string) => [
          `cp "${settings.connectionsFile}" "${join(output, 'connections.json')}"`,
        ],
      },
    },
  });
  // Reads each connection (consistently), pages the table, writes changes with their audit; deletes only on prune. A
  // connection missing from the table has its last audit record read (one deleted in the console stays deleted).
  tables.connections.grant(importer, 'dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:PutItem', 'dynamodb:DeleteItem');
  tables.connectionAudit.grant(importer, 'dynamodb:PutItem', 'dynamodb:Query');
  const provider = new Provider(stack, 'ConnectionsImportProvider', {
    onEventHandler: importer,
    logGroup: new LogGroup(stack, 'ConnectionsImportProviderLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    }),
  });
  // The CDK's own framework function, which relays CloudFormation's event to the import and its answer back.
  for (const [id, reason] of [
    [
      'Serverless::Serverless-LambdaDefaultMemorySize',
      "The CDK's provider framework function only relays CloudFormation's event to the import function and its " +
        'answer back, a few times a deploy; its default 128 MB is what the CDK ships it with.',
    ],
    [
      'Serverless::Serverless-LambdaTracing',
      'The provider framework function runs a few times a deploy and only relays the event; the import function it ' +
        'calls is traced.',
    ],
    [
      'AwsSolutions::AwsSolutions-IAM5[Resource::<ConnectionsImportE9587F6C.Arn>:*]',
      "The CDK's grant to the provider framework: invoke the import function, any of its versions, and nothing else.",
    ],
  ] as const)
    Validations.of(provider).acknowledge({ id, reason });
  new CustomResource(stack, 'ConnectionsImported', {
    serviceToken: provider.serviceToken,
    properties: {
      FileHash: createHash('sha256').update(readFileSync(settings.connectionsFile)).digest('hex'),
      Prune: String(settings.prune),
    },
  });
}
