import * as v from 'valibot';
import { randomBytes } from 'node:crypto';
import type { Connection } from '../config';
import { connectionSchema } from '../config/connection.schema';
import { writeFields } from '../config/secret-store';
import type { CheckLine } from '../doctor/lines';
import { GREENHOUSE_WEBHOOK_STEPS, webhookUrls } from '../doctor/checks';
import { describeFirstIssue } from '../validation';
import { errorMessage, OutwardCallError } from '../errors';
import { VersionConflictError } from '../mapping/connections.records';
import type { AdminAnswer } from './connection-admin';
import { auditConnection, type ConsoleDependencies, linkHash, runDoctor, servedOrAnswer, stages } from './console-api';

export interface ConnectDependencies extends ConsoleDependencies {
  /** The connector's base URL, which the ATS's webhooks are sent to. */
  apiUrl: string;
  /** One read only working credentials allow (the adapter's `probeAccess`): what it read, or the ATS's refusal. */
  probe(connection: Connection): Promise<string>;
  /** Registers the connector's webhooks through the ATS's API (shared/doctor/register.ts). */
  registerWebhooks(connection: Connection): Promise<CheckLine[]>;
}

const PROVIDER_SIDE =
  "the connector could not do this on your provider's side; they see why in their console: try again later";

/**
 * What the customer reads of a failure: what their own ATS answered (an `OutwardCallError`: a refusal, no answer),
 * whole; anything else is the provider's side (the connection's secret unreadable, a store, a fault): the customer
 * reads that their provider sees why, and the operator reads the detail in the console's audit.
 */
async function customerError(error: unknown, ats: string, what: string, run: Run): Promise<string> {
  if (error instanceof OutwardCallError) return `${ats}: ${errorMessage(error)}`;
  await auditConnection(run.deps, run.connectionId, `connect link: ${what} failed: ${errorMessage(error)}`).catch(
    () => undefined,
  );
  return PROVIDER_SIDE;
}

/** A connect request's dependencies and connection. */
interface Run {
  deps: ConnectDependencies;
  connectionId: string;
}

/** The credentials each ATS's connect page asks for, as the connection's secret names them. */
export const CREDENTIAL_FIELDS: Record<Connection['ats'], readonly string[]> = {
  greenhouse: ['atsClientId', 'atsClientSecret'],
  ashby: ['atsApiKey'],
  lever: ['atsApiKey'],
  workable: ['atsApiKey'],
  // The Kombo API key is the connector's operator's; the customer connects their ATS to Kombo through Kombo Connect.
  kombo: [],
};

const secretText = v.pipe(v.string('must be text'), v.trim(), v.nonEmpty('is required'), v.maxLength(2000));
const credentialsSchema = v.object({
  atsApiKey: v.optional(secretText),
  atsClientId: v.optional(secretText),
  atsClientSecret: v.optional(secretText),
  /** Greenhouse signs with a key the customer types into it: the page makes one, shows it, and sends it here. */
  atsWebhookSecret: v.optional(v.pipe(secretText, v.minLength(24, 'must be at least 24 characters'))),
});
const triggerSchema = v.object({
  triggerId: v.pipe(v.string(), v.nonEmpty('is required')),
  stageName: v.pipe(v.string(), v.trim(), v.nonEmpty('is required'), v.maxLength(200)),
  stageId: v.optional(v.pipe(v.string(), v.maxLength(200))),
});

/** A link unknown, used, expired, or of a connection made again since: one answer, telling none from the other. */
const linkGone = (): AdminAnswer => ({
  status: 404,
  body: { error: 'this link has expired or was used: ask for a new one' },
});

/**
 * A customer's connect page (`/connect-api/<token>/...`): the one-time link's token is its only credential, found by
 * its hash while unused and unexpired, and it reaches only its own connection. The customer's credentials are written
 * into the connection's secret and never answered back; the page picks the stage that invites and the interview it
 * sends, registers the webhooks (or shows the ATS's own steps), runs the doctor, and finishes, which spends the link.
 */
