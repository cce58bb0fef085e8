import { Duration, RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import {
  AccountRecovery,
  FeaturePlan,
  Mfa,
  OAuthScope,
  UserPool,
  type UserPoolClient,
  UserPoolClientIdentityProvider,
} from 'aws-cdk-lib/aws-cognito';

/** The Cognito group an operator must be in: the admin API reads it from the token's `cognito:groups`. */
export const OPERATORS_GROUP = 'operators';

/** How long a console sign-in lasts: an hour per token, a working day before the operator signs in again. */
export const CONSOLE_SESSION = { tokenHours: 1, refreshHours: 8 } as const;

export interface OperatorPool {
  userPool: UserPool;
  /** The hosted sign-in pages' base URL, `https://<prefix>.auth.<region>.amazoncognito.com`. */
  signInBaseUrl: string;
  /** What API Gateway's JWT authorizer trusts: the pool's issuer URL. */
  issuer: string;
}

/**
 * The operators' user pool: nobody signs up (an operator is created by someone with AWS access, then put in the
 * group), sign-in by e-mail, a password and a TOTP code every time (an authenticator app; no SMS, which can be
 * redirected), recovery by e-mail only. Retained: removing the stack must not delete who may operate it.
 */
export function createOperatorPool(stack: Stack, domainPrefix: string): OperatorPool {
  const userPool = new UserPool(stack, 'ConsoleOperators', {
    selfSignUpEnabled: false,
    signInAliases: { email: true },
    autoVerify: { email: true },
    standardAttributes: { email: { required: true, mutable: true } },
    mfa: Mfa.REQUIRED,
    mfaSecondFactor: { otp: true, sms: false, email: false },
    passwordPolicy: {
      minLength: 14,
      requireLowercase: true,
      requireUppercase: true,
      requireDigits: true,
      requireSymbols: true,
      tempPasswordValidity: Duration.days(3),
    },
    accountRecovery: AccountRecovery.EMAIL_ONLY,
    featurePlan: FeaturePlan.ESSENTIALS,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  Validations.of(userPool).acknowledge({
    id: 'AwsSolutions::AwsSolutions-COG8',
    reason:
      "Threat protection needs the Plus feature plan. The pool's few operators are created by someone with AWS " +
      'access (no sign-up) and sign in with a password and a TOTP code every time, so a leaked password alone ' +
      'signs nobody in; an operator who wants adaptive authentication can move the pool to Plus.',
  });
  userPool.addGroup('ConsoleOperatorsGroup', {
    groupName: OPERATORS_GROUP,
    description: 'May use the console: the admin API refuses a token without this group',
  });
  const domain = userPool.addDomain('ConsoleSignIn', { cognitoDomain: { domainPrefix } });
  return {
    userPool,
    signInBaseUrl: domain.baseUrl(),
    // `cognito-idp.<region>.amazonaws.com/<pool id>`: the `iss` claim of the pool's tokens, after https://.
    issuer: `https://${userPool.userPoolProviderUrl}`,
  };
}

/**
 * The console's app client: a browser keeps no secret, so none is generated; sign-in is the hosted pages'
 * authorization-code grant, which the console runs with PKCE (RFC 7636), back to the console's own URL only.
 */
export function addConsoleClient(pool: OperatorPool, consoleUrl: string): UserPoolClient {
  return pool.userPool.addClient('ConsoleClient', {
    generateSecret: false,
    // SRP for the hosted pages (the password never leaves the browser), and refreshing: nothing else.
    authFlows: { userSrp: true },
    oAuth: {
      flows: { authorizationCodeGrant: true },
      scopes: [OAuthScope.OPENID, OAuthScope.EMAIL, OAuthScope.PROFILE],
      callbackUrls: [consoleUrl],
      logoutUrls: [consoleUrl],
    },
    supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
    accessTokenValidity: Duration.hours(CONSOLE_SESSION.tokenHours),
    idTokenValidity: Duration.hours(CONSOLE_SESSION.tokenHours),
    refreshTokenValidity: Duration.hours(CONSOLE_SESSION.refreshHours),
    preventUserExistenceErrors: true,
    enableTokenRevocation: true,
  });
}

/**
 * The default prefix of the hosted sign-in pages' domain: the stack's name and the account, so that two stacks
 * in one account, or one stack in two accounts, never ask for the same domain. Cognito takes lowercase letters,
 * digits and hyphens, at most 63 (40 + 9 + 12 here), and refuses `aws`, `amazon` and `cognito` in a prefix.
 */
export function defaultDomainPrefix(stack: Stack): string {
  const name = stack.stackName
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/aws|amazon|cognito/g, '-')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return `${name || 'connector'}-console-${stack.account}`;
}
