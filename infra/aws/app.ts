import { resolve } from 'node:path';
import { App } from 'aws-cdk-lib';
import { ConfigError, loadConnectionsFile } from '../../shared/config';
import { SUPPORTED_ATS } from '../../shared/ats';
import { loadDeploySettings } from './deploy-settings';

/**
 * `cdk synth|deploy -c connections=path/to/connections.json` (or `"connections"` in cdk.context.json): the file
 * holds the connections and, in its `deploy` section, the sender and the alarm recipient. Nothing falls back to
 * an example: a missing file or setting stops here with a message naming it, and an invalid file names the
 * connection and the field.
 */
const app = new App();
try {
  const given = app.node.tryGetContext('connections');
  if (typeof given !== 'string' || !given)
    throw new ConfigError(
      'no connections file: pass -c connections=path/to/connections.json, or set "connections" in ' +
        'cdk.context.json (npm run synth uses config/connections.example.json)',
    );
  const connectionsFile = resolve(given);
  const connections = loadConnectionsFile(connectionsFile);
  const unsupported = connections.find((c) => !(SUPPORTED_ATS as readonly string[]).includes(c.ats));
  if (unsupported)
    throw new ConfigError(
      `${connectionsFile}: connection ${unsupported.id}: ATS ${unsupported.ats} has no adapter yet ` +
        `(supported: ${SUPPORTED_ATS.join(', ')})`,
    );
  const settings = loadDeploySettings(connectionsFile, connections, {
    mailFrom: app.node.tryGetContext('mailFrom'),
    alarmEmail: app.node.tryGetContext('alarmEmail'),
  });
  // The stack's constructs load once the settings are known: a refusal answers without loading them (1.2 s sooner).
  const [{ ConnectorStack }, { addStackChecks }] = await Promise.all([import('./connector-stack'), import('./checks')]);
  new ConnectorStack(app, String(app.node.tryGetContext('stackName') ?? 'AtsInterviewConnector'), {
    connectionsFile,
    pruneConnections: String(app.node.tryGetContext('pruneConnections')) === 'true',
    consoleDomainPrefix: app.node.tryGetContext('consoleDomainPrefix'),
    ...settings,
  });
  addStackChecks(app);
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
