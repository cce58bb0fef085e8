import * as v from 'valibot';
import { AtsError, ATS_ERROR_CODES } from '../ats';
import { createSetupAdapter, type SetupAdapter } from '../ats/setup-adapter';
import { connectionSecretsSchema, missingAtsSecret, type Connection, type ConnectionSecrets } from '../config';
import { secretEquals } from '../http/signature';
import { InterviewServiceClient, InterviewServiceError } from '../interview-service';
import { describeFirstIssue } from '../validation';
import { atsFix, errorText, fail, info, pass, providers, type CheckLine } from './lines';
import { DEFAULT_JOBS_FOR_ALL, stageLines } from './stages';
import type { SecretStore } from '../config/secret-store';
import { orderSourceLines } from './orders';
import { type KomboCapabilityReader, komboLines } from './kombo';
import { KomboAdapter } from '../ats/kombo/kombo.adapter';
import type { ApplicationRecord } from '../pipeline/records';

export interface DoctorDependencies {
  secrets: SecretStore;
  /** The connector's base URL: the stack's `ApiUrl`, or the local gateway. */
  apiUrl: string;
  fetch?: typeof fetch;
  /** On AWS: checks that SES may send as the sender; absent on one machine, where SES is a stand-in. */
  sesSender?: ((address: string) => Promise<CheckLine>) | undefined;
  /** The deployment's default sender (`deploy.mailFrom`). */
  mailFrom?: string | undefined;
  /** How many of the ATS's open jobs a trigger for "all" jobs is checked against, every page read (default 500). */
  jobsForAll?: number;
  sleep?: (ms: number) => Promise<void>;
  /** The connector's own records of an application (its mapping table): the dry run says what was done already. */
  applicationRecords?: ((connectionId: string, atsApplicationId: string) => Promise<ApplicationRecord[]>) | undefined;
}

export type { SetupAdapter } from '../ats/setup-adapter';

/** The URLs this connection's webhooks must point at; the interview one ends in the connection's secret token. */
export const webhookUrls = (apiUrl: string, connectionId: string) => ({
  ats: `${apiUrl.replace(/\/+$/, '')}/webhooks/ats/${connectionId}`,
  interviewPrefix: `${apiUrl.replace(/\/+$/, '')}/webhooks/interview/${connectionId}/`,
});

/** Greenhouse's Dev Center steps, one whole sentence each: `{url}` the webhook URL, `{secret}` where the key is. */
export const GREENHOUSE_WEBHOOK_STEPS = [
  'Greenhouse has no API for webhooks: in Greenhouse, open Configure → Dev Center → Web Hooks → Web Hooks.',
  'Create one webhook per event: "Candidate or Prospect Stage Change", "Candidate/Prospect Rejected", ' +
    '"Candidate/Prospect Unrejected", "Candidate Hired", "Candidate Unhired", "Delete Application", ' +
    '"Delete Candidate", "Merge Candidate" and "Candidate Anonymized", ' +
    'each with Endpoint URL {url} and Secret key {secret}.',
  'A webhook whose first ping fails is created disabled: check each is enabled in that list.',
];

/** Waits out an ATS's rate limit a few times (a doctor run shares the account's budget with the pipeline). */
export async function patiently<T>(work: () => Promise<T>, sleep: (ms: number) => Promise<void>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof AtsError) || error.code !== ATS_ERROR_CODES.rateLimited || attempt >= 4) throw error;
      await sleep(Math.min(30_000, Math.max(500, error.retryAfterMs ?? 1000)));
    }
  }
}

/** The connection's secret, read and checked field by field; a failure line when it cannot be used. */
export async function readSecret(
  connection: Connection,
  store: SecretStore,
): Promise<{ secrets: ConnectionSecrets; raw: Record<string, unknown> } | { line: CheckLine }> {
  let raw: unknown;
  try {
    raw = await store.read(connection.secretRef);
  } catch (error) {
    return { line: fail(`secret ${connection.secretRef} cannot be read`, `${errorText(error)} (${store.where})`) };
  }
  if (raw === undefined)
    return {
      line: fail(
        `secret ${connection.secretRef} does not exist`,
        `create it in ${store.where} as a JSON object with interviewApiKey, interviewWebhookToken and the ATS's fields`,
      ),
    };
  const parsed = v.safeParse(connectionSecretsSchema, raw);
  if (!parsed.success)
    return {
      line: fail(
        `secret ${connection.secretRef}: ${describeFirstIssue(parsed.issues).message}`,
        `correct that field in ${store.where}`,
      ),
    };
  const missing = missingAtsSecret(connection.ats, parsed.output);
  if (missing)
    return {
      line: fail(
        `secret ${connection.secretRef} lacks ${missing}`,
        `add ${missing} to the secret in ${store.where} (${connection.ats} needs it)`,
      ),
    };
  return { secrets: parsed.output, raw: raw as Record<string, unknown> };
}

