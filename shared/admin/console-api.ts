import * as v from 'valibot';
import { createHash, randomBytes } from 'node:crypto';
import type { Connection } from '../config';
import { servedConnection, type StoredConnection } from '../config/connection-source';
import { writeFields } from '../config/secret-store';
import type { ActivityDay, ConnectLink, DoctorResult, TimelineEntry } from '../mapping/activity.records';
import { dayOf } from '../mapping/activity.records';
import type { ApplicationRecord } from '../pipeline/records';
import type { CheckLine } from '../doctor/lines';
import { describeFirstIssue, SAFE_ID_PATTERN } from '../validation';
import { errorMessage } from '../errors';
import { VersionConflictError } from '../mapping/connections.records';
import { type AdminAnswer, type AdminOptions, handleAdminRequest } from './connection-admin';
import { type DeadLetter, QUEUE_NAMES, type QueueName } from './dead-letters';

/** What the console reads and writes of the activity table (shared/mapping/activity.records.ts). */
export interface ConsoleActivity {
  days(connectionIds: readonly string[], day: string): Promise<ActivityDay[]>;
  doctors(connectionIds: readonly string[]): Promise<DoctorResult[]>;
  putDoctor(result: DoctorResult): Promise<void>;
  timeline(connectionId: string, atsApplicationId: string): Promise<TimelineEntry[]>;
  addTimeline(entries: readonly TimelineEntry[]): Promise<void>;
  /** Stores a link as its connection's current one; answers the hash of the one it replaces. */
  putLink(hash: string, link: ConnectLink): Promise<string | undefined>;
  link(hash: string, now: number): Promise<ConnectLink | undefined>;
  useLink(hash: string, now: number): Promise<boolean>;
}

/** What an ATS tells the console of its jobs and stages (the adapter's set-up side, shared/ats/port.ts). */
export interface StageSource {
  listJobs(limit: number): Promise<{ id: string; name: string }[]>;
  listStages(jobId: string | undefined): Promise<{ id: string; name: string }[]>;
}

export interface ConsoleDependencies {
  admin: AdminOptions;
  activity: ConsoleActivity;
  applications: {
    findApplicationsByAtsId(connectionId: string, atsApplicationId: string): Promise<ApplicationRecord[]>;
  };
  /** When the connection's ATS asked the queue to wait until (its rate limit), if it did. */
  backlogUntil(connectionId: string): Promise<number | undefined>;
  deadLetters: {
    count(queue: QueueName): Promise<number>;
    peek(queue: QueueName): Promise<DeadLetter[]>;
    redrive(queue: QueueName, expected: number): Promise<{ started: boolean; count: number }>;
    redriveStatus(queue: QueueName): Promise<{ status: string; moved: number } | undefined>;
    retry(queue: QueueName, messageId: string): Promise<boolean>;
  };
  /** The doctor's checks of a connection (shared/doctor/checks.ts), with the stack's URL and secrets. */
  doctor(connection: Connection): Promise<CheckLine[]>;
  /** The connection's ATS, with its stored credentials, for the stage picker. */
  stages(connection: Connection): Promise<StageSource>;
  now?: () => number;
}

export interface ConsoleRequest {
  method: string;
  /** The path under `/console-api`. */
  path: string[];
  query: Record<string, string | undefined>;
  body: unknown;
  /** The operator: their user on AWS (Cognito), the local key's name on one machine. */
  principal: string;
}

/** A customer's connect link lasts a week, or until they finish with it. */
export const CONNECT_LINK_DAYS = 7;
const JOBS_SHOWN = 200;

const redriveSchema = v.object({
  queue: v.picklist(QUEUE_NAMES, 'must be stage or report'),
  expected: v.pipe(v.number('must be the count the preview showed'), v.integer(), v.minValue(1)),
});
const retrySchema = v.object({
  queue: v.picklist(QUEUE_NAMES, 'must be stage or report'),
  messageId: v.pipe(v.string(), v.nonEmpty(), v.maxLength(100)),
});
const linkSchema = v.object({ interviewApiKey: v.optional(v.pipe(v.string(), v.nonEmpty(), v.maxLength(500))) });

/** The hash a connect link is stored under: its token is shown once, to the operator who made it. */
export const linkHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * The operators' console API (`/console-api/...`): the connections' health, one connection's set-up (the admin API's
 * connections resource, the doctor, the stage picker, a customer's connect link), one candidate's timeline, and the
 * failures (dead-letter queues, redrive after a preview, retry of one, failed write-backs, the audit). Nothing it
 * answers holds a secret's value or, unless the operator asks, a candidate's e-mail.
 */
