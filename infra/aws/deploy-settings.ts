import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { ConfigError, type Connection } from '../../shared/config';
import { describeFirstIssue } from '../../shared/validation';

/**
 * What a deployment needs beside the connections, kept in the connections file itself (`"deploy": {…}`), so a
 * second operator finds it where the connections are, and `cdk deploy` needs no flag anyone must remember.
 */
export const deploySettingsSchema = v.object({
  /** The SES sender used when a trigger names none: a verified identity. */
  mailFrom: v.pipe(v.string(), v.email('must be an e-mail address')),
  /** Who the alarms reach (an SNS e-mail subscription, confirmed from the first message). */
  alarmEmail: v.pipe(v.string(), v.email('must be an e-mail address')),
  /**
   * The name prefix every connection's secret shares (`ats-interview-connector/`): the functions may read the
   * secrets under it, one grant for any number of connections.
   */
  secretsPrefix: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9/_+=.@-]{1,256}\/$/, 'must be a secret name prefix ending in /')),
    'ats-interview-connector/',
  ),
  /**
   * Reserved concurrency of each webhook function (default 10); 0 reserves none, for an account whose
   * concurrency quota is still the new-account 10.
   */
  webhookConcurrency: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1000)), 10),
  /**
   * The HTTP API's throttle, requests a second for every customer's webhooks together (default 100, bursts of twice
   * it; at most API Gateway's account default, 10,000): raise it with the customers, with webhookConcurrency.
   */
  webhookRateLimit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(10_000)), 100),
  /**
   * How many environments each worker's event source runs at most (its SQS MaximumConcurrency, 2 to 1,000; default
   * 5): every customer's messages share them, while each connection's ATS calls keep to its own rate.
   */
  workerMaxConcurrency: v.optional(v.pipe(v.number(), v.integer(), v.minValue(2), v.maxValue(1000)), 5),
  /** How often the reconciler runs, in minutes (5 to 60; default 10): each run serves its share of the connections. */
  reconcileEveryMinutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(5), v.maxValue(60)), 10),
  /**
   * The reconciler's schedule in segments of the connections table (1 to 20; default 1): each segment's run serves
   * its part, so each connection is served every run where one run cannot serve them all (about 2,000 a run).
   */
  reconcileSegments: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(20)), 1),
  /** The functions' log level (`POWERTOOLS_LOG_LEVEL`); a redeploy changes it, no code does. */
  logLevel: v.optional(v.picklist(['DEBUG', 'INFO', 'WARN', 'ERROR'], 'must be DEBUG, INFO, WARN or ERROR'), 'INFO'),
});

export type DeploySettings = v.InferOutput<typeof deploySettingsSchema>;

/**
 * The file's `deploy` section, with `-c mailFrom=…` / `-c alarmEmail=…` taking precedence. Anything missing
 * stops the deploy with a message naming it: no example sender, no alarm that reaches nobody.
 */
export function loadDeploySettings(
  connectionsFile: string,
  connections: readonly Connection[],
  overrides: { mailFrom?: unknown; alarmEmail?: unknown } = {},
): DeploySettings {
  const document = JSON.parse(readFileSync(connectionsFile, 'utf8')) as { deploy?: Record<string, unknown> };
  const given = { ...document.deploy };
  if (overrides.mailFrom !== undefined) given.mailFrom = overrides.mailFrom;
  if (overrides.alarmEmail !== undefined) given.alarmEmail = overrides.alarmEmail;
  const parsed = v.safeParse(deploySettingsSchema, given);
  if (!parsed.success)
    throw new ConfigError(
      `${connectionsFile}: ${describeFirstIssue(parsed.issues, { prefix: 'deploy' }).message} ` +
        '(set it in the file\'s "deploy" section, or with -c mailFrom=… / -c alarmEmail=…)',
    );
  const outside = connections.find((c) => !c.secretRef.startsWith(parsed.output.secretsPrefix));
  if (outside)
    throw new ConfigError(
      `${connectionsFile}: connection ${outside.id}: secretRef ${outside.secretRef} is not under ` +
        `deploy.secretsPrefix ${parsed.output.secretsPrefix} (the functions may read only the secrets under it)`,
    );
  return parsed.output;
}
