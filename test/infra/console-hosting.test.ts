import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultDomainPrefix, OPERATORS_GROUP } from '../../infra/aws/console-sign-in';
import { synthesizeExampleStack } from '../helpers/cdk-context';

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string };

describe('Stack: the console, its distribution and its sign-in', () => {
  let outdir: string;
  let template: Template;
  let resources: Record<string, Resource>;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const only = (type: string) => {
    const found = ofType(type);
    expect(found).toHaveLength(1);
    return found[0] as [string, Resource];
  };
  const routeByKey = (key: string) => ofType('AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties.RouteKey === key);

  beforeAll(() => {
    ({ template, outdir } = synthesizeExampleStack('Console'));
    resources = template.toJSON().Resources as Record<string, Resource>;
  });
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('keeps the files in a private, encrypted, TLS-only bucket that only the distribution reads (OAC)', () => {
    const [bucketId, bucket] = only('AWS::S3::Bucket');
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(
      bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault,
    ).toEqual({ SSEAlgorithm: 'AES256' });
    expect(bucket.Properties.WebsiteConfiguration).toBeUndefined();
    const [distributionId, distribution] = only('AWS::CloudFront::Distribution');
    const config = distribution.Properties.DistributionConfig;
    expect(config.DefaultRootObject).toBeUndefined();
    const bucketOrigin = config.Origins.find((o: any) => o.Id === config.DefaultCacheBehavior.TargetOriginId);
    expect(bucketOrigin.DomainName).toEqual({ 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] });
    const [oacId] = only('AWS::CloudFront::OriginAccessControl');
    expect(bucketOrigin.OriginAccessControlId).toEqual({ 'Fn::GetAtt': [oacId, 'Id'] });
    expect(config.DefaultCacheBehavior.ViewerProtocolPolicy).toBe('redirect-to-https');
    const statements = only('AWS::S3::BucketPolicy')[1].Properties.PolicyDocument.Statement;
    const reads = statements.filter((s: any) => s.Effect === 'Allow');
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatchObject({ Action: 's3:GetObject', Principal: { Service: 'cloudfront.amazonaws.com' } });
    expect(JSON.stringify(reads[0].Condition)).toContain(`{"Ref":"${distributionId}"}`);
    const denial = statements.find((s: any) => s.Effect === 'Deny');
    expect(denial.Condition).toEqual({ Bool: { 'aws:SecureTransport': 'false' } });
  });

  it('passes /console-api/* and /connect-api/* to the HTTP API, uncached, HTTPS only, every method', () => {
    const config = only('AWS::CloudFront::Distribution')[1].Properties.DistributionConfig;
    const [apiId] = only('AWS::ApiGatewayV2::Api');
    const behaviors = config.CacheBehaviors as any[];
    expect(behaviors.map((b) => b.PathPattern).sort()).toEqual(['/connect-api/*', '/console-api/*']);
    for (const behavior of behaviors) {
      expect(behavior.CachePolicyId).toBe(CachePolicy.CACHING_DISABLED.cachePolicyId);
      expect(behavior.OriginRequestPolicyId).toBe(
        OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
      );
      expect(behavior.ViewerProtocolPolicy).toBe('https-only');
      expect([...behavior.AllowedMethods].sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT']);
      const origin = config.Origins.find((o: any) => o.Id === behavior.TargetOriginId);
      expect(origin.CustomOriginConfig.OriginProtocolPolicy).toBe('https-only');
      expect(origin.DomainName['Fn::Join'][1][0]).toEqual({ Ref: apiId });
      expect(origin.DomainName['Fn::Join'][1][1]).toBe('.execute-api.');
    }
  });

  it.each([
    ['/console/', { uri: '/console/index.html' }],
    ['/console/app.js', { uri: '/console/app.js' }],
    ['/console/config.json', { uri: '/console/config.json' }],
    ['/console', { statusCode: 301, headers: { location: { value: '/console/' } } }],
    ['/', { statusCode: 301, headers: { location: { value: '/console/' } } }],
  ])("answers a viewer's %s as its CloudFront function says", (uri, expected) => {
    const [functionId, fn] = only('AWS::CloudFront::Function');
    expect(fn.Properties.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
    const config = only('AWS::CloudFront::Distribution')[1].Properties.DistributionConfig;
    expect(config.DefaultCacheBehavior.FunctionAssociations).toEqual([
      { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [functionId, 'FunctionARN'] } },
    ]);
    const handler = runInNewContext(`${fn.Properties.FunctionCode}; handler`) as (event: unknown) => unknown;
    expect(handler({ request: { uri, method: 'GET', querystring: {}, headers: {} } })).toMatchObject(expected);
  });

  it("sends a strict content security policy: the page reaches only itself and the pool's sign-in domain", () => {
    const [policyId, policy] = only('AWS::CloudFront::ResponseHeadersPolicy');
    const headers = policy.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    const [domainId] = only('AWS::Cognito::UserPoolDomain');
    const csp = (headers.ContentSecurityPolicy.ContentSecurityPolicy['Fn::Join'][1] as unknown[])
      .map((part) => (typeof part === 'string' ? part : JSON.stringify(part)))
      .join('');
    const directives = csp.split('; ');
    expect(directives).toContain("default-src 'self'");
    expect(directives).toContain("frame-ancestors 'none'");
    expect(directives).toContain("form-action 'self'");
    expect(directives).toContain(
      `connect-src 'self' https://{"Ref":"${domainId}"}.auth.{"Ref":"AWS::Region"}.amazoncognito.com`,
    );
    expect(headers.FrameOptions.FrameOption).toBe('DENY');
    expect(headers.ReferrerPolicy.ReferrerPolicy).toBe('no-referrer');
    expect(headers.StrictTransportSecurity.AccessControlMaxAgeSec).toBeGreaterThanOrEqual(365 * 86_400);
    const config = only('AWS::CloudFront::Distribution')[1].Properties.DistributionConfig;
    expect(config.DefaultCacheBehavior.ResponseHeadersPolicyId).toEqual({ Ref: policyId });
  });

  it("checks a console call's token with a JWT authorizer for the pool and the console's client", () => {
    const [poolId] = only('AWS::Cognito::UserPool');
    const [clientId] = only('AWS::Cognito::UserPoolClient');
    const [, route] = routeByKey('ANY /console-api/{proxy+}') ?? [];
    expect(route?.Properties.AuthorizationType).toBe('JWT');
    const authorizer = resources[route?.Properties.AuthorizerId.Ref];
    expect(authorizer?.Properties.AuthorizerType).toBe('JWT');
    expect(authorizer?.Properties.IdentitySource).toEqual(['$request.header.Authorization']);
    expect(authorizer?.Properties.JwtConfiguration).toEqual({
      Issuer: { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [poolId, 'ProviderURL'] }]] },
      Audience: [{ Ref: clientId }],
    });
  });

  it('lets a connect link through with no authorizer, to the same function as the console calls', () => {
    const [, connect] = routeByKey('ANY /connect-api/{proxy+}') ?? [];
    const [, operator] = routeByKey('ANY /console-api/{proxy+}') ?? [];
    expect(connect?.Properties.AuthorizationType).toBe('NONE');
    expect(connect?.Properties.AuthorizerId).toBeUndefined();
    const integrationOf = (route: Resource | undefined) =>
      resources[route?.Properties.Target['Fn::Join'][1][1].Ref]?.Properties.IntegrationUri;
    const adminApi = ofType('AWS::Lambda::Function').find(([id]) => id.startsWith('AdminApi'))?.[0];
    expect(integrationOf(connect)).toEqual({ 'Fn::GetAtt': [adminApi, 'Arn'] });
    expect(integrationOf(operator)).toEqual({ 'Fn::GetAtt': [adminApi, 'Arn'] });
    // The IAM routes of the admin API stay as they were.
    expect(routeByKey('GET /admin/connections')?.[1].Properties.AuthorizationType).toBe('AWS_IAM');
  });

  it('signs operators in by e-mail, password and TOTP, with no sign-up and recovery by e-mail only', () => {
    const [, pool] = only('AWS::Cognito::UserPool');
    expect(pool.DeletionPolicy).toBe('Retain');
    expect(pool.Properties.AdminCreateUserConfig.AllowAdminCreateUserOnly).toBe(true);
    expect(pool.Properties.MfaConfiguration).toBe('ON');
    expect(pool.Properties.EnabledMfas).toEqual(['SOFTWARE_TOKEN_MFA']);
    expect(pool.Properties.UsernameAttributes).toEqual(['email']);
    expect(pool.Properties.AccountRecoverySetting.RecoveryMechanisms).toEqual([
      { Name: 'verified_email', Priority: 1 },
    ]);
    expect(pool.Properties.Policies.PasswordPolicy).toMatchObject({
      RequireLowercase: true,
      RequireUppercase: true,
      RequireNumbers: true,
      RequireSymbols: true,
    });
    expect(pool.Properties.Policies.PasswordPolicy.MinimumLength).toBeGreaterThanOrEqual(12);
    expect(only('AWS::Cognito::UserPoolGroup')[1].Properties.GroupName).toBe(OPERATORS_GROUP);
  });

  it("gives the console's client no secret, the code grant back to the console only, short-lived tokens", () => {
    const [, client] = only('AWS::Cognito::UserPoolClient');
    const [distributionId] = only('AWS::CloudFront::Distribution');
    const consoleUrl = {
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/console/']],
    };
    expect(client.Properties).toMatchObject({
      GenerateSecret: false,
      AllowedOAuthFlows: ['code'],
      AllowedOAuthScopes: ['openid', 'email', 'profile'],
      CallbackURLs: [consoleUrl],
      LogoutURLs: [consoleUrl],
      PreventUserExistenceErrors: 'ENABLED',
      AccessTokenValidity: 60,
      IdTokenValidity: 60,
      RefreshTokenValidity: 8 * 60,
      TokenValidityUnits: { AccessToken: 'minutes', IdToken: 'minutes', RefreshToken: 'minutes' },
    });
  });

  it("deploys the build and a config.json naming the pool, the client, the sign-in domain, the console's URL", () => {
    const [, deployment] = only('Custom::CDKBucketDeployment');
    const [bucketId] = only('AWS::S3::Bucket');
    expect(deployment.Properties.DestinationBucketName).toEqual({ Ref: bucketId });
    expect(deployment.Properties.DestinationBucketKeyPrefix).toBe('console/');
    expect(deployment.Properties.SystemMetadata).toEqual({ 'cache-control': 'no-cache' });
    // The second source is config.json: its markers stand for the deploy-time values.
    const key = String(deployment.Properties.SourceObjectKeys[1]).replace(/\.zip$/, '');
    const markers = deployment.Properties.SourceMarkers[1] as Record<string, unknown>;
    const written = JSON.parse(readFileSync(join(outdir, `asset.${key}`, 'config.json'), 'utf8')) as Record<
      string,
      string
    >;
    const config = Object.fromEntries(
      Object.entries(written).map(([name, value]) => [
        name,
        value.replace(/<<marker:0xbaba:\d+>>/g, (marker) => JSON.stringify(markers[marker])),
      ]),
    );
    const [poolId] = only('AWS::Cognito::UserPool');
    const [clientId] = only('AWS::Cognito::UserPoolClient');
    const [domainId] = only('AWS::Cognito::UserPoolDomain');
    const [distributionId] = only('AWS::CloudFront::Distribution');
    const region = '{"Ref":"AWS::Region"}';
    expect(config).toEqual({
      mode: 'cognito',
      region,
      userPoolId: `{"Ref":"${poolId}"}`,
      clientId: `{"Ref":"${clientId}"}`,
      domain: `https://{"Ref":"${domainId}"}.auth.${region}.amazoncognito.com`,
      redirectUri: `https://{"Fn::GetAtt":["${distributionId}","DomainName"]}/console/`,
    });
  });

  it("tells the admin API the console's URL and its own, and outputs the console and how to add an operator", () => {
    const [, adminApi] = ofType('AWS::Lambda::Function').find(([id]) => id.startsWith('AdminApi')) ?? [];
    const [distributionId] = only('AWS::CloudFront::Distribution');
    const [apiId] = only('AWS::ApiGatewayV2::Api');
    const variables = adminApi?.Properties.Environment.Variables;
    expect(variables.CONSOLE_URL).toEqual({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/console/']],
    });
    expect(variables.API_URL).toEqual({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
    const outputs = template.toJSON().Outputs as Record<string, { Value: any; Description?: string }>;
    expect(outputs.ConsoleUrl?.Value).toEqual(variables.CONSOLE_URL);
    const [poolId] = only('AWS::Cognito::UserPool');
    expect(outputs.ConsoleUserPoolId?.Value).toEqual({ Ref: poolId });
    expect(outputs.ConsoleUserPoolId?.Description).toMatch(/admin-create-user .* admin-add-user-to-group .*operators/);
    const command = ((outputs.ConsoleAddOperatorCommand?.Value['Fn::Join'][1] ?? []) as unknown[])
      .map((part) => (typeof part === 'string' ? part : '<ref>'))
      .join('');
    expect(command).toBe(
      'aws cognito-idp admin-create-user --user-pool-id <ref> --region <ref> --username OPERATOR_EMAIL ' +
        '--user-attributes Name=email,Value=OPERATOR_EMAIL Name=email_verified,Value=true && ' +
        'aws cognito-idp admin-add-user-to-group --user-pool-id <ref> --region <ref> --username OPERATOR_EMAIL ' +
        '--group-name operators',
    );
  });
});

describe('Function: defaultDomainPrefix', () => {
  const prefixOf = (stackName: string) =>
    defaultDomainPrefix(new Stack(new App(), 'Prefix', { stackName, env: { account: '123456789012' } }));

  it.each([
    ['AtsInterviewConnector', 'ats-interview-connector-console-123456789012'],
    ['Connector-Staging2', 'connector-staging2-console-123456789012'],
    ['AwsCognitoAmazon', 'connector-console-123456789012'],
    ['my-aws-connector', 'my-connector-console-123456789012'],
  ])('makes %s a prefix Cognito accepts: %s', (stackName, prefix) => {
    expect(prefixOf(stackName)).toBe(prefix);
  });

  it('stays within 63 characters and the allowed alphabet for the longest stack name', () => {
    const prefix = prefixOf(`A${'b-'.repeat(60)}Zz`);
    expect(prefix.length).toBeLessThanOrEqual(63);
    expect(prefix).toMatch(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/);
    expect(prefix).not.toMatch(/--/);
  });
});
