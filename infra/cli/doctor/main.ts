import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoMappingStore, type DynamoMappingStoreOptions } from '../../../shared/mapping';
import { readOpsOutputs } from '../../aws/stack-outputs';
import { loadConnectionsFile, type Connection } from '../../../shared/config';
import { tableConnections } from '../ops/connections';
import { diagnoseConnection, type DoctorDependencies } from '../../../shared/doctor/checks';
import { dryRun } from './dry-run';
import { formatLine } from '../../../shared/doctor/lines';
import { sesSenderLine } from './ses';
import { registerWebhooks } from '../../../shared/doctor/register';
import { fileSecretStore, secretsManagerStore } from '../../../shared/config/secret-store';
import { errorMessage } from '../../../shared/errors';
import { localStackDown } from '../local-stack-down';

type MappingTables = DynamoMappingStoreOptions['tables'];

const USAGE = `usage: npm run doctor -- [--connection ID]
         [--stack .local/stack.json | --aws --outputs FILE] [--connections FILE]
  (no option)                    check every connection: one line per check, ✓ or ✗ with what to do
  --register-webhooks            create the ATS webhooks that are missing (Lever, Ashby, Workable), then check
  --dry-run --application APP    what a stage change of application APP would do, with no side effect
  --jobs N                       open jobs a trigger for "all" jobs is checked against (default 500)
Exit code 0 only when every check passes; 2 for a usage error.`;

/** The command line; an unknown option or a missing value is named, with the usage, never a stack trace. */
function parseCommandLine() {
  try {
    return parseArgs({ options: OPTIONS });
  } catch (error) {
    console.error(`doctor: ${errorMessage(error)}\n${USAGE}`);
    process.exit(2);
  }
}

