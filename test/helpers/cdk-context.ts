import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ConnectorStack } from '../../infra/aws/connector-stack';

/**
 * The context `cdk synth` and `cdk deploy` run with (cdk.json: the recommended feature flags), with bundling
 * skipped: a test's App synthesizes the template that deploys, not one under other flags.
 */
export function cdkTestContext(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { context } = JSON.parse(readFileSync('cdk.json', 'utf8')) as { context: Record<string, unknown> };
  return { ...context, 'aws:cdk:bundling-stacks': [], ...extra };
}

/**
 * The connector's stack for the example connections, synthesized into a folder of the test's own (without an outdir
 * the CDK leaves one in the temp folder), bundling skipped: the assertions are about the infrastructure, not the code.
 */
export function synthesizeExampleStack(name: string): { template: Template; outdir: string } {
  const outdir = mkdtempSync(join(tmpdir(), `connector-${name.toLowerCase()}-`));
  const app = new App({ outdir, context: cdkTestContext() });
  const stack = new ConnectorStack(app, name, {
    connectionsFile: 'config/connections.example.json',
    mailFrom: 'talent@acme.example.com',
    alarmEmail: 'oncall@acme.example.com',
    secretsPrefix: 'ats-interview-connector/',
  });
  return { template: Template.fromStack(stack), outdir };
}
