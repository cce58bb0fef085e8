import { Duration, type Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, type Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { ConnectorFunctions } from './connector-functions';
import type { WorkerQueue } from './worker-queue';

export interface AlarmedResources {
  functions: ConnectorFunctions;
  queues: Record<'StageEvents' | 'ReportEvents', WorkerQueue>;
  scheduleDlq: Queue;
  api: HttpApi;
}

type AddAlarm = (name: string, metric: Metric, threshold: number, description: string) => void;

/** What reaches the on-call e-mail: dead letters, old messages, 5xx, each function's errors and throttles. */
export function addAlarms(stack: Stack, alarmEmail: string, resources: AlarmedResources): void {
  const topic = new Topic(stack, 'AlarmTopic', { displayName: 'ATS interview connector alarms', enforceSSL: true });
  topic.addSubscription(new EmailSubscription(alarmEmail));
  const alarm: AddAlarm = (name, metric, threshold, description) =>
    void new Alarm(stack, name, {
      metric,
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    }).addAlarmAction(new SnsAction(topic));
  alarm(
    'ReconcileScheduleDlqDepth',
    resources.scheduleDlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
    1,
    'The reconciler schedule could not start the reconciler: reports whose webhook was lost wait',
  );
  for (const [name, queues] of Object.entries(resources.queues)) {
    alarm(
      `${name}DlqDepth`,
      queues.dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
      1,
      `${name}: messages in the dead-letter queue need an operator (npm run ops -- dlq list)`,
    );
    alarm(
      `${name}OldestMessage`,
      queues.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5) }),
      15 * 60,
      `${name}: a message has waited over 15 minutes`,
    );
  }
  alarm(
    'WebhookApi5xx',
    resources.api.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }),
    1,
    'The webhook API answered 5xx: a sender will retry, but something is down (the log says what)',
  );
  for (const handler of Object.values(resources.functions)) alarmFunction(stack, handler, alarm);
}

function alarmFunction(stack: Stack, handler: NodejsFunction, alarm: AddAlarm): void {
  const name = handler.node.id;
  alarm(`${name}Errors`, handler.metricErrors({ period: Duration.minutes(5) }), 1, `${name} failed`);
  alarm(
    `${name}Throttles`,
    handler.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }),
    1,
    `${name} was throttled: its concurrency (or the account's) is spent`,
  );
  // A function that handles a failure does not fail, so these would otherwise reach nobody: an application the
  // ATS or the service refused for good (a revoked key, a missing permission), a poison message, a delivery
  // that could not be enqueued, a connection the reconciler could not read. Each is logged at ERROR.
  const errorLines = new MetricFilter(stack, `${name}ErrorLines`, {
    logGroup: handler.logGroup,
    filterPattern: FilterPattern.stringValue('$.level', '=', 'ERROR'),
    metricNamespace: stack.stackName,
    metricName: `${name}LoggedErrors`,
    metricValue: '1',
  });
  alarm(
    `${name}LoggedErrors`,
    errorLines.metric({ statistic: 'Sum', period: Duration.minutes(5) }),
    1,
    `${name} logged an error an operator must act on; the log line says what ` +
      '(npm run ops -- failed lists refused applications)',
  );
}
