import type { Connection, ConnectionSecrets } from '../config';
import { AtsError, ATS_ERROR_CODES } from './errors';
import { AshbyAdapter } from './ashby/ashby.adapter';
import { GreenhouseAdapter } from './greenhouse/greenhouse.adapter';
import { LeverAdapter } from './lever/lever.adapter';
import { WorkableAdapter } from './workable/workable.adapter';
import type { AtsAdapter } from './port';
import type { CallGate, RateLimit } from './pacer';

export * from './port';
export * from './errors';

/** The ATS kinds with an adapter; a connection to any other is refused when the config loads. */
export const SUPPORTED_ATS = ['greenhouse', 'ashby', 'lever', 'workable'] as const;

export interface AdapterDependencies {
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** The connection's pacing (shared/ats/pacer.ts): the functions pass one, the doctor and most tests none. */
  gate?: CallGate;
}

/**
 * The rate each ATS documents for one credential (ats-facts, Corrections 2026-11): Greenhouse Harvest v3 fixed 30-s
 * windows with no published ceiling (75 the one observed `X-RateLimit-Limit`), Lever about 10 per second per key,
 * Workable 10 per 10 s for an account token. Ashby publishes none. A connection's `atsRateLimit` says otherwise.
 */
export const DOCUMENTED_RATES: Readonly<Record<(typeof SUPPORTED_ATS)[number], RateLimit | undefined>> = {
  greenhouse: { limit: 75, windowMs: 30_000 },
  lever: { limit: 10, windowMs: 1_000 },
  workable: { limit: 10, windowMs: 10_000 },
  ashby: undefined,
};

/** The rate a connection's calls are paced to: its `atsRateLimit` where set, else its ATS's documented one. */
export function connectionRate(connection: Connection): RateLimit | undefined {
  const own = connection.atsRateLimit;
  if (own) return { limit: own.requests, windowMs: Math.round(own.perSeconds * 1000) };
  return DOCUMENTED_RATES[connection.ats as keyof typeof DOCUMENTED_RATES];
}

export function createAtsAdapter(
  connection: Connection,
  secrets: ConnectionSecrets,
  overrides: AdapterDependencies = {},
): AtsAdapter {
  const dependencies = { timeoutMs: connection.atsTimeoutMs, ...overrides };
  switch (connection.ats) {
    case 'greenhouse':
      return new GreenhouseAdapter({ connection, secrets, ...dependencies });
    case 'ashby':
      return new AshbyAdapter({ connection, secrets, ...dependencies });
    case 'lever':
      return new LeverAdapter({ connection, secrets, ...dependencies });
    case 'workable':
      return new WorkableAdapter({ connection, secrets, ...dependencies });
    default:
      throw new AtsError(
        ATS_ERROR_CODES.unsupported,
        `connection ${connection.id}: ATS ${connection.ats} has no adapter yet`,
      );
  }
}
