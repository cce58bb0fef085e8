import type { Connection, ConnectionSecrets } from '../config';
import { AtsError, ATS_ERROR_CODES } from './errors';
import { AshbyAdapter } from './ashby/ashby.adapter';
import { GreenhouseAdapter } from './greenhouse/greenhouse.adapter';
import { LeverAdapter } from './lever/lever.adapter';
import { WorkableAdapter } from './workable/workable.adapter';
import { KomboAdapter } from './kombo/kombo.adapter';
import type { AtsAdapter } from './port';
import { documentedRate, PROFILES } from './profiles';
import type { CallGate } from './call-gate';
import type { AtsAdapterOptions } from './webhook-body';

export * from './port';
export * from './errors';
export { declaredStepCalls, documentedRate, PROFILES, type VendorProfile } from './profiles';

/** The ATS kinds with an adapter; a connection to any other is refused when the config loads. */
export const SUPPORTED_ATS = ['greenhouse', 'ashby', 'lever', 'workable', 'kombo'] as const;

export interface AdapterDependencies {
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** The connection's pacing (shared/pacing/): the functions pass one, the doctor and most tests none. */
  gate?: CallGate;
  /** How a retry waits (a test records the waits instead of sleeping them). */
  sleep?: AtsAdapterOptions['sleep'];
}

/**
 * The rate a connection's calls are paced to: its `atsRateLimit` where set, else the one its ATS's profile documents
 * for one credential (./<kind>/profile.ts; Ashby publishes none).
 */
export function connectionRate(connection: Connection): { limit: number; windowMs: number } | undefined {
  const own = connection.atsRateLimit;
  if (own) return { limit: own.requests, windowMs: Math.round(own.perSeconds * 1000) };
  return connection.ats in PROFILES ? documentedRate(connection.ats) : undefined;
}

/** The options an adapter is built with: the connection's own timeout unless a caller overrides it. */
export function adapterOptions(connection: Connection, secrets: ConnectionSecrets, overrides: AdapterDependencies) {
  return { connection, secrets, timeoutMs: connection.atsTimeoutMs, ...overrides };
}

export function unsupportedAts(connection: Connection): AtsError {
  return new AtsError(
    ATS_ERROR_CODES.unsupported,
    `connection ${connection.id}: ATS ${connection.ats} has no adapter yet`,
  );
}

/** The connection's adapter for the pipeline; the doctor's part is ./setup-adapter.ts's `createSetupAdapter`. */
export function createAtsAdapter(
  connection: Connection,
  secrets: ConnectionSecrets,
  overrides: AdapterDependencies = {},
): AtsAdapter {
  const options = adapterOptions(connection, secrets, overrides);
  switch (connection.ats) {
    case 'greenhouse':
      return new GreenhouseAdapter(options);
    case 'ashby':
      return new AshbyAdapter(options);
    case 'lever':
      return new LeverAdapter(options);
    case 'workable':
      return new WorkableAdapter(options);
    case 'kombo':
      return new KomboAdapter(options);
    default:
      throw unsupportedAts(connection);
  }
}
