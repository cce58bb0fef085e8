/**
 * What the deployed stack tells an operator. CloudFormation output names must be alphanumeric ("Outputs" in
 * the AWS CloudFormation User Guide), so each output has its own name, and `npm run ops -- --aws` reads it
 * from the file `cdk deploy --outputs-file` writes, or from the environment variable beside it.
 */
export const OPS_OUTPUTS = {
  jobsTable: { output: 'JobsTable', env: 'JOBS_TABLE' },
  applicationsTable: { output: 'ApplicationsTable', env: 'APPLICATIONS_TABLE' },
  eventsTable: { output: 'EventsTable', env: 'EVENTS_TABLE' },
  ordersTable: { output: 'OrdersTable', env: 'ORDERS_TABLE' },
  connectionsTable: { output: 'ConnectionsTable', env: 'CONNECTIONS_TABLE' },
  stageQueueUrl: { output: 'StageQueueUrl', env: 'STAGE_QUEUE_URL' },
  reportQueueUrl: { output: 'ReportQueueUrl', env: 'REPORT_QUEUE_URL' },
  stageDlqUrl: { output: 'StageDlqUrl', env: 'STAGE_DLQ_URL' },
  reportDlqUrl: { output: 'ReportDlqUrl', env: 'REPORT_DLQ_URL' },
} as const;

export type OpsOutput = keyof typeof OPS_OUTPUTS;

/**
 * The value of each ops output: from `outputs` (one stack's section of the outputs file) first, else from the
 * environment. Returns the names of whatever is missing instead of a partial answer.
 */
export function readOpsOutputs(
  outputs: Record<string, unknown> | undefined,
  env: NodeJS.ProcessEnv,
): { values: Record<OpsOutput, string> } | { missing: string[] } {
  const values: Partial<Record<OpsOutput, string>> = {};
  const missing: string[] = [];
  for (const [key, { output, env: variable }] of Object.entries(OPS_OUTPUTS) as [
    OpsOutput,
    (typeof OPS_OUTPUTS)[OpsOutput],
  ][]) {
    const value = outputs?.[output] ?? env[variable];
    if (typeof value === 'string' && value.length > 0) values[key] = value;
    else missing.push(`${output} (or ${variable})`);
  }
  return missing.length ? { missing } : { values: values as Record<OpsOutput, string> };
}
