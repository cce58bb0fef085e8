import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/** The business events an operator follows, as CloudWatch metric names. */
export const PIPELINE_METRICS = [
  'Invited',
  'WrittenBack',
  'Advanced',
  'Flagged',
  'Failed',
  'Unmatched',
  'Deferred',
  /** A message went back for its booked turn on the ATS's rate limit: pacing at work, not an incident. */
  'Paced',
  'Reminded',
  'CandidateLeft',
  'Expired',
  /** Assessment orders: placed from inside the ATS, completed by their report, and malformed answers reported. */
  'OrderReceived',
  'OrderCompleted',
  'OrderResponseError',
] as const;
export type PipelineMetric = (typeof PIPELINE_METRICS)[number];

/** The metrics' CloudWatch namespace and their one dimension's value (`service`), shared by every function. */
export const METRICS_NAMESPACE = 'AtsInterviewConnector';
export const METRICS_SERVICE = 'ats-interview-connector';

/** The port the workers count through: one event of `metric` for a connection. */
export interface PipelineMetrics {
  count(metric: PipelineMetric, connectionId: string): void;
}

/**
 * Powertools Metrics, in CloudWatch's embedded metric format (one JSON log line each, no API call, no IAM). The
 * connection is the line's metadata, not a dimension: a dimension per connection would make each metric a
 * thousand custom metrics for a thousand customers; as metadata it is still there for the dashboard's per-connection
 * Logs Insights table, at no metric cost. `POWERTOOLS_METRICS_DISABLED` turns it off (the local stack does).
 */
export function createMetrics(): PipelineMetrics {
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });
  return {
    count(metric, connectionId) {
      // A single metric is written at once, with its own metadata: one line per event, whatever the batch.
      const single = metrics.singleMetric();
      single.addMetadata('connectionId', connectionId);
      single.addMetric(metric, MetricUnit.Count, 1);
    },
  };
}