export async function handleConnectRequest(
  request: { method: string; token: string; path: string[]; query: Record<string, string | undefined>; body: unknown },
  deps: ConnectDependencies,
): Promise<AdminAnswer> {
  const now = (deps.now ?? Date.now)();
  const hash = linkHash(request.token);
  const link = await deps.activity.link(hash, now);
  if (!link) return linkGone();
  const served = await servedOrAnswer(link.connectionId, deps);
  if ('status' in served) return served;
  // A connection deleted and made again under the same id was made at another time, and starts its versions again:
  // the old link is not its (a link made before either was recorded is held by what it recorded).
  const madeAgain =
    (link.connectionCreatedAt !== undefined && served.stored.createdAt !== link.connectionCreatedAt) ||
    (link.connectionVersion !== undefined && served.stored.version < link.connectionVersion);
  if (madeAgain) return linkGone();
  const { connection } = served;
  const principal = `connect-link:${connection.id}`;
  const [what, ...rest] = request.path;
  if (rest.length) return notFound();
  const run: Run = { deps, connectionId: connection.id };
  try {
    if (what === undefined && request.method === 'GET') return await summary(connection, link.validUntil, deps);
    if (what === 'credentials' && request.method === 'POST') return await credentials(connection, request.body, run);
    if (what === 'stages' && request.method === 'GET')
      return await stages(connection.id, request.query.job, deps, (error) =>
        customerError(error, connection.ats, 'reading the stages', run),
      );
    if (what === 'trigger' && request.method === 'POST') return await trigger(served, request.body, principal, deps);
    if (what === 'webhooks' && request.method === 'POST') return await webhooks(connection, run);
    if (what === 'doctor' && request.method === 'POST')
      return customersView(await runDoctor(connection.id, principal, deps), connection);
    if (what === 'finish' && request.method === 'POST') return await finish(connection, hash, now, run);
  } catch (error) {
    // A connection changed since it was read is the caller's to read again: the handler answers it 409, as the console.
    if (error instanceof VersionConflictError) throw error;
    const said = await customerError(error, connection.ats, what ?? 'the page', run);
    return { status: 502, body: { error: said } };
  }
  return notFound();
}

/** The connector's webhooks registered through the ATS's API, each line as the ATS answered; in the audit. */
async function webhooks(connection: Connection, run: Run): Promise<AdminAnswer> {
  let lines: CheckLine[];
  try {
    lines = await run.deps.registerWebhooks(connection);
  } catch (error) {
    return { status: 502, body: { error: await customerError(error, connection.ats, 'registering webhooks', run) } };
  }
  const failed = lines.filter((line) => line.status === 'fail').length;
  await auditConnection(run.deps, connection.id, `connect link: registered the webhooks (${failed} failed)`);
  return { status: 200, body: { lines: lines.map((line) => scrubbed(line, connection)) } };
}

/** Fixes that speak of the provider's own store: the customer cannot act on them. */
const PROVIDER_STORE = /Secrets Manager|secrets file|cannot be read/i;

/** A line as the customer reads it: the provider's secret named as such, never by its name, its store or its error. */
function scrubbed(line: CheckLine, connection: Connection): CheckLine {
  const named = (text: string) => text.split(connection.secretRef).join("your provider's secret");
  const internal = PROVIDER_STORE.test(`${line.what} ${line.fix ?? ''}`);
  const fix = line.fix && (internal ? 'your provider sees why in their console' : named(line.fix));
  return { ...line, what: named(line.what), ...(fix ? { fix } : {}) };
}

/**
 * The doctor's lines as the customer reads them: their own (credentials, stages, webhooks) whole; the provider's side
 * (the connection's settings, the interview service, SES, order sources) as one line, without what its fixes say of
 * secrets and commands. The operator's console keeps every line (runDoctor stores them).
 */
function customersView(answer: AdminAnswer, connection: Connection): AdminAnswer {
  const lines = (answer.body as { lines?: CheckLine[] }).lines;
  if (answer.status !== 200 || !lines) return answer;
  const theirs = lines.filter((line) => line.provider);
  // The operator's command to register the webhooks is the page's button for the customer.
  const own = lines
    .filter((line) => !line.provider)
    .map((line) =>
      line.fix?.includes('--register-webhooks')
        ? { ...line, fix: 'press "Register the webhooks" in step 3' }
        : scrubbed(line, connection),
    );
  const failed = theirs.filter((line) => line.status === 'fail').length;
  const summary: CheckLine = failed
    ? { status: 'fail', what: `${failed} of your provider's checks failed: they see which in their console` }
    : { status: 'pass', what: `your provider's side: ${theirs.length} checks, none failed` };
  return { ...answer, body: { ...answer.body, lines: [...own, summary] } };
}

/** The ATSs whose webhooks the connector registers through their API (the connect page's Register button). */
const REGISTERED_BY_API: ReadonlySet<Connection['ats']> = new Set(['ashby', 'lever', 'workable']);

