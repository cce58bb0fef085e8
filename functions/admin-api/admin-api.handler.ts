import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { type AdminAnswer, type AdminOptions, handleAdminRequest } from '../../shared/admin/connection-admin';
import { handleConsoleRequest } from '../../shared/admin/console-api';
import { type ConnectDependencies, handleConnectRequest } from '../../shared/admin/connect-api';
import { DeadLetters } from '../../shared/admin/dead-letters';
import { fileSecretStore, type SecretStore, secretsManagerStore } from '../../shared/config/secret-store';
import type { Connection } from '../../shared/config';
import { createSetupAdapter } from '../../shared/ats/setup-adapter';
import { diagnoseConnection, readSecret, type SetupAdapter } from '../../shared/doctor/checks';
import { registerWebhooks } from '../../shared/doctor/register';
import { AWS_CLIENT_CONFIG } from '../../shared/aws/client-config';
import { errorMessage } from '../../shared/errors';
import { DynamoActivity } from '../../shared/mapping/activity.records';
import { VersionConflictError } from '../../shared/mapping/connections.records';
import { createLogger } from '../../shared/observability/logger';
import { connectionStore } from '../_runtime/connections';
import { parkedRecheckSeconds } from '../_runtime/deferral';
import { requireEnv } from '../_runtime/env';
import { httpHandler, jsonResponse, MAX_WEBHOOK_BYTES, rawBody } from '../_runtime/http';
import { mappingStore, queueLedger } from '../_runtime/store';

const logger = createLogger('admin-api');
const ROOTS = { admin: '/admin/connections', console: '/console-api', connect: '/connect-api' } as const;
/** The Cognito group whose members are operators: a signed-in user outside it is refused. */
export const OPERATORS_GROUP = 'operators';

/**
 * The admin API, the console's API and the customers' connect links, one function:
 * - `/admin/connections/...`: an operator's changes to one connection, in effect for every function within its cache
 *   time, with no deploy; API Gateway authorizes each request (IAM, SigV4) before the function runs.
 * - `/console-api/...`: the console's pages (shared/admin/console-api.ts); API Gateway checks the operator's Cognito
 *   token, and the function that they are in the operators' group.
 * - `/connect-api/<token>/...`: a customer's one-time connect link (shared/admin/connect-api.ts), its token the only
 *   credential, checked here.
 * On one machine the gateway checks the operator's key in place of IAM and Cognito (infra/local/http-gateway.ts).
 * Every change is audited under the caller; an operator's request without one is refused before its body is read. A
 * connect link's body (at most 1 MiB) is parsed before its token is looked up, and used only once it is found.
 */
export const handler = httpHandler(async (event) => {
  const path = event.rawPath;
  const root = path.startsWith(`${ROOTS.connect}/`)
    ? 'connect'
    : path === ROOTS.console || path.startsWith(`${ROOTS.console}/`)
      ? 'console'
      : path === ROOTS.admin || path.startsWith(`${ROOTS.admin}/`)
        ? 'admin'
        : undefined;
  if (!root) return jsonResponse(404, { error: 'no such route' });
  const principal = root === 'connect' ? 'connect-link' : callerOf(event);
  if (!principal) return jsonResponse(403, { error: 'this API needs a signed-in operator' });
  const parts = pathParts(path.slice(ROOTS[root].length));
  if (!parts) return jsonResponse(400, { error: 'the path is not valid percent-encoding', field: '(path)' });
  const bytes = rawBody(event);
  if (bytes.length > MAX_WEBHOOK_BYTES) return jsonResponse(413, { error: 'the body is over 1 MiB' });
  let body: unknown;
  try {
    body = bytes.length ? JSON.parse(bytes.toString('utf8')) : undefined;
  } catch {
    return jsonResponse(400, { error: 'the body is not JSON', field: '(body)' });
  }
  const method = event.requestContext.http.method;
  const query = event.queryStringParameters ?? {};
  try {
    let answer: AdminAnswer;
    if (root === 'admin') answer = await handleAdminRequest({ method, path: parts, query, body, principal }, admin());
    else if (root === 'console')
      answer = await handleConsoleRequest({ method, path: parts, query, body, principal }, dependencies(event));
    else {
      const [token = '', ...rest] = parts;
      answer = await handleConnectRequest({ method, token, path: rest, query, body }, dependencies(event));
    }
    if (answer.status < 300) logger.info('admin: answered', { root, method, status: answer.status });
    // Enabled again: the work parked while it was off runs when it next comes back (functions/_runtime/deferral.ts).
    if (answer.status === 200 && parts[1] === 'enable')
      answer.body.parkedWorkResumesWithinSeconds = parkedRecheckSeconds();
    return jsonResponse(answer.status, answer.body) as APIGatewayProxyStructuredResultV2;
  } catch (error) {
    if (error instanceof VersionConflictError)
      return jsonResponse(409, { error: errorMessage(error), current: error.current });
    throw error;
  }
});

