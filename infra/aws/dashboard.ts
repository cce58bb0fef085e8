import { Duration, type Stack } from 'aws-cdk-lib';
import { Dashboard, GraphWidget, LogQueryWidget, Metric, type IWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import {
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  PIPELINE_METRICS,
  type PipelineMetric,
} from '../../shared/observability/metrics';

/** The dashboard's widgets by title: what an operator looks at, and what the CDK assertions check. */
export const DASHBOARD_WIDGETS = {
  flow: 'Candidates invited and written back; assessment orders',
  outcomes: 'Advanced, flagged, failed, unmatched, deferred, reminded, expired',
  perConnection: 'Per connection (EMF lines, the dashboard period)',
  depth: 'Queue depth (visible and in flight)',
  age: 'Oldest message (seconds)',
  dlqs: 'Dead-letter queues',
  errors: 'Function errors and throttles',
} as const;

export interface DashboardResources {
  functions: Record<
    'atsWebhook' | 'interviewWebhook' | 'inviteWorker' | 'writebackWorker' | 'reconciler' | 'orderApi',
    IFunction & { logGroup: { logGroupName: string } }
  >;
  queues: Record<'StageEvents' | 'ReportEvents', { queue: Queue; dlq: Queue }>;
}

/** The flow graph's metrics: candidates invited and written back, beside the assessment orders'. */
const FLOW: readonly PipelineMetric[] = ['Invited', 'WrittenBack'];
const ORDERS: readonly PipelineMetric[] = ['OrderReceived', 'OrderCompleted', 'OrderResponseError'];

/**
 * One CloudWatch dashboard for the whole deployment: the workers' business metrics (Powertools EMF, summed over
 * every connection), a Logs Insights table of the same events per connection (the connection is EMF metadata, so a
 * thousand customers add no custom metrics), the queues' depth and age, the DLQs, and the functions' errors.
 */
export function addOperatorDashboard(stack: Stack, resources: DashboardResources): Dashboard {
  const business = (name: (typeof PIPELINE_METRICS)[number]) =>
    new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: name,
      dimensionsMap: { service: METRICS_SERVICE },
      statistic: 'Sum',
      period: Duration.minutes(5),
    });
  const period = { period: Duration.minutes(5) };
  const queues = Object.entries(resources.queues);
  const functions = Object.entries(resources.functions);
  const sums = PIPELINE_METRICS.map((m) => `sum(${m}) as ${m}`).join(', ');
  const widgets: IWidget[] = [
    new GraphWidget({
      title: DASHBOARD_WIDGETS.flow,
      left: FLOW.map(business),
      right: ORDERS.map(business),
      width: 12,
    }),
    // Every other metric: what became of the candidates and their messages (Paced among them).
    new GraphWidget({
      title: DASHBOARD_WIDGETS.outcomes,
      left: PIPELINE_METRICS.filter((m) => !FLOW.includes(m) && !ORDERS.includes(m)).map(business),
      width: 12,
    }),
    new LogQueryWidget({
      title: DASHBOARD_WIDGETS.perConnection,
      logGroupNames: [
        resources.functions.inviteWorker.logGroup.logGroupName,
        resources.functions.writebackWorker.logGroup.logGroupName,
        resources.functions.orderApi.logGroup.logGroupName,
      ],
      queryLines: [
        `filter ispresent(connectionId) and ispresent(_aws.CloudWatchMetrics.0.Namespace)`,
        `stats ${sums} by connectionId`,
        'sort Invited desc',
        'limit 200',
      ],
      width: 24,
    }),
    new GraphWidget({
      title: DASHBOARD_WIDGETS.depth,
      left: queues.flatMap(([, q]) => [
        q.queue.metricApproximateNumberOfMessagesVisible(period),
        q.queue.metricApproximateNumberOfMessagesNotVisible(period),
      ]),
      width: 8,
    }),
    new GraphWidget({
      title: DASHBOARD_WIDGETS.age,
      left: queues.map(([, q]) => q.queue.metricApproximateAgeOfOldestMessage(period)),
      width: 8,
    }),
    new GraphWidget({
      title: DASHBOARD_WIDGETS.dlqs,
      left: queues.map(([, q]) => q.dlq.metricApproximateNumberOfMessagesVisible(period)),
      width: 8,
    }),
    new GraphWidget({
      title: DASHBOARD_WIDGETS.errors,
      left: functions.map(([, fn]) => fn.metricErrors({ ...period, statistic: 'Sum' })),
      right: functions.map(([, fn]) => fn.metricThrottles({ ...period, statistic: 'Sum' })),
      width: 24,
    }),
  ];
  const dashboard = new Dashboard(stack, 'OperatorDashboard', { defaultInterval: Duration.hours(24) });
  dashboard.addWidgets(...widgets.slice(0, 2));
  dashboard.addWidgets(widgets[2] as IWidget);
  dashboard.addWidgets(...widgets.slice(3, 6));
  dashboard.addWidgets(widgets[6] as IWidget);
  return dashboard;
}