/** Every check of one connection, in order; a check that needs an earlier one to pass is left out when it failed. */
export async function diagnoseConnection(connection: Connection, deps: DoctorDependencies): Promise<CheckLine[]> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const lines: CheckLine[] = [];
  const secret = await readSecret(connection, deps.secrets);
  if ('line' in secret) return providers([secret.line, info('the other checks need the secret: fix it first')]);
  lines.push(...providers([pass(`secret ${connection.secretRef} has every field ${connection.ats} needs`)]));
  const { secrets } = secret;
  const ats = createSetupAdapter(connection, secrets, deps.fetch ? { fetch: deps.fetch } : {});
  const atsCall = <T>(work: () => Promise<T>) => patiently(work, sleep);

  let atsWorks = false;
  try {
    const what = await atsCall(() => ats.probeAccess());
    lines.push(pass(`${connection.ats} credentials work (${what})`));
    atsWorks = true;
  } catch (error) {
    lines.push(fail(`${connection.ats} credentials: ${errorText(error)}`, atsFix(connection, error)));
  }
  if (atsWorks) {
    lines.push(...providers([await userLine(connection, ats, atsCall)]));
    lines.push(...(await permissionLines(connection, ats, atsCall)));
    lines.push(...(await stageLines(connection, ats, atsCall, deps.jobsForAll ?? DEFAULT_JOBS_FOR_ALL)));
    const kombo = komboReader(ats);
    if (kombo) lines.push(...(await atsCall(() => komboLines(connection, kombo))));
  } else lines.push(info('the stage and webhook checks need working ATS credentials'));

  lines.push(...providers(await interviewServiceLines(connection, secrets, deps)));
  if (atsWorks) lines.push(...(await atsWebhookLines(connection, secrets, { ats, atsCall }, deps.apiUrl)));
  lines.push(...providers(await orderSourceLines(connection, secrets, ats, deps)));
  lines.push(...providers(await senderLines(connection, deps)));
  return lines;
}

/** The SES senders the connection's invitations use: verified, or why they cannot be checked here. */
async function senderLines(connection: Connection, deps: DoctorDependencies): Promise<CheckLine[]> {
  const senders = new Set(
    [deps.mailFrom, ...connection.triggers.map((t) => t.invite.from)].filter((s): s is string => Boolean(s)),
  );
  const needsMail = connection.triggers.some((t) => t.invite.email);
  if (!needsMail) return [info('no trigger e-mails invites: no SES sender to check')];
  if (!deps.sesSender) return [info('SES sender not checked on one machine (run with --aws)')];
  const lines: CheckLine[] = [];
  for (const sender of senders) lines.push(await deps.sesSender(sender));
  return lines;
}

async function userLine(
  connection: Connection,
  ats: SetupAdapter,
  atsCall: <T>(work: () => Promise<T>) => Promise<T>,
): Promise<CheckLine> {
  try {
    const user = await atsCall(() => ats.probeUser());
    if (user.ok) return pass(`notes and moves are written as ${user.what}`);
    if (!user.checkable) return info(user.reason);
    return fail(user.reason, `set atsUserId of connection ${connection.id} to a user the ATS has`);
  } catch (error) {
    return fail(`the configured user (atsUserId) cannot be checked: ${errorText(error)}`, atsFix(connection, error));
  }
}

/**
 * Each permission the connection's features need: a harmless read shows it where the ATS allows one (a refusal
 * names the permission and the feature it stops); the others are listed to grant, as no read can show them.
 */
async function permissionLines(
  connection: Connection,
  ats: SetupAdapter,
  atsCall: <T>(work: () => Promise<T>) => Promise<T>,
): Promise<CheckLine[]> {
  const lines: CheckLine[] = [];
  const unchecked: string[] = [];
  for (const required of ats.requiredPermissions({
    statusTags: connection.writeBack.status === 'tags',
    reportFile: connection.writeBack.attachReport !== false,
  })) {
    const { probe, permission, feature } = required;
    if (!probe) {
      unchecked.push(`${permission} (${feature})`);
      continue;
    }
    try {
      await atsCall(() => probe());
      lines.push(pass(`permission ${permission} (${feature})`));
    } catch (error) {
      const refused =
        error instanceof AtsError &&
        (error.code === ATS_ERROR_CODES.forbidden || error.code === ATS_ERROR_CODES.unauthorized);
      lines.push(
        refused
          ? fail(
              `permission ${permission} is missing: ${feature} would be refused`,
              `grant ${permission} to the connection's ${connection.ats} credentials`,
            )
          : fail(`permission ${permission} could not be checked: ${errorText(error)}`, atsFix(connection, error)),
      );
    }
  }
  if (unchecked.length)
    lines.push(info(`not checkable by a read; make sure these are granted: ${unchecked.join(', ')}`));
  return lines;
}

/** A Kombo connection's capability table, where the adapter is Kombo's. */
const komboReader = (ats: SetupAdapter): KomboCapabilityReader | undefined =>
  ats instanceof KomboAdapter ? ats : undefined;

