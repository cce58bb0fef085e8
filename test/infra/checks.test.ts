import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACKNOWLEDGED_FINDINGS, addStackChecks } from '../../infra/aws/checks';
import { ConnectorStack } from '../../infra/aws/connector-stack';
import { cdkTestContext } from '../helpers/cdk-context';

const CONFIG = 'config/connections.example.json';

describe('Stack: checked as AWS users check theirs (cdk-nag AwsSolutions and Serverless)', () => {
  let outdir: string;
  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'connector-checks-'));
  });
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  const synth = () => {
    const app = new App({ outdir: join(outdir, 'connector'), context: cdkTestContext() });
    new ConnectorStack(app, 'Checked', {
      connectionsFile: CONFIG,
      mailFrom: 'talent@acme.example.com',
      alarmEmail: 'oncall@acme.example.com',
      secretsPrefix: 'ats-interview-connector/',
    });
    addStackChecks(app);
    return () => app.synth();
  };

  it('synthesizes with every finding fixed or acknowledged, each acknowledgement with its reason', () => {
    expect(synth()).not.toThrow();
    for (const finding of ACKNOWLEDGED_FINDINGS) expect(finding.reason.length).toBeGreaterThan(40);
  });

  it('fails synthesis on a finding nobody fixed or acknowledged', () => {
    const app = new App({ outdir: join(outdir, 'bare'), context: cdkTestContext() });
    // A queue with no dead-letter queue and no TLS enforcement: what the packs exist to catch.
    new Queue(new Stack(app, 'Bare'), 'Plain');
    addStackChecks(app);
    expect(() => app.synth()).toThrow();
  });

  it('sets every feature flag the pinned aws-cdk-lib recommends', () => {
    const recommended = JSON.parse(
      readFileSync('node_modules/aws-cdk-lib/recommended-feature-flags.json', 'utf8'),
    ) as Record<string, unknown>;
    const { context } = JSON.parse(readFileSync('cdk.json', 'utf8')) as { context: Record<string, unknown> };
    const differing = Object.entries(recommended).filter(
      ([flag, value]) => JSON.stringify(context[flag]) !== JSON.stringify(value),
    );
    expect(differing).toEqual([]);
    expect(Object.keys(recommended).length).toBeGreaterThan(80);
  });
});