/** The path's segments, decoded; undefined where one is not valid percent-encoding (`%E0`). */
export function pathParts(path: string): string[] | undefined {
  try {
    return path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return undefined;
  }
}

let secrets: SecretStore | undefined;
/** The connections' secrets: the local file on one machine (`SECRETS_FILE`), Secrets Manager on AWS. */
function secretStore(): SecretStore {
  const file = process.env.SECRETS_FILE;
  secrets ??= file ? fileSecretStore(file) : secretsManagerStore(new SecretsManagerClient({}));
  return secrets;
}

function admin(): AdminOptions {
  return { store: connectionStore(), secretsPrefix: process.env.SECRETS_PREFIX || undefined, secrets: secretStore() };
}

let shared: Omit<ConnectDependencies, 'apiUrl' | 'doctor' | 'registerWebhooks'> | undefined;
/** What the console and the connect links read and call, made on first use (the admin API needs none of it). */
function dependencies(event: APIGatewayProxyEventV2): ConnectDependencies {
  shared ??= {
    admin: admin(),
    activity: new DynamoActivity(requireEnv('ACTIVITY_TABLE')),
    applications: mappingStore(),
    backlogUntil: (id) => queueLedger().backlogUntil(id),
    deadLetters: new DeadLetters(new SQSClient(AWS_CLIENT_CONFIG), {
      stage: { url: requireEnv('STAGE_QUEUE_URL'), dlqUrl: requireEnv('STAGE_DLQ_URL') },
      report: { url: requireEnv('REPORT_QUEUE_URL'), dlqUrl: requireEnv('REPORT_DLQ_URL') },
    }),
    stages: (connection) => setupAdapter(connection),
    probe: async (connection) => (await setupAdapter(connection)).probeAccess(),
  };
  const apiUrl = apiUrlOf(event);
  const deps = { secrets: secretStore(), apiUrl };
  return {
    ...shared,
    apiUrl,
    doctor: (connection) => diagnoseConnection(connection, deps),
    registerWebhooks: (connection) => registerWebhooks(connection, deps),
  };
}

/** The connection's ATS with the credentials in its secret, for its set-up reads. */
async function setupAdapter(connection: Connection): Promise<SetupAdapter> {
  const read = await readSecret(connection, secretStore());
  // The provider's side (not the ATS's answer): a connect page tells its customer only that the provider sees why.
  if ('line' in read) throw new Error(`${read.line.what}${read.line.fix ? `: ${read.line.fix}` : ''}`);
  return createSetupAdapter(connection, read.secrets);
}

/** The connector's base URL: the stack's (`API_URL`), or the one this request came to. */
function apiUrlOf(event: APIGatewayProxyEventV2): string {
  const configured = process.env.API_URL;
  if (configured) return configured.replace(/\/+$/, '');
  const host = event.requestContext.domainName;
  return `${/^(127\.0\.0\.1|localhost)(:|$)/.test(host) ? 'http' : 'https'}://${host}`;
}

/**
 * The caller: the principal API Gateway's IAM authorizer passes (the local gateway passes the key's name the same
 * way), or a Cognito user of the operators' group whose token its JWT authorizer checked.
 */
export function callerOf(event: APIGatewayProxyEventV2): string | undefined {
  const authorizer = (event.requestContext as { authorizer?: { iam?: { userArn?: unknown }; jwt?: Jwt } }).authorizer;
  const arn = authorizer?.iam?.userArn;
  if (typeof arn === 'string' && arn) return arn;
  const claims = authorizer?.jwt?.claims;
  if (!claims) return undefined;
  const groups = claims['cognito:groups'];
  const listed = Array.isArray(groups) ? groups.map(String) : typeof groups === 'string' ? parseGroups(groups) : [];
  const user = claims.username ?? claims['cognito:username'] ?? claims.sub;
  return listed.includes(OPERATORS_GROUP) && typeof user === 'string' && user ? `cognito:${user}` : undefined;
}

type Jwt = { claims?: Record<string, unknown> };

/** API Gateway passes a list claim as text: `[a b]`. */
function parseGroups(text: string): string[] {
  return text
    .replace(/^\[|\]$/g, '')
    .split(/[\s,]+/)
    .filter(Boolean);
}
