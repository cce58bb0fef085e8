import { type Connection, connectionSecretsSchema } from '../../../shared/config';
import { errorMessage } from '../../../shared/errors';
import { komboApiFor } from '../../../shared/orders/kombo-orders';
import {
  describeDiff,
  diffPackages,
  isInSync,
  packagesOf,
  publishPackages,
} from '../../../shared/orders/kombo-packages';
import type { SecretStore } from '../../../shared/config/secret-store';
import * as v from 'valibot';

/**
 * `kombo-packages`: each integration's packages against the connection's tests; `--publish` makes Kombo's list
 * the configured one (`PUT /assessment/packages` replaces it whole), keeping a package no longer configured unless
 * `--remove` is given. Answers the exit code: 1 when a list differs and was not published, or a call failed.
 */
export async function komboPackages(
  connection: Connection,
  secrets: SecretStore,
  options: { publish: boolean; remove: boolean },
  print: (line: string) => void,
): Promise<number> {
  const kombo = connection.orders?.kombo;
  if (!kombo) {
    print(`${connection.id}: takes no Kombo orders (no orders.kombo)`);
    return 1;
  }
  const parsed = v.safeParse(connectionSecretsSchema, await secrets.read(connection.secretRef));
  const api = parsed.success ? komboApiFor(connection, parsed.output) : undefined;
  if (!api) {
    print(`${connection.id}: no komboApiKey in the secret ${connection.secretRef} (${secrets.where})`);
    return 1;
  }
  if (!options.publish) {
    // Read only: the same comparison, nothing PUT.
    let differs = false;
    for (const integrationId of kombo.integrations) {
      try {
        const diff = diffPackages(packagesOf(kombo), await api.getPackages(integrationId));
        differs ||= !isInSync(diff, options.remove);
        print(`${integrationId}: ${describeDiff(diff, options.remove)}`);
      } catch (error) {
        print(`${integrationId}: could not read the packages: ${errorMessage(error)}`);
        differs = true;
      }
    }
    if (differs) print(`publish with: npm run ops -- kombo-packages --connection ${connection.id} --publish`);
    return differs ? 1 : 0;
  }
  try {
    for (const result of await publishPackages(api, kombo, { remove: options.remove })) {
      print(
        result.published
          ? `${result.integrationId}: published (${describeDiff(result.diff, options.remove)})`
          : `${result.integrationId}: already in sync`,
      );
      for (const warning of result.warnings) print(`  Kombo warns: ${warning}`);
    }
    return 0;
  } catch (error) {
    print(`publishing failed: ${errorMessage(error)}`);
    return 1;
  }
}
