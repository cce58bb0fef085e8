import { join } from 'node:path';

/** Environment of every function; the CDK stack and the local runner set the same names. */
export const ENV = {
  /** Unit tests only: the functions read the connections table. */
  connectionsFile: 'CONNECTIONS_FILE',
  connectionsTable: 'CONNECTIONS_TABLE',
  connectionAuditTable: 'CONNECTION_AUDIT_TABLE',
  /** How long a function keeps a connection it read (shared/config/connection-source.ts). */
  connectionCacheSeconds: 'CONNECTION_CACHE_SECONDS',
  secretsFile: 'SECRETS_FILE',
  jobsTable: 'JOBS_TABLE',
  applicationsTable: 'APPLICATIONS_TABLE',
  eventsTable: 'EVENTS_TABLE',
  ordersTable: 'ORDERS_TABLE',
  stageQueueUrl: 'STAGE_QUEUE_URL',
  reportQueueUrl: 'REPORT_QUEUE_URL',
  mailFrom: 'MAIL_FROM',
  retentionDays: 'RETENTION_DAYS',
} as const;

export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
}

/** A connections file, read where no connections table is set (unit tests). */
export function connectionsFilePath(): string {
  return process.env[ENV.connectionsFile] ?? join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), 'connections.json');
}

export function tableNames(): { jobs: string; applications: string; events: string; orders: string | undefined } {
  return {
    jobs: requireEnv(ENV.jobsTable),
    applications: requireEnv(ENV.applicationsTable),
    events: requireEnv(ENV.eventsTable),
    // A candidate's purge deletes their orders too (every function is given the table's name).
    orders: process.env[ENV.ordersTable],
  };
}
