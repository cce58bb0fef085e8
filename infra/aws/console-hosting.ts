import { join, resolve } from 'node:path';
import {
  AssetHashType,
  DefaultStackSynthesizer,
  DockerImage,
  Duration,
  RemovalPolicy,
  type Stack,
  Validations,
} from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AllowedMethods,
  type BehaviorOptions,
  CachePolicy,
  Distribution,
  Function as EdgeFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { UserPool, UserPoolClient } from 'aws-cdk-lib/aws-cognito';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { buildConsoleSync } from '../console/build';
import { addConsoleClient, createOperatorPool } from './console-sign-in';

const ROOT = resolve(import.meta.dirname, '../..');

/** Where the console lives on its distribution, and the API paths the distribution passes to the HTTP API. */
export const CONSOLE_PATHS = {
  files: 'console/',
  operatorApi: '/console-api/*',
  connectApi: '/connect-api/*',
} as const;

export interface ConsoleHosting {
  /** `https://<distribution domain>/console/`: where operators sign in, and where Cognito sends them back. */
  url: string;
  distribution: Distribution;
  userPool: UserPool;
  client: UserPoolClient;
  /** The pool's issuer URL, for the API's JWT authorizer. */
  issuer: string;
}

/**
 * The console: its files in a private bucket, one CloudFront distribution in front of them and of the HTTP API
 * (the browser talks to one origin, so the API needs no CORS), and the operators' Cognito sign-in. The files are
 * built by infra/console/build.ts during synth (CDK local bundling; no Docker), beside a `config.json` that tells
 * the browser where to sign in.
 */
export function createConsoleHosting(stack: Stack, api: HttpApi, settings: { domainPrefix: string }): ConsoleHosting {
  const pool = createOperatorPool(stack, settings.domainPrefix);
  const bucket = new Bucket(stack, 'ConsoleFiles', {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    encryption: BucketEncryption.S3_MANAGED,
    // Nothing but what every deploy rebuilds from console/: deleting the stack deletes the files (the deployment
    // below empties the bucket first), and nobody's data goes with them.
    removalPolicy: RemovalPolicy.DESTROY,
    autoDeleteObjects: false,
  });
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions::AwsSolutions-S1',
    reason:
      "The bucket holds the console's built files, the same for every visitor and readable only by the " +
      'distribution (origin access control); who called the API is in its own access log.',
  });
  const distribution = new Distribution(stack, 'ConsoleDistribution', {
    comment: 'Connector console: its files and, on the same origin, the console and connect APIs',
    defaultBehavior: {
      origin: S3BucketOrigin.withOriginAccessControl(bucket),
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      // The files are deployed with Cache-Control: no-cache, so a deploy shows at once with no invalidation.
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy: securityHeaders(stack, pool.signInBaseUrl),
      functionAssociations: [{ function: consolePaths(stack), eventType: FunctionEventType.VIEWER_REQUEST }],
    },
    additionalBehaviors: apiBehaviors(stack, api),
    httpVersion: HttpVersion.HTTP2_AND_3,
  });
  acknowledgeDistributionFindings(distribution);
  const url = `https://${distribution.distributionDomainName}/${CONSOLE_PATHS.files}`;
  const client = addConsoleClient(pool, url);
  deployConsoleFiles(stack, bucket, {
    mode: 'cognito',
    region: stack.region,
    userPoolId: pool.userPool.userPoolId,
    clientId: client.userPoolClientId,
    domain: pool.signInBaseUrl,
    redirectUri: url,
  });
  return { url, distribution, userPool: pool.userPool, client, issuer: pool.issuer };
}

/** Both API paths to the HTTP API: never cached, every header but Host passed on (the token among them). */
function apiBehaviors(stack: Stack, api: HttpApi): Record<string, BehaviorOptions> {
  const behavior: BehaviorOptions = {
    origin: new HttpOrigin(`${api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`, {
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
    }),
    // A request sent over plain HTTP is refused, not redirected: its token or connect link has already leaked.
    viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
    allowedMethods: AllowedMethods.ALLOW_ALL,
    cachePolicy: CachePolicy.CACHING_DISABLED,
    // With caching disabled, this managed policy forwards Authorization too; Host must stay API Gateway's own.
    originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
  };
  return { [CONSOLE_PATHS.operatorApi]: behavior, [CONSOLE_PATHS.connectApi]: behavior };
}

/**
 * `/console` goes to `/console/` (index.html loads app.js and app.css by relative paths, which would resolve
 * under `/` otherwise), `/console/` is served `console/index.html` (the distribution has no default root object),
 * and the bare domain goes to the console too.
 */
function consolePaths(stack: Stack): EdgeFunction {
  return new EdgeFunction(stack, 'ConsolePaths', {
    comment: 'Serves /console/ as console/index.html; sends / and /console to /console/',
    runtime: FunctionRuntime.JS_2_0,
    code: FunctionCode.fromInline(`function handler(event) {
  var request = event.request;
  if (request.uri === '/' || request.uri === '/console') {
    return { statusCode: 301, statusDescription: 'Moved Permanently', headers: { location: { value: '/console/' } } };
  }
  if (request.uri === '/console/') request.uri = '/console/index.html';
  return request;
}`),
  });
}

/**
 * A strict content security policy (the console's own scripts and styles only; it calls only its own origin and
 * Cognito's token endpoint; no page may frame it), HSTS, and no referrer: a connect link carries its secret in
 * the path, which must not leave in a Referer header.
 */