export async function handleConsoleRequest(request: ConsoleRequest, deps: ConsoleDependencies): Promise<AdminAnswer> {
  const [area, ...rest] = request.path;
  try {
    if (area === 'overview' && request.method === 'GET') return await overview(request, deps);
    if (area === 'connections') return await connection(request, rest, deps);
    if (area === 'candidates' && request.method === 'GET') return await candidate(request, rest, deps);
    if (area === 'failures') return await failures(request, rest, deps);
    return notFound();
  } catch (error) {
    if (error instanceof VersionConflictError) throw error;
    return { status: 502, body: { error: errorMessage(error) } };
  }
}

async function overview(request: ConsoleRequest, deps: ConsoleDependencies): Promise<AdminAnswer> {
  const page = await handleAdminRequest({ ...request, path: [] }, deps.admin);
  if (page.status !== 200) return page;
  const listed = page.body.connections as { id: string }[];
  const ids = listed.map((c) => c.id);
  const now = (deps.now ?? Date.now)();
  const [days, doctors, backlogs, dlq] = await Promise.all([
    deps.activity.days(ids, dayOf(now)),
    deps.activity.doctors(ids),
    Promise.all(ids.map((id) => deps.backlogUntil(id).catch(() => undefined))),
    Promise.all(QUEUE_NAMES.map(async (q) => [q, await deps.deadLetters.count(q)] as const)),
  ]);
  const connections = listed.map((c, i) => {
    const day = days.find((d) => d.connectionId === c.id);
    const doctor = doctors.find((d) => d.connectionId === c.id);
    const until = backlogs[i];
    return {
      ...c,
      today: day?.counts ?? {},
      lastWebhookAt: day?.lastWebhookAt,
      lastWriteBackAt: day?.lastWriteBackAt,
      doctor: doctor && {
        at: doctor.at,
        passed: doctor.lines.filter((l) => l.status === 'pass').length,
        failed: doctor.lines.filter((l) => l.status === 'fail').length,
      },
      rateLimitedUntil: until !== undefined && until > now ? until : undefined,
    };
  });
  return { status: 200, body: { connections, cursor: page.body.cursor, deadLetters: Object.fromEntries(dlq) } };
}

async function connection(request: ConsoleRequest, rest: string[], deps: ConsoleDependencies): Promise<AdminAnswer> {
  const [id, action] = rest;
  const extra = id && SAFE_ID_PATTERN.test(id) && rest.length === 2 ? action : undefined;
  if (extra === 'doctor' && request.method === 'POST') return runDoctor(id as string, request.principal, deps);
  if (extra === 'doctor' && request.method === 'GET') {
    const [last] = await deps.activity.doctors([id as string]);
    return { status: 200, body: { connectionId: id, doctor: last } };
  }
  if (extra === 'stages' && request.method === 'GET') return stages(id as string, request.query.job, deps);
  if (extra === 'connect-link' && request.method === 'POST') return connectLink(id as string, request, deps);
  return handleAdminRequest({ ...request, path: rest }, deps.admin);
}

/** The connection as the functions serve it, or the answer saying why it cannot be. */
export async function servedOrAnswer(
  id: string,
  deps: Pick<ConsoleDependencies, 'admin'>,
): Promise<{ connection: Connection; stored: StoredConnection } | AdminAnswer> {
  const stored = await deps.admin.store.read(id, true);
  if (!stored) return { status: 404, body: { error: `no connection ${id}` } };
  try {
    return { connection: servedConnection(stored).connection, stored };
  } catch (error) {
    return { status: 409, body: { error: errorMessage(error) } };
  }
}

/** Runs the doctor on the connection and keeps its result for the connections page. */
export async function runDoctor(id: string, principal: string, deps: ConsoleDependencies): Promise<AdminAnswer> {
  const served = await servedOrAnswer(id, deps);
  if ('status' in served) return served;
  const lines = await deps.doctor(served.connection);
  const result: DoctorResult = { connectionId: id, at: (deps.now ?? Date.now)(), principal, lines };
  await deps.activity.putDoctor(result);
  return { status: 200, body: { ...result } };
}

/**
 * The ATS's jobs, and the stages of one (or of every job, where stages are global), read with its credentials. A
 * failure is told as `describe` tells it (a customer's connect page: not the provider's side's detail).
 */
export async function stages(
  id: string,
  job: string | undefined,
  deps: ConsoleDependencies,
  describe?: (error: unknown) => Promise<string>,
): Promise<AdminAnswer> {
  const served = await servedOrAnswer(id, deps);
  if ('status' in served) return served;
  try {
    const ats = await deps.stages(served.connection);
    const jobs = await ats.listJobs(JOBS_SHOWN);
    const jobId = job || jobs[0]?.id;
    const stageList = await ats.listStages(jobId);
    return { status: 200, body: { jobs, job: jobId, stages: stageList } };
  } catch (error) {
    const said = describe ? await describe(error) : `${served.connection.ats}: ${errorMessage(error)}`;
    return { status: 502, body: { error: said } };
  }
}

