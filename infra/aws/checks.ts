import { type App, type Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';

/**
 * The checks AWS users run on their stacks: cdk-nag's AwsSolutions and Serverless packs, as CDK validation
 * plugins, so `cdk synth` (and `cdk deploy`) fail on any finding that is neither fixed nor acknowledged here.
 */
export function addStackChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
}

/** Each finding the connector accepts, with the reason it is right for this stack. */
export const ACKNOWLEDGED_FINDINGS: { id: string; reason: string }[] = [
  {
    id:
      'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/' +
      'AWSLambdaBasicExecutionRole]',
    reason: 'The basic execution role grants writing the function its own CloudWatch logs and nothing else.',
  },
  {
    id: 'Serverless::Serverless-SQSRedrivePolicy',
    reason: 'Flagged only on the dead-letter queues themselves; every working queue has a redrive policy.',
  },
  {
    id: 'Serverless::Serverless-SNSRedrivePolicy',
    reason:
      'The alarm e-mail subscription: an undelivered e-mail leaves the alarm in ALARM state in CloudWatch, ' +
      'where it stays visible; a dead-letter queue would hold copies nobody reads.',
  },
  {
    id: 'Serverless::Serverless-LambdaDLQ',
    reason:
      'No function is invoked asynchronously by anything but the schedule, whose target has its own dead-letter ' +
      'queue and retries: the webhooks answer their callers, the workers are fed by SQS with a redrive policy.',
  },
  {
    id: 'Serverless::Serverless-LambdaEventSourceMappingDestination',
    reason: "A record that keeps failing goes to the queue's dead-letter queue (maxReceiveCount 8), alarmed on.",
  },
  {
    id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
    reason:
      "Active tracing's grant, which the CDK adds: xray:PutTraceSegments and xray:PutTelemetryRecords, two " +
      'actions X-Ray does not scope to a resource (its service authorization reference); the test of the ' +
      'stack checks that no other action is granted on every resource.',
  },
];

/** The secrets grant is a prefix by design: one statement for any number of connections (IAM's size quota). */
export function acknowledgeFindings(stack: Stack, secretsPrefix: string): void {
  for (const finding of ACKNOWLEDGED_FINDINGS) Validations.of(stack).acknowledge(finding);
  Validations.of(stack).acknowledge({
    id: 'AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]',
    reason:
      "A connection's sender is set through the admin API at any time, with no deploy, so the invite worker's grant " +
      'cannot list its domain; SES sends only from identities the operator verified in the account.',
  });
  Validations.of(stack).acknowledge({
    id:
      'AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:' +
      `<AWS::AccountId>:secret:${secretsPrefix}*]`,
    reason:
      "The secrets of every connection, and only those, are named under the deploy settings' secretsPrefix; " +
      "one grant instead of an ARN per connection keeps the policy under IAM's size quota at 1,000 connections.",
  });
}
