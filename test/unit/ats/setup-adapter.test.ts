import { describe, expect, it } from 'vitest';
import { createAtsAdapter } from '../../../shared/ats';
import { createSetupAdapter } from '../../../shared/ats/setup-adapter';
import { type Connection, type ConnectionSecrets, parseConnections } from '../../../shared/config';
import { connectionDocument, komboConnection } from '../../helpers/connections';
import { stubFetch } from '../../helpers/stub-fetch';

const SETUP_METHODS = ['requiredPermissions', 'probeAccess', 'probeUser', 'listJobs', 'listStages', 'readApplication'];
const WEBHOOK_API = ['listWebhooks', 'createWebhook'];
const secrets: ConnectionSecrets = {
  interviewApiKey: 'k',
  interviewWebhookToken: 't'.repeat(32),
  atsApiKey: 'key',
  atsClientId: 'id',
  atsClientSecret: 'secret',
};
const direct = (ats: 'greenhouse' | 'ashby' | 'lever' | 'workable'): [Connection, ConnectionSecrets] => [
  parseConnections(connectionDocument({ ats, id: `acme-${ats}` }))[0]!,
  secrets,
];
const kombo = (): [Connection, ConnectionSecrets] => {
  const { connection, secrets: own } = komboConnection();
  return [connection, own];
};

// The doctor's part of each adapter is built for the doctor, the admin API and the console alone; the pipeline's
// adapter carries none of it (.dependency-cruiser.cjs keeps it out of those functions' bundles).
describe("The doctor's adapter beside the pipeline's", () => {
  it.each([
    ['greenhouse', () => direct('greenhouse'), false],
    ['ashby', () => direct('ashby'), true],
    ['lever', () => direct('lever'), true],
    ['workable', () => direct('workable'), true],
    ['kombo', kombo, false],
  ] as const)(
    '%s: the setup methods on the doctor’s adapter only, the webhook pair where the ATS has an API',
    (_, of, api) => {
      const [connection, own] = of();
      const setup = createSetupAdapter(connection, own) as unknown as Record<string, unknown>;
      const pipeline = createAtsAdapter(connection, own) as unknown as Record<string, unknown>;
      for (const method of SETUP_METHODS) {
        expect(typeof setup[method]).toBe('function');
        expect(pipeline[method]).toBeUndefined();
      }
      for (const method of WEBHOOK_API) expect(typeof setup[method]).toBe(api ? 'function' : 'undefined');
      // The same adapter otherwise: what the webhook function and the pipeline call is there on both.
      expect(typeof setup.parseWebhook).toBe('function');
      expect(setup.webhookEvents).toEqual(pipeline.webhookEvents);
    },
  );

  it('answers a setup method taken off the adapter, as the doctor passes them around', async () => {
    const [connection, own] = kombo();
    const stub = stubFetch(() => {
      const data = { id: connection.atsIntegrationId, status: 'ACTIVE', tool: { id: 'personio', label: 'Personio' } };
      return { status: 200, json: { status: 'success', data: { ...data, write_actions: [] } } };
    });
    const { probeAccess } = createSetupAdapter(connection, own, { fetch: stub.fetch });
    expect(await probeAccess()).toBe(`GET /integrations/${connection.atsIntegrationId}: Personio, ACTIVE`);
  });
});