function securityHeaders(stack: Stack, signInBaseUrl: string): ResponseHeadersPolicy {
  const policy = [
    "default-src 'self'",
    `connect-src 'self' ${signInBaseUrl}`,
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
    // No form of the console posts anywhere but its own origin (sign-in is a redirect to Cognito, not a form).
    "form-action 'self'",
  ].join('; ');
  return new ResponseHeadersPolicy(stack, 'ConsoleSecurityHeaders', {
    comment: 'The console: strict CSP, HSTS, no framing, no referrer',
    securityHeadersBehavior: {
      contentSecurityPolicy: { contentSecurityPolicy: policy, override: true },
      strictTransportSecurity: { accessControlMaxAge: Duration.days(730), override: true },
      contentTypeOptions: { override: true },
      frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
      referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
    },
  });
}

function acknowledgeDistributionFindings(distribution: Distribution): void {
  const findings: Record<string, string> = {
    'AwsSolutions-CFR1':
      'Operators work from anywhere and customers open their connect link wherever they are; every API call is ' +
      'signed in (a Cognito token) or carries a one-time secret, whatever country it comes from.',
    'AwsSolutions-CFR2':
      'Every API call behind the distribution is authenticated and the HTTP API throttles its stage; an operator ' +
      "who wants AWS WAF attaches a web ACL to the distribution (docs/deployment.md, 'The console').",
    'AwsSolutions-CFR3':
      "The distribution serves the console's static files, the same for everyone; the API calls it passes on " +
      "are logged by the HTTP API's access log and sign-ins by Cognito.",
    'AwsSolutions-CFR4':
      "The distribution uses CloudFront's default *.cloudfront.net certificate, with which CloudFront ignores a " +
      'minimum protocol version; a custom domain with its own certificate is what sets TLSv1.2_2021.',
  };
  for (const [id, reason] of Object.entries(findings))
    Validations.of(distribution).acknowledge({ id: `AwsSolutions::${id}`, reason });
}

/**
 * The built console and its `config.json` under `console/`, each served with Cache-Control: no-cache (the file
 * names carry no hash: a browser revalidates, and gets the new console right after a deploy).
 */
function deployConsoleFiles(stack: Stack, bucket: Bucket, config: Record<string, string>): void {
  const deployment = new BucketDeployment(stack, 'ConsoleDeployment', {
    destinationBucket: bucket,
    destinationKeyPrefix: CONSOLE_PATHS.files,
    sources: [
      Source.asset(join(ROOT, 'console'), {
        // The hash of what was built, so that a new Preact (not only a change in console/) redeploys the files.
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          image: DockerImage.fromRegistry('none'),
          local: {
            tryBundle(outputDir: string): boolean {
              buildConsoleSync(outputDir);
              return true;
            },
          },
        },
      }),
      Source.jsonData('config.json', config),
    ],
    cacheControl: [CacheControl.noCache()],
    // The bucket holds these files only: deleting the deployment (with the stack) empties it for its removal.
    retainOnDelete: false,
    memoryLimit: 256,
    logGroup: new LogGroup(stack, 'ConsoleDeploymentLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    }),
  });
  acknowledgeDeploymentFindings(stack, deployment, bucket);
}

/**
 * The CDK's own deployment function, which runs only during `cdk deploy`: it reads the deploy's asset from the
 * bootstrap bucket and copies it into the console's bucket, pruning what the new build no longer has. Its
 * findings are acknowledged on it alone (the role's scope is that function).
 */
function acknowledgeDeploymentFindings(stack: Stack, deployment: BucketDeployment, bucket: Bucket): void {
  const handler = deployment.handlerRole.node.scope;
  if (!handler) return;
  const qualifier =
    (stack.synthesizer instanceof DefaultStackSynthesizer ? stack.synthesizer.bootstrapQualifier : undefined) ??
    DefaultStackSynthesizer.DEFAULT_QUALIFIER;
  const assets = `arn:<AWS::Partition>:s3:::cdk-${qualifier}-assets-<AWS::AccountId>-<AWS::Region>/*`;
  const files = `<${stack.getLogicalId(bucket.node.defaultChild as CfnBucket)}.Arn>/*`;
  const copying =
    "The CDK's grants for copying one deploy's asset into the console's bucket: read on the bootstrap asset " +
    "bucket's objects, and write, delete (pruning) and multipart abort on the console bucket's, nothing else.";
  const runtime =
    "The CDK picks the runtime of its deployment function, which is not the connector's code; a newer " +
    'aws-cdk-lib updates it.';
  const findings: Record<string, string> = {
    'AwsSolutions::AwsSolutions-IAM5[Action::s3:GetObject*]': copying,
    'AwsSolutions::AwsSolutions-IAM5[Action::s3:GetBucket*]': copying,
    'AwsSolutions::AwsSolutions-IAM5[Action::s3:List*]': copying,
    'AwsSolutions::AwsSolutions-IAM5[Action::s3:DeleteObject*]': copying,
    'AwsSolutions::AwsSolutions-IAM5[Action::s3:Abort*]': copying,
    [`AwsSolutions::AwsSolutions-IAM5[Resource::${files}]`]: copying,
    [`AwsSolutions::AwsSolutions-IAM5[Resource::${assets}]`]: copying,
    'AwsSolutions::AwsSolutions-L1': runtime,
    'Serverless::Serverless-LambdaLatestVersion': runtime,
    'Serverless::Serverless-LambdaTracing':
      'The deployment function runs once per cdk deploy, which reports its outcome; the CDK offers no tracing on it.',
  };
  for (const [id, reason] of Object.entries(findings)) Validations.of(handler).acknowledge({ id, reason });
}