/**
 * How the customer's ATS reaches the connector: registered through its API, typed into Greenhouse by hand, or, for an
 * ATS behind Kombo, through the operator's Kombo account (its webhook made once in Kombo's dashboard).
 */
function webhookSteps(connection: Connection, url: string) {
  if (REGISTERED_BY_API.has(connection.ats))
    return {
      registration: 'api' as const,
      steps: [`The connector registers its webhooks in ${connection.ats} through its API when you press Register.`],
    };
  if (connection.ats === 'kombo')
    return {
      registration: 'none' as const,
      steps: [
        "Your ATS reaches the connector through Kombo: its changes come through the connector's Kombo account, so " +
          'there is nothing to register here.',
      ],
    };
  return {
    registration: 'by-hand' as const,
    steps: GREENHOUSE_WEBHOOK_STEPS.map((s) =>
      s.replace('{url}', url).replace('{secret}', 'the secret key shown here'),
    ),
  };
}

async function summary(connection: Connection, expiresAt: number, deps: ConnectDependencies): Promise<AdminAnswer> {
  const url = webhookUrls(deps.apiUrl, connection.id).ats;
  // Greenhouse's key was made in the customer's browser and saved: a page opened again says so (never shows it).
  const secret = connection.ats === 'greenhouse' ? await deps.admin.secrets?.read(connection.secretRef) : undefined;
  const webhookSecretSaved =
    typeof (secret as { atsWebhookSecret?: unknown } | undefined)?.atsWebhookSecret === 'string';
  return {
    status: 200,
    body: {
      connectionId: connection.id,
      ats: connection.ats,
      expiresAt,
      credentials: CREDENTIAL_FIELDS[connection.ats],
      triggers: connection.triggers.map((t) => ({
        id: t.id,
        stage: t.stage,
        interview: t.interview.namePattern ?? t.id,
        questions: t.interview.questions.length,
      })),
      webhook: { url, ...webhookSteps(connection, url), ...(webhookSecretSaved ? { secretSaved: true } : {}) },
    },
  };
}

/**
 * Finishing spends the link, once the ATS answers with the credentials the secret holds: a customer who finishes
 * with none saved, or with ones the ATS refuses, keeps the link to fix them (409), and the operator is not told of a
 * connection that cannot work.
 */
async function finish(connection: Connection, hash: string, now: number, run: Run) {
  const { deps } = run;
  const secret = ((await deps.admin.secrets?.read(connection.secretRef)) ?? {}) as Record<string, unknown>;
  if (CREDENTIAL_FIELDS[connection.ats].some((field) => typeof secret[field] !== 'string'))
    return { status: 409, body: { error: 'Save your ATS credentials in step 1 first, then finish' } };
  try {
    await deps.probe(connection);
  } catch (error) {
    const why = await customerError(error, connection.ats, 'finishing', run);
    return {
      status: 409,
      body: {
        error:
          `Your ATS does not answer with the credentials saved yet (${why}): ` +
          'save ones that work in step 1, then finish',
      },
    };
  }
  if (!(await deps.activity.useLink(hash, now)))
    return { status: 404, body: { error: 'this link has expired or was used' } };
  await auditConnection(deps, connection.id, 'connect link: finished, and spent');
  return { status: 200, body: { connectionId: connection.id, finished: true } };
}

/**
 * The customer's ATS credentials, written into the connection's secret and tried once; never answered back. The audit
 * names the fields saved and what the ATS answered, never a value.
 */