/**
 * A one-time link for the customer to connect their own ATS: the token is answered once and stored only as its hash.
 * The interview service's key, when the operator gives it, goes into the connection's secret with a new webhook token.
 */
async function connectLink(id: string, request: ConsoleRequest, deps: ConsoleDependencies): Promise<AdminAnswer> {
  const body = v.safeParse(linkSchema, request.body ?? {});
  if (!body.success) return invalid(describeFirstIssue(body.issues));
  const served = await servedOrAnswer(id, deps);
  if ('status' in served) return served;
  const { secrets } = deps.admin;
  if (!secrets) return { status: 501, body: { error: 'no secret store here' } };
  const secretRef = served.connection.secretRef;
  const current = ((await secrets.read(secretRef)) ?? {}) as Record<string, unknown>;
  const next = { ...current };
  const saved: string[] = [];
  if (body.output.interviewApiKey) {
    next.interviewApiKey = body.output.interviewApiKey;
    saved.push('interviewApiKey');
  }
  if (typeof next.interviewWebhookToken !== 'string') {
    next.interviewWebhookToken = randomBytes(24).toString('hex');
    saved.push('interviewWebhookToken');
  }
  if (typeof next.interviewApiKey !== 'string')
    return invalid({
      field: 'interviewApiKey',
      message: `interviewApiKey: secret ${secretRef} has no interview-service key yet: give the customer's`,
    });
  // Only what this link sets, over the secret as it is then: a change made meanwhile is kept.
  await writeFields(secrets, secretRef, Object.fromEntries(saved.map((field) => [field, next[field]])));
  const token = randomBytes(32).toString('base64url');
  const now = (deps.now ?? Date.now)();
  const expiresAt = now + CONNECT_LINK_DAYS * 86_400_000;
  const replaced = await deps.activity.putLink(linkHash(token), {
    connectionId: id,
    createdBy: request.principal,
    createdAt: now,
    validUntil: expiresAt,
    connectionVersion: served.stored.version,
    connectionCreatedAt: served.stored.createdAt,
  });
  // One live link a connection: the one it replaces is spent (false: already used or expired).
  const revoked = replaced !== undefined && (await deps.activity.useLink(replaced, now));
  const made =
    `connect link made by ${request.principal}` +
    (saved.length ? `, with ${saved.join(' and ')} saved in ${secretRef}` : '') +
    (revoked ? '; the one before it no longer works' : '');
  await deps.activity.addTimeline([operatorEntry(id, now, made)]);
  return { status: 201, body: { connectionId: id, token, path: `#/connect/${token}`, expiresAt, revoked } };
}

/** One candidate's application(s) under the connection and their timeline; the e-mail masked unless asked for. */
async function candidate(request: ConsoleRequest, rest: string[], deps: ConsoleDependencies): Promise<AdminAnswer> {
  const [connectionId, applicationId] = rest;
  if (!connectionId || !applicationId || rest.length !== 2) return notFound();
  const reveal = request.query.reveal === 'email';
  const [records, timeline] = await Promise.all([
    deps.applications.findApplicationsByAtsId(connectionId, applicationId),
    deps.activity.timeline(connectionId, applicationId),
  ]);
  if (!records.length && !timeline.length)
    return { status: 404, body: { error: `no application ${applicationId} for connection ${connectionId}` } };
  if (reveal) {
    const at = (deps.now ?? Date.now)();
    await deps.activity.addTimeline([
      {
        connectionId,
        atsApplicationId: applicationId,
        at,
        kind: 'operator',
        detail: `e-mail shown to ${request.principal}`,
      },
      operatorEntry(connectionId, at, `e-mail of application ${applicationId} shown to ${request.principal}`),
    ]);
  }
  const applications = records.map((r) => applicationView(r, reveal));
  return { status: 200, body: { connectionId, applicationId, applications, timeline } };
}

/** An application as the console shows it: the e-mail masked (k•••@example.com) unless revealed; no lease. */
export function applicationView(record: ApplicationRecord, reveal: boolean): Record<string, unknown> {
  const { leaseOwner: _owner, leaseUntil: _until, candidateEmail, candidateInviteUrl: _link, ...rest } = record;
  return { ...rest, candidateEmail: candidateEmail && (reveal ? candidateEmail : maskEmail(candidateEmail)) };
}

export function maskEmail(email: string): string {
  const at = email.indexOf('@');
  if (at < 1) return '•••';
  return `${email[0]}•••${email.slice(at)}`;
}

