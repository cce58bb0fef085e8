import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchWriteItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context } from 'aws-lambda';
import { emulatorEnvironment, startEmulators } from '../../infra/local/emulators';
import { startCountingProxy } from '../../infra/local/counting-proxy';
import { createTables } from '../../infra/local/provision';
import { parseConnections } from '../../shared/config';
import { connectionsDocument } from '../helpers/many-connections';

/** Connections one reconciler run reads at most (its default, functions/reconciler/reconciler.handler.ts). */
const PER_RUN = 2_000;

/**
 * `npm run bench -- --connections N`: N connections in the connections table on DynamoDB Local (through a proxy that
 * counts requests), a function's cold start reading the one it serves, and the reconciler's runs (each in its Lambda
 * time, paging the table from its cursor) until every connection was served once: runs per cycle, connections per
 * second, DynamoDB requests per connection per run.
 */
export async function benchConnections(count: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-connections-'));
  const emulators = await startEmulators();
  const proxy = await startCountingProxy(emulators.endpoints.dynamodb);
  try {
    const direct = new DynamoDBClient({ endpoint: emulators.endpoints.dynamodb, ...LOCAL_CREDENTIALS });
    const tables = await createTables(direct, 'bench');
    // The customers of a vendor: each its own id and secret, with no sweep or orders and every outside address on
    // this machine (nothing here answers an ATS: the run measures the connector's own work per connection).
    const documents = connectionsDocument(count).connections.map((c) => ({
      ...c,
      id: String(c.id),
      secretRef: String(c.secretRef),
      atsBaseUrl: 'http://127.0.0.1:9',
      atsAuthUrl: 'http://127.0.0.1:9/token',
      interviewService: { ...(c.interviewService as object), baseUrl: 'http://127.0.0.1:9' },
      sweep: { enabled: false },
      orders: undefined,
    }));
    parseConnections({ connections: documents }, 'the bench connections');
    const started = Date.now();
    for (let i = 0; i < documents.length; i += 25) {
      const items = documents.slice(i, i + 25).map((document) => ({
        PutRequest: {
          Item: marshall(
            { id: document.id, document: JSON.stringify(document), version: 1, enabled: true, updatedAt: 0 },
            { removeUndefinedValues: true },
          ),
        },
      }));
      await direct.send(new BatchWriteItemCommand({ RequestItems: { [tables.connections]: items } }));
    }
    console.log(`${count} connections written to the table in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const secrets = Object.fromEntries(
      documents.map((d) => [
        d.secretRef as string,
        {
          interviewApiKey: 'k',
          interviewWebhookToken: 't'.repeat(32),
          atsWebhookSecret: 'w'.repeat(32),
          atsApiKey: 'a',
          atsClientId: 'i',
          atsClientSecret: 's',
        },
      ]),
    );
    writeFileSync(join(dir, 'secrets.json'), JSON.stringify(secrets));
    Object.assign(process.env, emulatorEnvironment({ ...emulators.endpoints, dynamodb: proxy.url }), {
      CONNECTIONS_TABLE: tables.connections,
      CONNECTION_AUDIT_TABLE: tables.connectionAudit,
      JOBS_TABLE: tables.jobs,
      APPLICATIONS_TABLE: tables.applications,
      EVENTS_TABLE: tables.events,
      ORDERS_TABLE: tables.orders,
      SECRETS_FILE: join(dir, 'secrets.json'),
      STAGE_QUEUE_URL: `${emulators.endpoints.sqs}/000000000000/bench-stage`,
      REPORT_QUEUE_URL: `${emulators.endpoints.sqs}/000000000000/bench-report`,
      MAIL_FROM: 'talent@bench.example.com',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    });

    // A cold start: a function's first read of the connection it serves.
    const { connectionById, resetConnectionCaches } = await import('../../functions/_runtime/connections');
    resetConnectionCaches();
    proxy.reset();
    const coldStarted = performance.now();
    const served = await connectionById(`customer-${Math.floor(count / 2)}`);
    const coldMs = performance.now() - coldStarted;
    const coldReads = proxy.total();
    if (!served) throw new Error('the cold start found no connection');

    // The reconciler's runs until every connection was served once.
    const { handler } = await import('../../functions/reconciler/reconciler.handler');
    proxy.reset();
    const cycleStarted = Date.now();
    let served_ = 0;
    let runs = 0;
    const slowest = { ms: 0 };
    for (; served_ < count && runs < Math.ceil(count / PER_RUN) * 3; runs++) {
      const runStarted = Date.now();
      const totals = await handler({}, lambdaContext(300_000));
      process.stderr.write(`run ${runs + 1}: ${totals.connections} connections in ${Date.now() - runStarted} ms\n`);
      slowest.ms = Math.max(slowest.ms, Date.now() - runStarted);
      served_ += totals.connections - totals.notStarted.length;
      if (totals.failed.length) throw new Error(`reconciler: ${totals.failed.length} connections failed`);
    }
    const seconds = (Date.now() - cycleStarted) / 1000;
    const byOperation = [...proxy.counts.entries()].sort((a, b) => b[1] - a[1]);
    const requests = proxy.total();
    console.log('\nConnections in DynamoDB (one table, one item each):');
    console.log(`| ${'measure'.padEnd(58)} | ${'value'.padStart(14)} |`);
    const row = (label: string, value: string) => console.log(`| ${label.padEnd(58)} | ${value.padStart(14)} |`);
    row('connections in the table', String(count));
    row("a cold start's DynamoDB requests for its connection", `${coldReads} (${coldMs.toFixed(0)} ms)`);
    row(`reconciler runs for one cycle (${PER_RUN} a run at most, 1 MB pages)`, String(runs));
    row('connections served in the cycle', String(served_));
    row('connections per second', (served_ / seconds).toFixed(0));
    row('slowest run (of a Lambda timeout of 300 s)', `${(slowest.ms / 1000).toFixed(1)} s`);
    row('DynamoDB requests per connection per run', (requests / served_).toFixed(2));
    row(
      '  of which reading the connections (Scan pages, cursor)',
      (((proxy.counts.get('Scan') ?? 0) + (proxy.counts.get('GetItem') ?? 0)) / served_).toFixed(3),
    );
    console.log(`DynamoDB by operation: ${byOperation.map(([op, n]) => `${op} ${n}`).join(', ')}`);
    if (coldReads !== 1) throw new Error(`a cold start made ${coldReads} DynamoDB requests for its connection, not 1`);
    if (served_ < count) throw new Error(`the cycle served ${served_} of ${count} connections`);
  } finally {
    await proxy.close();
    await emulators.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const LOCAL_CREDENTIALS = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
};

function lambdaContext(timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return { awsRequestId: `bench-${deadline}`, getRemainingTimeInMillis: () => deadline - Date.now() } as Context;
}
