import { readFileSync } from 'node:fs';

/**
 * The context `cdk synth` and `cdk deploy` run with (cdk.json: the recommended feature flags), with bundling
 * skipped: a test's App synthesizes the template that deploys, not one under other flags.
 */
export function cdkTestContext(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { context } = JSON.parse(readFileSync('cdk.json', 'utf8')) as { context: Record<string, unknown> };
  return { ...context, 'aws:cdk:bundling-stacks': [], ...extra };
}
