import type { Connection, ConnectionSecrets } from '../config';
import type { AtsHttpClient } from './ats-http';
import type { AtsMethod, AtsSetup } from './port';
import type { AtsAdapterOptions } from './webhook-body';

/** The doctor's part of an adapter (`<kind>.setup.ts`): what `AtsSetup` asks, but the events its adapter lists. */
export type SetupPart = Omit<AtsSetup, 'webhookEvents'>;

/** The parts an adapter is built of: its HTTP client, the reads its other parts share, and the sweep. */
export interface AdapterParts<Reads> {
  http: AtsHttpClient;
  reads: Reads;
  sweep: { listApplicationsInStage: AtsMethod<'listApplicationsInStage'> };
}

/**
 * What every adapter (`./<kind>/<kind>.adapter.ts`) shares: its connection and secrets, its client and reads, and the
 * sweep's pages as its sweep part serves them. Each adapter states only what differs. The doctor's part is not here:
 * `<kind>.setup.ts` adds it to an adapter of its own (./setup-adapter.ts), so the functions that run the pipeline do
 * not carry it.
 */
export abstract class AtsAdapterBase<Reads> {
  protected readonly connection: Connection;
  protected readonly secrets: ConnectionSecrets;
  protected readonly http: AtsHttpClient;
  protected readonly reads: Reads;

  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'>;

  protected constructor(options: AtsAdapterOptions, parts: AdapterParts<Reads>) {
    this.connection = options.connection;
    this.secrets = options.secrets;
    this.http = parts.http;
    this.reads = parts.reads;
    this.listApplicationsInStage = parts.sweep.listApplicationsInStage;
  }
}