async function credentials(connection: Connection, body: unknown, run: Run): Promise<AdminAnswer> {
  const { deps } = run;
  const parsed = v.safeParse(credentialsSchema, body);
  if (!parsed.success) return invalid(describeFirstIssue(parsed.issues));
  const given = parsed.output as Record<string, string | undefined>;
  for (const field of CREDENTIAL_FIELDS[connection.ats])
    if (!given[field]) return invalid({ field, message: `${field}: is required for ${connection.ats}` });
  // Only Greenhouse's key is the customer's (typed into its webhooks); the others' the connector or the operator sets.
  if (connection.ats !== 'greenhouse' && given.atsWebhookSecret)
    return invalid({
      field: 'atsWebhookSecret',
      message: `atsWebhookSecret: not taken for ${connection.ats}, whose webhooks are signed with a secret set for you`,
    });
  const { secrets } = deps.admin;
  if (!secrets) return { status: 501, body: { error: 'no secret store here' } };
  const current = ((await secrets.read(connection.secretRef)) ?? {}) as Record<string, unknown>;
  // Greenhouse's key is the customer's to type into its webhooks: a first save needs one; a later save keeps the one
  // saved unless it gives a new one.
  if (connection.ats === 'greenhouse' && !given.atsWebhookSecret && typeof current.atsWebhookSecret !== 'string')
    return invalid({
      field: 'atsWebhookSecret',
      message: 'atsWebhookSecret: the key typed into Greenhouse is required',
    });
  const next: Record<string, unknown> = { ...current };
  for (const field of [...CREDENTIAL_FIELDS[connection.ats], 'atsWebhookSecret'])
    if (given[field]) next[field] = given[field];
  // The ATSs registered through their API sign with a secret the connector chooses when it registers the webhooks;
  // Kombo signs with its account's secret, which the operator put in the secret: never replaced by a random one.
  if (REGISTERED_BY_API.has(connection.ats) && typeof next.atsWebhookSecret !== 'string')
    next.atsWebhookSecret = randomBytes(32).toString('hex');
  const names = Object.keys(next).filter((field) => next[field] !== current[field]);
  // Only the fields this save changes are written, over the secret as it is then (and put back so, below): a key an
  // operator rotates while the ATS is being asked is kept.
  const changes = Object.fromEntries(names.map((field) => [field, next[field]]));
  const before = Object.fromEntries(names.map((field) => [field, current[field]]));
  await writeFields(secrets, connection.secretRef, changes);
  const saved = (outcome: string) =>
    auditConnection(deps, connection.id, `connect link: saved ${names.join(', ') || 'no change'}; ${outcome}`);
  const first = await tried(connection, run);
  if (first.works) {
    await saved('the ATS takes them');
    return { status: 200, body: { saved: true, works: true, what: first.what } };
  }
  // A typo must not undo credentials that worked: those saved before are put back where the ATS still takes them.
  const fields = CREDENTIAL_FIELDS[connection.ats];
  if (fields.length && fields.every((field) => typeof current[field] === 'string')) {
    await writeFields(secrets, connection.secretRef, before);
    if ((await tried(connection, run)).works) {
      await saved('the ATS refused them: the ones saved before are put back');
      return {
        status: 200,
        body: { saved: false, works: false, error: `${first.error}; the credentials saved before are kept: they work` },
      };
    }
    await writeFields(secrets, connection.secretRef, changes);
  }
  await saved('the ATS refuses them');
  return { status: 200, body: { saved: true, works: false, error: first.error } };
}

/** The ATS tried with the secret as it is now: what it answered, or its refusal naming the ATS. */
async function tried(
  connection: Connection,
  run: Run,
): Promise<{ works: true; what: string } | { works: false; error: string }> {
  try {
    return { works: true, what: await run.deps.probe(connection) };
  } catch (error) {
    return { works: false, error: await customerError(error, connection.ats, 'trying the credentials', run) };
  }
}

/** The stage that invites, set on the trigger (the interview) the customer picked. */
async function trigger(
  served: Exclude<Awaited<ReturnType<typeof servedOrAnswer>>, AdminAnswer>,
  body: unknown,
  principal: string,
  deps: ConnectDependencies,
): Promise<AdminAnswer> {
  const parsed = v.safeParse(triggerSchema, body);
  if (!parsed.success) return invalid(describeFirstIssue(parsed.issues));
  const { triggerId, stageName } = parsed.output;
  const document = served.stored.document as { triggers: { id: string; stage: unknown }[] };
  if (!document.triggers.some((t) => t.id === triggerId))
    return invalid({ field: 'triggerId', message: `triggerId: ${served.connection.id} has no interview ${triggerId}` });
  const triggers = document.triggers.map((t) => (t.id === triggerId ? { ...t, stage: { name: stageName } } : t));
  const checked = v.safeParse(connectionSchema, { ...document, triggers });
  if (!checked.success) return invalid(describeFirstIssue(checked.issues, { prefix: 'connection' }));
  const next = { document: { ...document, triggers }, enabled: served.stored.enabled, changed: ['triggers'] };
  const change = { principal, action: 'patch' as const, expectedVersion: served.stored.version };
  const stored = await deps.admin.store.write(served.connection.id, next, change, served.stored);
  return { status: 200, body: { connectionId: served.connection.id, version: stored.version, triggerId, stageName } };
}

const invalid = (issue: { field: string; message: string }): AdminAnswer => ({
  status: 400,
  body: { error: issue.message, field: issue.field },
});
const notFound = (): AdminAnswer => ({ status: 404, body: { error: 'no such route' } });
