import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { type HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
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

  const synth = (change: (stack: ConnectorStack) => void = () => {}, folder = 'connector') => {
    const app = new App({ outdir: join(outdir, folder), context: cdkTestContext() });
    const stack = new ConnectorStack(app, 'Checked', {
      connectionsFile: CONFIG,
      mailFrom: 'talent@acme.example.com',
      alarmEmail: 'oncall@acme.example.com',
      secretsPrefix: 'ats-interview-connector/',
    });
    change(stack);
    addStackChecks(app);
    return () => app.synth();
  };

  it('synthesizes with every finding fixed or acknowledged, each acknowledgement with its reason', () => {
    expect(synth()).not.toThrow();
    for (const finding of ACKNOWLEDGED_FINDINGS) expect(finding.reason.length).toBeGreaterThan(40);
  });

  it('flags a new route without an authorizer: only the webhook, order and connect routes are acknowledged', () => {
    const unguarded = synth((stack) => {
      const api = stack.node.findChild('WebhookApi') as HttpApi;
      const adminApi = stack.node.findChild('AdminApi') as IFunction;
      api.addRoutes({
        path: '/unguarded',
        methods: [HttpMethod.GET],
        integration: new HttpLambdaIntegration('Unguarded', adminApi),
      });
    }, 'unguarded');
    expect(unguarded).toThrow(/Checked\/WebhookApi\/GET--unguarded[\s\S]*AwsSolutions-APIG4/);
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
