import type { Connection, ConnectionSecrets } from '../config';
import { AtsError, ATS_ERROR_CODES } from './errors';
import { AshbyAdapter } from './ashby/ashby.adapter';
import { GreenhouseAdapter } from './greenhouse/greenhouse.adapter';
import { LeverAdapter } from './lever/lever.adapter';
import { WorkableAdapter } from './workable/workable.adapter';
import type { AtsAdapter } from './port';

export * from './port';
export * from './errors';

/** The ATS kinds with an adapter; a connection to any other is refused when the config loads. */
export const SUPPORTED_ATS = ['greenhouse', 'ashby', 'lever', 'workable'] as const;

export interface AdapterDependencies {
  fetch?: typeof fetch;
  timeoutMs?: number;
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
