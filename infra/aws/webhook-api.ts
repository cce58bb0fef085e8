import { RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import { type CfnStage, HttpApi, HttpMethod, type HttpRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { HttpIamAuthorizer, HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ConnectorFunctions } from './connector-functions';

/**
 * The webhook API's default-stage throttle (`deploy.webhookRateLimit` changes the rate, the burst twice it): far
 * above a few customers' deliveries, far below a flood. Every customer shares it: raise it with their number.
 */
export const FRONT_DOOR = { rateLimit: 100, burst: 2 * 100 } as const;

/** The HTTP API the ATSs and the interview service call: one route each, guarded before any function runs. */
export function createWebhookApi(
  stack: Stack,
  functions: Pick<ConnectorFunctions, 'atsWebhook' | 'interviewWebhook' | 'orderApi' | 'adminApi'>,
  rateLimit: number = FRONT_DOOR.rateLimit,
): HttpApi {
  const api = new HttpApi(stack, 'WebhookApi', { description: 'Webhooks from the ATSs and the interview service' });
  guardFrontDoor(stack, api, rateLimit);
  const webhooks = [
    ...api.addRoutes({
      path: '/webhooks/ats/{connectionId}',
      methods: [HttpMethod.POST],
      integration: new HttpLambdaIntegration('AtsWebhookIntegration', functions.atsWebhook),
    }),
    ...api.addRoutes({
      path: '/webhooks/interview/{connectionId}/{token}',
      methods: [HttpMethod.POST],
      integration: new HttpLambdaIntegration('InterviewWebhookIntegration', functions.interviewWebhook),
    }),
    // The ATSs' assessment-partner calls: Greenhouse's list_tests and test_status are GETs, the rest POSTs.
    ...api.addRoutes({
      path: '/orders/{source}/{call}',
      methods: [HttpMethod.GET, HttpMethod.POST],
      integration: new HttpLambdaIntegration('OrderApiIntegration', functions.orderApi),
    }),
  ];
  acknowledgeNoAuthorizer(webhooks, {
    reason:
      'The senders (the ATSs, the interview service) cannot sign AWS requests or send JWTs: each webhook and ' +
      'order call is authenticated by its function before the body is read (HMAC over the raw bytes, a secret ' +
      "token, or the customer's partner key).",
  });
  // The admin API: API Gateway checks each request's SigV4 signature (IAM) before the function runs or the body is
  // read, and passes the caller's principal; an operator's role needs execute-api:Invoke on these routes.
  const admin = new HttpLambdaIntegration('AdminApiIntegration', functions.adminApi);
  for (const path of ['/admin/connections', '/admin/connections/{id}', '/admin/connections/{id}/{action}'])
    api.addRoutes({
      path,
      methods: [HttpMethod.GET, HttpMethod.PUT, HttpMethod.PATCH, HttpMethod.POST, HttpMethod.DELETE],
      integration: admin,
      authorizer: new HttpIamAuthorizer(),
    });
  return api;
}

/** Who may call the console's two APIs: an operator signed in to the console's user pool, and a customer's link. */
export interface ConsoleCallers {
  /** The user pool's issuer URL (`https://cognito-idp.<region>.amazonaws.com/<pool id>`). */
  issuer: string;
  /** The console's app client: the audience (or `client_id`) its tokens carry. */
  clientId: string;
}

/**
 * The console's routes, to the admin API's function: `/console-api/...` with API Gateway's JWT authorizer (a
 * token of the console's user pool and client, checked before the function runs; the function then requires the
 * `operators` group), and `/connect-api/...`, a customer's one-time connect link, whose secret token is in the
 * path and checked by the function. Added once the console's sign-in exists, which needs the API's address.
 */
export function addConsoleRoutes(api: HttpApi, adminApi: IFunction, callers: ConsoleCallers): void {
  const integration = new HttpLambdaIntegration('ConsoleApiIntegration', adminApi);
  api.addRoutes({
    path: '/console-api/{proxy+}',
    methods: [HttpMethod.ANY],
    integration,
    authorizer: new HttpJwtAuthorizer('ConsoleOperatorAuthorizer', callers.issuer, {
      jwtAudience: [callers.clientId],
    }),
  });
  const connect = api.addRoutes({ path: '/connect-api/{proxy+}', methods: [HttpMethod.ANY], integration });
  acknowledgeNoAuthorizer(connect, {
    reason:
      "A customer opening their connect link has no account to sign in with: the link's one-time secret token, " +
      'in the path, is checked by the function before any connection or secret is read or written.',
  });
}

/** cdk-nag's APIG4 (no authorizer), acknowledged on these routes only: a new route without one is still flagged. */
function acknowledgeNoAuthorizer(routes: HttpRoute[], { reason }: { reason: string }): void {
  for (const route of routes) Validations.of(route).acknowledge({ id: 'AwsSolutions::AwsSolutions-APIG4', reason });
}

/**
 * Access logs without the path (the interview webhook's path carries its token) and a throttle on the default
 * stage: what reaches the functions is bounded before any of it is authenticated.
 */
export function guardFrontDoor(stack: Stack, api: HttpApi, rateLimit: number): void {
  const accessLogs = new LogGroup(stack, 'WebhookApiAccessLogs', {
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
  stage.defaultRouteSettings = { throttlingRateLimit: rateLimit, throttlingBurstLimit: 2 * rateLimit };
}
