import type { Connection, ConnectionSecrets } from '../config';
import { AtsError, ATS_ERROR_CODES } from './errors';
import { GreenhouseAdapter } from './greenhouse/greenhouse.adapter';
import type { AtsAdapter } from './port';

export * from './port';
export * from './errors';

/** The ATS kinds with an adapter; a connection to any other is refused when the config loads. */
export const SUPPORTED_ATS = ['greenhouse'] as const;

export interface AdapterDependencies {
  fetch?: typeof fetch;
}

export function createAtsAdapter(connection: Connection, secrets: ConnectionSecrets, dependencies: AdapterDependencies = {}): AtsAdapter {
  switch (connection.ats) {
    case 'greenhouse':
      return new GreenhouseAdapter({ connection, secrets, ...dependencies });
    default:
      throw new AtsError(ATS_ERROR_CODES.unsupported, `connection ${connection.id}: ATS ${connection.ats} has no adapter yet`);
  }
}
