import type { Connection, ConnectionSecrets } from '../config';
import type { AtsHttpClient } from './ats-http';
import type { AtsMethod, AtsSetup, SetupMethod } from './port';
import type { AtsAdapterOptions } from './webhook-body';

/** The doctor's part of an adapter (`<kind>.setup.ts`): what `AtsSetup` asks, but the events its adapter lists. */
export type SetupPart = Omit<AtsSetup, 'webhookEvents'>;

/** The parts an adapter is built of: its HTTP client, the reads its other parts share, the sweep and the setup. */
export interface AdapterParts<Reads, Setup extends SetupPart = SetupPart> {
  http: AtsHttpClient;
  reads: Reads;
  sweep: { listApplicationsInStage: AtsMethod<'listApplicationsInStage'> };
  setup: Setup;
}

/**
 * What every adapter (`./<kind>/<kind>.adapter.ts`) shares: its connection and secrets, its client and reads, and the
 * port methods its parts serve as they are: the sweep's pages and the doctor's probes. Each adapter states only what
 * differs. The parts' methods are their own bound functions, so they are taken as they are, not wrapped.
 */
export abstract class AtsAdapterBase<Reads> {
  protected readonly connection: Connection;
  protected readonly secrets: ConnectionSecrets;
  protected readonly http: AtsHttpClient;
  protected readonly reads: Reads;

  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'>;
  public readonly requiredPermissions: SetupMethod<'requiredPermissions'>;
  public readonly probeAccess: SetupMethod<'probeAccess'>;
  public readonly probeUser: SetupMethod<'probeUser'>;
  public readonly listJobs: SetupMethod<'listJobs'>;
  public readonly listStages: SetupMethod<'listStages'>;
  public readonly readApplication: SetupMethod<'readApplication'>;

  protected constructor(options: AtsAdapterOptions, parts: AdapterParts<Reads>) {
    this.connection = options.connection;
    this.secrets = options.secrets;
    this.http = parts.http;
    this.reads = parts.reads;
    const { sweep, setup } = parts;
    this.listApplicationsInStage = sweep.listApplicationsInStage;
    this.requiredPermissions = setup.requiredPermissions;
    this.probeAccess = setup.probeAccess;
    this.probeUser = setup.probeUser;
    this.listJobs = setup.listJobs;
    this.listStages = setup.listStages;
    this.readApplication = setup.readApplication;
  }
}

/**
 * An adapter whose ATS has a webhook API (all but Greenhouse, whose webhooks are made in its Dev Center): the doctor
 * lists and registers the connector's webhooks through its setup part. An adapter without one has neither method.
 */
export abstract class WebhookApiAdapterBase<Reads> extends AtsAdapterBase<Reads> {
  public readonly listWebhooks: SetupMethod<'listWebhooks'>;
  public readonly createWebhook: SetupMethod<'createWebhook'>;

  protected constructor(options: AtsAdapterOptions, parts: AdapterParts<Reads, Required<SetupPart>>) {
    super(options, parts);
    this.listWebhooks = parts.setup.listWebhooks;
    this.createWebhook = parts.setup.createWebhook;
  }
}
