import { resolve } from 'node:path';
import { App } from 'aws-cdk-lib';
import { ConfigError, loadConnectionsFile } from '../shared/config';
import { SUPPORTED_ATS } from '../shared/ats';
import { ConnectorStack } from './connector-stack';

/**
 * `cdk synth|deploy -c connections=path/to/connections.json -c mailFrom=talent@example.com`: an invalid file
 * stops here with a message naming the connection and the field.
 */
const app = new App();
const connectionsFile = resolve(String(app.node.tryGetContext('connections') ?? 'config/connections.example.json'));
try {
  const connections = loadConnectionsFile(connectionsFile);
  const unsupported = connections.find((c) => !(SUPPORTED_ATS as readonly string[]).includes(c.ats));
  if (unsupported)
    throw new ConfigError(
      `${connectionsFile}: connection ${unsupported.id}: ATS ${unsupported.ats} has no adapter yet ` +
        `(supported: ${SUPPORTED_ATS.join(', ')})`,
    );
  new ConnectorStack(app, String(app.node.tryGetContext('stackName') ?? 'AtsInterviewConnector'), {
    connections,
    connectionsFile,
    mailFrom: String(app.node.tryGetContext('mailFrom') ?? 'interviews@example.com'),
    alarmEmail: app.node.tryGetContext('alarmEmail') as string | undefined,
  });
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
