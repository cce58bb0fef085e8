import * as v from 'valibot';
import { createSetupAdapter } from '../ats/setup-adapter';
import { connectionSecretsSchema, type Connection } from '../config';
import { writeFields } from '../config/secret-store';
import { describeFirstIssue } from '../validation';
import { patiently, webhookUrls, type DoctorDependencies } from './checks';
import { fail, info, pass, type CheckLine } from './lines';
import { errorMessage } from '../errors';

/**
 * Registers the connector's webhooks in the ATS where its API can (Lever `POST /v1/webhooks`, Ashby
 * `webhook.create`, Workable `POST /subscriptions`): it lists first and creates only what is missing, so a second
 * run creates nothing. What the ATS issues is recorded in the connection's secret: Lever's signature token per
 * event, Workable's signing key (the account token), and every webhook's id (Ashby reads one only by its id).
 */
/** The secret's fields a registration writes: the webhooks' ids and the signing secrets the ATS issued. */
const ISSUED_FIELDS = ['atsWebhookIds', 'atsWebhookSecrets', 'atsWebhookSecret'] as const;

/** Of those fields, the ones the registration changed from the secret as it read it. */
const issuedFields = (read: unknown, updated: Record<string, unknown>) => {
  const before = (read ?? {}) as Record<string, unknown>;
  const changed = ISSUED_FIELDS.filter((f) => JSON.stringify(updated[f]) !== JSON.stringify(before[f]));
  return Object.fromEntries(changed.map((f) => [f, updated[f]]));
};

export async function registerWebhooks(connection: Connection, deps: DoctorDependencies): Promise<CheckLine[]> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let raw: unknown;
  try {
    raw = await deps.secrets.read(connection.secretRef);
  } catch (error) {
    return [fail(`secret ${connection.secretRef} cannot be read`, errorMessage(error))];
  }
  // A Lever connection has no signature token before its webhooks exist: only the schema is checked here.
  const parsed = v.safeParse(connectionSecretsSchema, raw);
  if (!parsed.success)
    return [
      fail(
        `secret ${connection.secretRef}: ` +
          (raw === undefined ? 'does not exist' : describeFirstIssue(parsed.issues).message),
        `create or correct it in ${deps.secrets.where} first`,
      ),
    ];
  const secrets = parsed.output;
  const ats = createSetupAdapter(connection, secrets, deps.fetch ? { fetch: deps.fetch } : {});
  const url = webhookUrls(deps.apiUrl, connection.id).ats;
  if (!ats.listWebhooks || !ats.createWebhook)
    return [info(`${connection.ats} has no API to register webhooks: the doctor's check prints the steps`)];
  const listWebhooks = ats.listWebhooks.bind(ats);
  const createWebhook = ats.createWebhook.bind(ats);

  const lines: CheckLine[] = [];
  const updated = {
    ...(raw as Record<string, unknown>),
    atsWebhookIds: { ...secrets.atsWebhookIds },
    ...(connection.ats === 'lever' ? { atsWebhookSecrets: { ...secrets.atsWebhookSecrets } } : {}),
  } as Record<string, unknown> & { atsWebhookIds: Record<string, string>; atsWebhookSecrets?: Record<string, string> };
  let changed = false;
  try {
    const registered = await patiently(() => listWebhooks(secrets.atsWebhookIds ?? {}), sleep);
    for (const event of ats.webhookEvents) {
      const existing = registered.find((w) => w.event === event && w.url === url);
      if (existing) {
        lines.push(pass(`${event}: already registered (${existing.id}); nothing created`));
        continue;
      }
      // Not retried after a lost answer: the next run lists first and finds a webhook that was made.
      const created = await patiently(() => createWebhook({ event, url, secret: secrets.atsWebhookSecret }), sleep);
      updated.atsWebhookIds[event] = created.id;
      if (created.issuedSecret && updated.atsWebhookSecrets) updated.atsWebhookSecrets[event] = created.issuedSecret;
      else if (created.issuedSecret) updated.atsWebhookSecret = created.issuedSecret;
      changed = true;
      const recorded = created.issuedSecret ? `; its signing secret recorded in ${connection.secretRef}` : '';
      lines.push(pass(`${event}: registered (${created.id})${recorded}`));
    }
  } catch (error) {
    lines.push(fail(`registering ${connection.ats} webhooks: ${errorMessage(error)}`, 'fix the cause and run again'));
  } finally {
    // What was created is recorded even when a later event failed: its secret exists nowhere else. Only the fields
    // the registration holds, over the secret as it is then: a change made during the ATS's calls is kept.
    if (changed) await writeFields(deps.secrets, connection.secretRef, issuedFields(raw, updated));
  }
  return lines;
}