async function failures(request: ConsoleRequest, rest: string[], deps: ConsoleDependencies): Promise<AdminAnswer> {
  const [what] = rest;
  const { deadLetters } = deps;
  if (what === undefined && request.method === 'GET') {
    const queues = await Promise.all(
      QUEUE_NAMES.map(async (queue) => {
        // Counted before the peek: SQS counts only the messages not hidden, and a peek hides those it reads.
        const count = await deadLetters.count(queue);
        const messages = await deadLetters.peek(queue);
        return [queue, { count, groups: await groupByReason(messages, deps) }] as const;
      }),
    );
    const audit = await deps.activity.timeline('(operators)', '(audit)');
    return { status: 200, body: { deadLetters: Object.fromEntries(queues), audit: audit.slice(-100).reverse() } };
  }
  if (what === 'redrive' && request.method === 'GET') {
    const queue = request.query.queue;
    if (queue !== 'stage' && queue !== 'report') return invalid({ field: 'queue', message: 'queue: stage or report' });
    const [count, last] = await Promise.all([deadLetters.count(queue), deadLetters.redriveStatus(queue)]);
    return { status: 200, body: { queue, count, lastRedrive: last } };
  }
  if (what === 'redrive' && request.method === 'POST') {
    const body = v.safeParse(redriveSchema, request.body);
    if (!body.success) return invalid(describeFirstIssue(body.issues));
    const { queue, expected } = body.output;
    const result = await deadLetters.redrive(queue, expected);
    if (!result.started)
      return {
        status: 409,
        body: { error: `the ${queue} DLQ holds ${result.count} now, not ${expected}: look again`, count: result.count },
      };
    await audit(deps, request.principal, `redrove ${result.count} message(s) of the ${queue} DLQ`);
    return { status: 202, body: { queue, moving: result.count } };
  }
  if (what === 'retry' && request.method === 'POST') {
    const body = v.safeParse(retrySchema, request.body);
    if (!body.success) return invalid(describeFirstIssue(body.issues));
    const { queue, messageId } = body.output;
    if (!(await deadLetters.retry(queue, messageId)))
      return { status: 404, body: { error: `message ${messageId} is not in the ${queue} DLQ (moved or retried)` } };
    await audit(deps, request.principal, `retried message ${messageId} of the ${queue} DLQ`);
    return { status: 200, body: { queue, messageId, retried: true } };
  }
  return notFound();
}

/** The DLQ's messages grouped by their kind and the last failure the timeline recorded for their application. */
async function groupByReason(messages: DeadLetter[], deps: ConsoleDependencies) {
  const reasons = await Promise.all(
    messages.map(async (m) => {
      if (!m.atsApplicationId) return 'no application named';
      const timeline = await deps.activity.timeline(m.connectionId, m.atsApplicationId).catch(() => []);
      const last = timeline.filter((e) => e.kind === 'dead-lettered' || e.kind === 'attempt-failed').at(-1);
      return last?.code ?? 'no failure recorded';
    }),
  );
  const groups = new Map<string, { kind: string; reason: string; messages: DeadLetter[] }>();
  messages.forEach((m, i) => {
    const reason = reasons[i] as string;
    const key = `${m.kind}\u0000${reason}`;
    const group = groups.get(key) ?? { kind: m.kind, reason, messages: [] };
    group.messages.push(m);
    groups.set(key, group);
  });
  return [...groups.values()].sort((a, b) => b.messages.length - a.messages.length);
}

const operatorEntry = (connectionId: string, at: number, detail: string): TimelineEntry => ({
  connectionId: '(operators)',
  atsApplicationId: '(audit)',
  at,
  kind: 'operator',
  detail: `${connectionId}: ${detail}`,
});

/** A change to one connection by a connect link, in the operators' audit (names and outcomes, never a value). */
export async function auditConnection(
  deps: Pick<ConsoleDependencies, 'activity' | 'now'>,
  connectionId: string,
  detail: string,
): Promise<void> {
  await deps.activity.addTimeline([operatorEntry(connectionId, (deps.now ?? Date.now)(), detail)]);
}

async function audit(deps: ConsoleDependencies, principal: string, what: string): Promise<void> {
  const at = (deps.now ?? Date.now)();
  await deps.activity.addTimeline([
    { connectionId: '(operators)', atsApplicationId: '(audit)', at, kind: 'operator', detail: `${principal} ${what}` },
  ]);
}

const invalid = (issue: { field: string; message: string }): AdminAnswer => ({
  status: 400,
  body: { error: issue.message, field: issue.field },
});
const notFound = (): AdminAnswer => ({ status: 404, body: { error: 'no such route' } });