const OPTIONS = {
  connection: { type: 'string' },
  stack: { type: 'string', default: '.local/stack.json' },
  aws: { type: 'boolean', default: false },
  outputs: { type: 'string' },
  'stack-name': { type: 'string', default: 'AtsInterviewConnector' },
  connections: { type: 'string' },
  'register-webhooks': { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  application: { type: 'string' },
  jobs: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;
const { values } = parseCommandLine();

function usage(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

interface Target {
  connections: Connection[];
  deps: DoctorDependencies;
}

/** One machine: what `npm start` wrote (`.local/stack.json`, and the connections and secrets beside it). */
async function localTarget(): Promise<Target> {
  if (!existsSync(values.stack)) usage(`${values.stack} not found: start the connector with npm start, or pass --aws`);
  const stack = JSON.parse(readFileSync(values.stack, 'utf8')) as {
    connector: { url: string };
    files?: { connections: string; secrets: string };
  };
  const files = stack.files ?? {
    connections: join(dirname(values.stack), 'connections.json'),
    secrets: join(dirname(values.stack), 'secrets.json'),
  };
  const admin = (stack as { admin?: { url: string; key: string } }).admin;
  // The mapping tables the dry run reads the connector's own records from, on the emulator.
  const local = (stack as { dynamodb?: { tables: MappingTables; url: string } }).dynamodb;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  return {
    // The connections the stack serves (the table, through the admin API), or those of a file.
    connections: values.connections
      ? loadConnectionsFile(values.connections)
      : admin
        ? await tableConnections(admin)
        : loadConnectionsFile(files.connections),
    deps: {
      secrets: fileSecretStore(files.secrets),
      apiUrl: stack.connector.url,
      applicationRecords: recordsIn(local?.tables, () => new DynamoDBClient({ endpoint: local?.url, ...LOCAL_AWS })),
    },
  };
}

/** AWS: the connections in the table (or a file's), the stack's `ApiUrl`, Secrets Manager and SES. */
async function awsTarget(): Promise<Target> {
  const file = values.connections;
  if (!values.outputs) usage('--aws needs --outputs FILE (written by cdk deploy --outputs-file FILE)');
  if (!existsSync(values.outputs)) usage(`${values.outputs} not found: write it with cdk deploy --outputs-file`);
  const outputs = (JSON.parse(readFileSync(values.outputs, 'utf8')) as Record<string, Record<string, unknown>>)[
    values['stack-name']
  ];
  const apiUrl = outputs?.ApiUrl;
  if (typeof apiUrl !== 'string') usage(`${values.outputs} has no ApiUrl for stack ${values['stack-name']}`);
  const document = file ? (JSON.parse(readFileSync(file, 'utf8')) as { deploy?: { mailFrom?: string } }) : {};
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!file && !region) usage('--aws: set AWS_REGION (the connections are read through the admin API)');
  const ses = new SESv2Client({});
  return {
    connections: file
      ? loadConnectionsFile(file)
      : await tableConnections({ url: `${apiUrl.replace(/\/$/, '')}/admin/connections`, region: region as string }),
    deps: {
      secrets: secretsManagerStore(new SecretsManagerClient({})),
      apiUrl,
      mailFrom: document.deploy?.mailFrom,
      sesSender: (address) => sesSenderLine(ses, address),
      applicationRecords: recordsIn(tablesOf(readOpsOutputs(outputs, process.env)), () => new DynamoDBClient({})),
    },
  };
}

/** The emulators' stand-in credentials (one machine). */
const LOCAL_AWS = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };

const tablesOf = (read: ReturnType<typeof readOpsOutputs>): MappingTables | { missing: string[] } =>
  'values' in read
    ? {
        jobs: read.values.jobsTable,
        applications: read.values.applicationsTable,
        events: read.values.eventsTable,
        orders: read.values.ordersTable,
      }
    : read;

/** An application's records in the deployment's mapping table, for the dry run; none where the tables are unknown. */
function recordsIn(
  tables: MappingTables | { missing: string[] } | undefined,
  client: () => DynamoDBClient,
): DoctorDependencies['applicationRecords'] {
  if (!tables) return undefined;
  if ('missing' in tables)
    return () => Promise.reject(new Error(`the stack's outputs lack ${tables.missing.join(', ')}`));
  return (connectionId, applicationId) =>
    dynamoMappingStore({ tables, client: client() }).findApplicationsByAtsId(connectionId, applicationId);
}

async function main(): Promise<void> {
  if (values.help) {
    console.log(USAGE);
    return;
  }
  // The command line's own mistakes first: said before any stack is asked.
  if (values['dry-run'] && !values.application) usage('--dry-run needs --application APP');
  if (values['dry-run'] && !values.connection) usage('--dry-run needs --connection ID');
  const target = values.aws ? await awsTarget() : await localTarget();
  if (values.jobs !== undefined) {
    const jobs = Number(values.jobs);
    if (!Number.isInteger(jobs) || jobs < 1) usage(`--jobs ${values.jobs}: a whole number of jobs, 1 or more`);
    target.deps.jobsForAll = jobs;
  }
  const connections = values.connection
    ? target.connections.filter((c) => c.id === values.connection)
    : target.connections;
  if (!connections.length)
    usage(`no connection ${values.connection}: the file has ${target.connections.map((c) => c.id).join(', ')}`);

  if (values['dry-run']) {
    const application = values.application ?? usage('--dry-run needs --application APP');
    if (connections.length !== 1) usage('--dry-run needs --connection ID');
    for (const line of await dryRun(connections[0] as Connection, application, target.deps)) console.log(line);
    return;
  }

  let failures = 0;
  for (const connection of connections) {
    console.log(`${connection.id} (${connection.ats})`);
    if (values['register-webhooks']) {
      for (const line of await registerWebhooks(connection, target.deps)) console.log(formatLine(line));
    }
    const lines = await diagnoseConnection(connection, target.deps);
    for (const line of lines) console.log(formatLine(line));
    failures += lines.filter((l) => l.status === 'fail').length;
  }
  console.log(
    failures
      ? `\n${failures} check${failures === 1 ? '' : 's'} failed: fix each ✗ as its arrow says, then run again`
      : `\nevery check passed for ${connections.length} connection${connections.length === 1 ? '' : 's'}`,
  );
  process.exitCode = failures ? 1 : 0;
}

main().catch((error: unknown) => {
  console.error(`doctor: ${(!values.aws && localStackDown(error, values.stack)) || errorMessage(error)}`);
  process.exitCode = 1;
});
