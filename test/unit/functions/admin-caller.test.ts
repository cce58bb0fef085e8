import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callerOf, handler, OPERATORS_GROUP, pathParts } from '../../../functions/admin-api/admin-api.handler';

/** An API Gateway event whose authorizer passed `authorizer` (IAM's principal or a Cognito token's claims). */
const eventWith = (authorizer: unknown): APIGatewayProxyEventV2 =>
  ({ rawPath: '/console-api/overview', requestContext: { authorizer } }) as unknown as APIGatewayProxyEventV2;
const jwt = (claims: Record<string, unknown>) => eventWith({ jwt: { claims, scopes: [] } });

describe('Function: callerOf (the admin API handler)', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("takes the IAM principal's ARN as the caller", () => {
    const arn = 'arn:aws:sts::123456789012:assumed-role/ops/kim';
    expect(callerOf(eventWith({ iam: { userArn: arn } }))).toBe(arn);
  });

  it.each([
    ['a list', { 'cognito:groups': [OPERATORS_GROUP], username: 'kim' }, 'cognito:kim'],
    ["API Gateway's text", { 'cognito:groups': '[operators admins]', username: 'kim' }, 'cognito:kim'],
    ['text of one group', { 'cognito:groups': '[operators]', 'cognito:username': 'lee' }, 'cognito:lee'],
    ['a list, named by sub only', { 'cognito:groups': ['admins', 'operators'], sub: 'u-42' }, 'cognito:u-42'],
  ])('takes a Cognito user of the operators group, given as %s, as cognito:<user>', (_form, claims, caller) => {
    expect(callerOf(jwt(claims))).toBe(caller);
  });

  it.each([
    ['outside the operators group', { 'cognito:groups': ['admins'], username: 'kim' }],
    ['in a group whose name only starts with it', { 'cognito:groups': '[operators-lite]', username: 'kim' }],
    ['in no group', { username: 'kim' }],
    ['with no user name', { 'cognito:groups': ['operators'] }],
  ])('refuses a signed-in user %s', (_why, claims) => {
    expect(callerOf(jwt(claims))).toBeUndefined();
  });

  it('refuses a request no authorizer vouched for', () => {
    expect(callerOf(eventWith(undefined))).toBeUndefined();
    expect(callerOf(eventWith({ iam: { userArn: '' } }))).toBeUndefined();
  });

  it('answers 400 to a path that is not valid percent-encoding, on any root, reading nothing', async () => {
    expect(pathParts('/acme/%E0')).toBeUndefined();
    expect(pathParts('/acme%2Dgh/audit')).toEqual(['acme-gh', 'audit']);
    for (const rawPath of ['/connect-api/%E0', '/admin/connections/%E0%A4%A', '/console-api/connections/%']) {
      const event = {
        rawPath,
        body: '{"atsApiKey": "k"}',
        requestContext: { http: { method: 'POST' }, authorizer: { iam: { userArn: 'arn:ops' } } },
      } as unknown as APIGatewayProxyEventV2;
      const answer = await handler(event);
      expect(answer.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' });
      expect([answer.statusCode, JSON.parse(String(answer.body))]).toEqual([
        400,
        { error: 'the path is not valid percent-encoding', field: '(path)' },
      ]);
    }
  });

  it("loads without the stack's environment (the console's dependencies are made on first use)", async () => {
    for (const name of ['ACTIVITY_TABLE', 'STAGE_QUEUE_URL', 'STAGE_DLQ_URL', 'REPORT_QUEUE_URL', 'REPORT_DLQ_URL'])
      vi.stubEnv(name, undefined);
    for (const name of ['CONNECTIONS_TABLE', 'JOBS_TABLE', 'APPLICATIONS_TABLE', 'EVENTS_TABLE', 'SECRETS_FILE'])
      vi.stubEnv(name, undefined);
    vi.resetModules();
    const loaded = await import('../../../functions/admin-api/admin-api.handler');
    expect(loaded.callerOf(eventWith({ iam: { userArn: 'arn:ops' } }))).toBe('arn:ops');
  });
});
