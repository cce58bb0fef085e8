import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { handleAdminRequest } from '../../shared/admin/connection-admin';
import { fileSecretStore, type SecretStore, secretsManagerStore } from '../../shared/config/secret-store';
import { errorMessage } from '../../shared/errors';
import { VersionConflictError } from '../../shared/mapping/connections.records';
import { createLogger } from '../../shared/observability/logger';
import { connectionStore } from '../_runtime/connections';
import { parkedRecheckSeconds } from '../_runtime/deferral';
import { httpHandler, jsonResponse, MAX_WEBHOOK_BYTES, rawBody } from '../_runtime/http';

const logger = createLogger('admin-api');
const ROOT = '/admin/connections';

/**
 * The admin API: an operator's changes to one connection, in effect for every function within its cache time, with
 * no deploy. API Gateway authorizes each request before the function runs (IAM, SigV4, on AWS; the operator's key
 * on one machine: infra/local/http-gateway.ts) and passes the caller's principal, which every change is audited
 * under; a request without one is refused before its body is read.
 */
export const handler = httpHandler(async (event) => {
  const principal = callerOf(event);
  if (!principal) return jsonResponse(403, { error: 'the admin API needs an authorized caller' });
  const bytes = rawBody(event);
  if (bytes.length > MAX_WEBHOOK_BYTES) return jsonResponse(413, { error: 'the body is over 1 MiB' });
  let body: unknown;
  try {
    body = bytes.length ? JSON.parse(bytes.toString('utf8')) : undefined;
  } catch {
    return jsonResponse(400, { error: 'the body is not JSON', field: '(body)' });
  }
  const path = event.rawPath.startsWith(ROOT) ? event.rawPath.slice(ROOT.length).split('/').filter(Boolean) : null;
  if (!path) return jsonResponse(404, { error: 'no such route' });
  const method = event.requestContext.http.method;
  try {
    const answer = await handleAdminRequest(
      { method, path: path.map(decodeURIComponent), query: event.queryStringParameters ?? {}, body, principal },
      { store: connectionStore(), secretsPrefix: process.env.SECRETS_PREFIX || undefined, secrets: secretStore() },
    );
    if (answer.status < 300) logger.info('admin: connection changed or read', { method, connectionId: path[0] });
    // Enabled again: the work parked while it was off runs when it next comes back (functions/_runtime/deferral.ts).
    if (answer.status === 200 && path[1] === 'enable')
      answer.body.parkedWorkResumesWithinSeconds = parkedRecheckSeconds();
    return jsonResponse(answer.status, answer.body) as APIGatewayProxyStructuredResultV2;
  } catch (error) {
    if (error instanceof VersionConflictError)
      return jsonResponse(409, { error: errorMessage(error), current: error.current });
    throw error;
  }
});

let secrets: SecretStore | undefined;
/** The connections' secrets: the local file on one machine (`SECRETS_FILE`), Secrets Manager on AWS. */
function secretStore(): SecretStore {
  const file = process.env.SECRETS_FILE;
  secrets ??= file ? fileSecretStore(file) : secretsManagerStore(new SecretsManagerClient({}));
  return secrets;
}

/** The principal API Gateway's IAM authorizer passes (the local gateway passes the key's name the same way). */
function callerOf(event: APIGatewayProxyEventV2): string | undefined {
  const iam = (event.requestContext as { authorizer?: { iam?: { userArn?: unknown } } }).authorizer?.iam;
  return typeof iam?.userArn === 'string' && iam.userArn ? iam.userArn : undefined;
}
