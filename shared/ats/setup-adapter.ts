import type { Connection, ConnectionSecrets } from '../config';
import type { SetupPart } from './adapter-base';
import { AshbySetupAdapter } from './ashby/ashby.setup';
import { GreenhouseSetupAdapter } from './greenhouse/greenhouse.setup';
import { type AdapterDependencies, adapterOptions, unsupportedAts } from './index';
import { KomboSetupAdapter } from './kombo/kombo.setup';
import { LeverSetupAdapter } from './lever/lever.setup';
import type { AtsAdapter, AtsSetup } from './port';
import { WorkableSetupAdapter } from './workable/workable.setup';

/** An adapter with its doctor's part: what `npm run doctor` and the console's setup page call. */
export type SetupAdapter = AtsAdapter & AtsSetup;

/**
 * The connection's adapter with the doctor's part (`<kind>.setup.ts`: the permissions and their probes, jobs, stages,
 * one application, the ATS's webhooks), on the adapter's own client. Only the doctor, the admin API and the console
 * import this module: the functions that run the pipeline carry no setup code.
 */
export function createSetupAdapter(
  connection: Connection,
  secrets: ConnectionSecrets,
  overrides: AdapterDependencies = {},
): SetupAdapter {
  const Adapter = SETUP_ADAPTERS[connection.ats as keyof typeof SETUP_ADAPTERS];
  if (!Adapter) throw unsupportedAts(connection);
  return withSetup(new Adapter(adapterOptions(connection, secrets, overrides)));
}

/** Each kind's adapter with its setup part (`<kind>.setup.ts`). */
const SETUP_ADAPTERS = {
  greenhouse: GreenhouseSetupAdapter,
  ashby: AshbySetupAdapter,
  lever: LeverSetupAdapter,
  workable: WorkableSetupAdapter,
  kombo: KomboSetupAdapter,
} as const;

/**
 * The setup part's methods on the adapter itself, as the doctor calls them; the webhook pair only where it has one.
 * Each part's methods are its own bound functions (arrow properties), taken as they are.
 */
function withSetup<A extends AtsAdapter & { webhookEvents: readonly string[] }>(
  adapter: A & { setup: SetupPart },
): A & AtsSetup {
  const { requiredPermissions, probeAccess, probeUser, listJobs, listStages, readApplication } = adapter.setup;
  const { listWebhooks, createWebhook } = adapter.setup;
  const webhooks = listWebhooks && createWebhook ? { listWebhooks, createWebhook } : {};
  const methods = { requiredPermissions, probeAccess, probeUser, listJobs, listStages, readApplication, ...webhooks };
  return Object.assign(adapter, methods);
}
