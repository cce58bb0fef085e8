import { randomBytes } from 'node:crypto';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../infra/local/local-stack';
import { emulatorEnvironment, startEmulators, type Emulators } from '../../infra/local/emulators';
import { createTables, type LocalTables } from '../../infra/local/provision';
import { waitFor } from './local-http';

export async function scanTable(stack: LocalStack, table: string): Promise<Record<string, unknown>[]> {
  const result = await stack.dynamo.send(new ScanCommand({ TableName: table }));
  return (result.Items ?? []).map((item) => unmarshall(item));
}

export interface SesEmail {
  destination: { to: string[] };
  subject: string;
  body: { text?: string };
}

export async function sentEmails(stack: LocalStack): Promise<SesEmail[]> {
  const store = (await (await fetch(`${stack.emulators.endpoints.ses}/store`)).json()) as { emails: SesEmail[] };
  return store.emails;
}

export async function emailsTo(stack: LocalStack, address: string): Promise<SesEmail[]> {
  return (await sentEmails(stack)).filter((m) => m.destination.to.includes(address));
}

/** The interview id in the invitation e-mailed to `address` (the candidate follows this link). */
export async function invitedInterviewId(stack: LocalStack, address: string, timeoutMs = 20_000): Promise<string> {
  await waitFor(async () => (await emailsTo(stack, address)).length > 0, timeoutMs, `an invite to ${address}`);
  const [mail] = await emailsTo(stack, address);
  const id = /\/invite\/([\w-]+)/.exec(mail?.body.text ?? '')?.[1];
  if (!id) throw new Error(`no interview link in the e-mail to ${address}`);
  return id;
}

export function reportNotes(stack: LocalStack, reportId?: string) {
  return stack.greenhouse.state.notes.filter((n) =>
    n.body.includes(reportId ? `ai-interview-report:${reportId}` : 'ai-interview-report:'),
  );
}

/**
 * The emulators the integration lane started once (test/setup/emulators.ts), with a prefix of this stack's own for
 * its tables and queues; undefined in a lane that starts its own.
 */
export function runningEmulators(): LocalStackOptions['running'] {
  const emulators = inject('emulators');
  if (!emulators) return undefined;
  return { emulators, resourcePrefix: `t${randomBytes(4).toString('hex')}-` };
}

/**
 * Rate limits no test run reaches, for the files whose subject is not pacing: each connection says the same, so its
 * calls go at once. Pacing at the documented rates is held by the files that keep them (`atsRateLimits: {}`: the
 * sweep, the rate-limit deferral) and by `npm run bench`.
 */
export const LIFTED_RATE_LIMITS = { greenhouse: 100_000, ashby: 100_000, lever: 100_000, workable: 100_000 };

/**
 * The local stack as integration tests run it, on the lane's emulators: no reconciler timer (tests run it by hand),
 * reports at once, no log lines, rate limits lifted, in a work folder of the test's own; `options` adds to or
 * overrides these.
 */
export function startTestStack(workDir: string, options: LocalStackOptions = {}): Promise<LocalStack> {
  return startLocalStack({
    reconcileIntervalMs: 0,
    reportDelayMs: 0,
    atsRateLimits: LIFTED_RATE_LIMITS,
    workDir,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'SILENT',
    running: runningEmulators(),
    ...options,
  });
}

/**
 * A describe block's local stack: started before its tests in a work folder of its own (named from `name`), stopped
 * and its folder removed after them. Read `stack` and `workDir` inside the tests.
 */
export function useTestStack(name: string, options: LocalStackOptions = {}): { stack: LocalStack; workDir: string } {
  const held = {} as { stack: LocalStack; workDir: string };
  beforeAll(async () => {
    held.workDir = mkdtempSync(join(tmpdir(), `${name}-`));
    held.stack = await startTestStack(held.workDir, options);
  }, 120_000);
  afterAll(async () => {
    await held.stack?.stop();
    if (held.workDir) rmSync(held.workDir, { recursive: true, force: true });
  });
  return held;
}

/** The candidate takes the interview now: the service's report follows at once (the sandbox's `delay_ms: 0`). */
export function takeInterview(
  stack: LocalStack,
  interviewId: string,
  candidate: { name: string; email: string },
  report: Omit<Parameters<LocalStack['interview']['completeInterview']>[0], 'interview_id'> | object = {},
): { candidate_id: string; report_id: string } {
  return stack.interview.completeInterview({
    interview_id: interviewId,
    candidate_name: candidate.name,
    candidate_email: candidate.email,
    delay_ms: 0,
    ...report,
  });
}

/**
 * The lane's DynamoDB Local with a set of mapping tables of a describe block's own (every table under `name` and a
 * random prefix), for the repositories' tests; the emulators are let go after the block.
 */
export function useLocalTables(name: string): { client: DynamoDBClient; tables: LocalTables } {
  const held = {} as { client: DynamoDBClient; tables: LocalTables; emulators: Emulators };
  beforeAll(async () => {
    held.emulators = await startEmulators({}, inject('emulators'));
    const env = emulatorEnvironment(held.emulators.endpoints);
    held.client = new DynamoDBClient({
      endpoint: held.emulators.endpoints.dynamodb,
      region: env.AWS_REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    held.tables = await createTables(held.client, `${name}-${randomBytes(4).toString('hex')}`);
  });
  afterAll(async () => {
    await held.emulators?.stop();
  });
  return held;
}
