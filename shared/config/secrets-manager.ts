import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { SecretsError } from './errors';
import { cachedSecrets, type SecretsProvider } from './secrets';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { errorName } from '../errors';

/** AWS: one JSON secret per connection in Secrets Manager. */
export function secretsManagerProvider(
  client: SecretsManagerClient = new SecretsManagerClient(AWS_CLIENT_CONFIG),
): SecretsProvider {
  return cachedSecrets(async (secretRef) => {
    try {
      const result = await client.send(new GetSecretValueCommand({ SecretId: secretRef }));
      return JSON.parse(result.SecretString ?? '');
    } catch (error) {
      if (error instanceof ResourceNotFoundException)
        throw new SecretsError('secret-not-found', `secret ${secretRef} does not exist`, { cause: error });
      if (error instanceof SyntaxError)
        throw new SecretsError('secret-invalid', `secret ${secretRef} is not a JSON object`);
      throw new SecretsError('secret-unavailable', `secret ${secretRef} could not be read: ${errorName(error)}`, {
        cause: error,
      });
    }
  });
}