/** The key works, may read reports, and the service will call this connection back. */
async function interviewServiceLines(
  connection: Connection,
  secrets: ConnectionSecrets,
  deps: DoctorDependencies,
): Promise<CheckLine[]> {
  const client = new InterviewServiceClient({
    baseUrl: connection.interviewService.baseUrl,
    apiKey: secrets.interviewApiKey,
    timeoutMs: connection.interviewService.timeoutMs,
    retry: { maxAttempts: 2 },
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  const lines: CheckLine[] = [];
  const keyFix = (error: unknown) =>
    error instanceof InterviewServiceError && error.code === 'wrong-base-url'
      ? `check interviewService.baseUrl (${connection.interviewService.baseUrl}): the key was not even looked at`
      : `put a working interviewApiKey in secret ${connection.secretRef}`;
  try {
    await client.listInterviews({ limit: 1 });
    lines.push(pass('interview service: the key works (GET /interviews)'));
  } catch (error) {
    lines.push(fail(`interview service: ${errorText(error)}`, keyFix(error)));
    return lines;
  }
  try {
    await client.listReports({ limit: 1 });
    lines.push(pass('interview service: the key may read reports (GET /interview/reports)'));
  } catch (error) {
    lines.push(
      fail(
        `interview service: reports: ${errorText(error)}`,
        'ask the interview service for a key with permission for reports: without it no result is written back',
      ),
    );
  }
  lines.push(
    await interviewWebhookLine(client, connection, secrets, deps.apiUrl).catch((error: unknown) =>
      fail(`interview service: webhooks cannot be listed: ${errorText(error)}`, keyFix(error)),
    ),
  );
  return lines;
}

/** The service's interview_report.created webhook points at this connection, with its token. */
async function interviewWebhookLine(
  client: InterviewServiceClient,
  connection: Connection,
  secrets: ConnectionSecrets,
  apiUrl: string,
): Promise<CheckLine> {
  const { interviewPrefix } = webhookUrls(apiUrl, connection.id);
  const expected = `${interviewPrefix}${secrets.interviewWebhookToken}`;
  const registerSteps =
    'in the interview service\'s settings, add a webhook for "interview_report.created" with the URL that ' +
    `npm run ops -- urls prints for ${connection.id}, its last segment the interviewWebhookToken of secret ` +
    connection.secretRef;
  const webhooks = (await client.listWebhooks()).filter((w) => w.event === 'interview_report.created');
  const ours = webhooks.filter((w) => w.url.startsWith(interviewPrefix));
  // The token is compared in constant time and never printed.
  const exact = ours.find((w) => secretEquals(expected, w.url));
  if (!ours.length)
    return fail('interview service: no interview_report.created webhook points at this connection', registerSteps);
  if (!exact)
    return fail(
      'interview service: the webhook for this connection carries another token',
      `the token is the last segment of its URL: ${registerSteps}`,
    );
  if (exact.status && exact.status !== 'active')
    return fail(`interview service: the webhook is ${exact.status}`, "enable it in the service's settings");
  return pass('interview service: the interview_report.created webhook points at this connection');
}

/** Each event the connector needs the ATS to send, registered at this connection's URL and enabled. */
async function atsWebhookLines(
  connection: Connection,
  secrets: ConnectionSecrets,
  access: { ats: SetupAdapter; atsCall: <T>(work: () => Promise<T>) => Promise<T> },
  apiUrl: string,
): Promise<CheckLine[]> {
  const { ats, atsCall } = access;
  const url = webhookUrls(apiUrl, connection.id).ats;
  if (connection.ats === 'kombo')
    return [
      info(
        "Kombo's webhooks are made in its dashboard, one per Kombo account",
        `add ${url} for data-changed, its signing secret as atsWebhookSecret of secret ${connection.secretRef}`,
      ),
    ];
  const listWebhooks = ats.listWebhooks?.bind(ats);
  if (!listWebhooks)
    return [
      info(
        `${connection.ats} webhooks cannot be checked through its API`,
        GREENHOUSE_WEBHOOK_STEPS.join('\n')
          .replace('{url}', url)
          .replace('{secret}', `the atsWebhookSecret of secret ${connection.secretRef}`),
      ),
    ];
  let registered: Awaited<ReturnType<typeof listWebhooks>>;
  try {
    registered = await atsCall(() => listWebhooks(secrets.atsWebhookIds ?? {}));
  } catch (error) {
    return [fail(`${connection.ats} webhooks cannot be listed: ${errorText(error)}`, atsFix(connection, error))];
  }
  const register = `run npm run doctor -- --connection ${connection.id} --register-webhooks`;
  return ats.webhookEvents.map((event) => {
    const found = registered.filter((w) => w.event === event && w.url === url);
    if (!found.length) {
      const note = ats.kind === 'ashby' && !secrets.atsWebhookIds?.[event] ? ' (Ashby cannot list webhooks)' : '';
      return fail(`${connection.ats} has no ${event} webhook to ${url}${note}`, register);
    }
    if (found.every((w) => w.enabled === false))
      return fail(
        `${connection.ats}'s ${event} webhook to this connection is disabled`,
        `enable it in ${connection.ats}'s webhook settings`,
      );
    const enabled = found.some((w) => w.enabled === true) ? ' and enabled' : '';
    return pass(`${connection.ats} sends ${event} to this connection (registered${enabled})`);
  });
}
