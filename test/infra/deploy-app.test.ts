import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE } from '../helpers/many-connections';

describe('Command: cdk app as deploy runs it', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'connector-deploy-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const runApp = (context: Record<string, unknown>) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'infra/aws/app.ts'], {
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [], ...context }),
        CDK_OUTDIR: dir,
      },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('refuses to deploy without a connections file, naming it, instead of deploying the example', () => {
    const result = runApp({});
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('no connections file: pass -c connections=');
  });

  it('names the deploy setting a connections file lacks, and the secret outside the prefix', () => {
    const file = join(dir, 'connections.json');
    writeFileSync(file, JSON.stringify({ connections: EXAMPLE.connections }));
    const noSender = runApp({ connections: file });
    expect(noSender.status).toBe(1);
    expect(noSender.stderr).toContain('deploy.mailFrom');
    const noAlarm = runApp({ connections: file, mailFrom: 'talent@acme.example.com' });
    expect(noAlarm.status).toBe(1);
    expect(noAlarm.stderr).toContain('deploy.alarmEmail');
    writeFileSync(
      file,
      JSON.stringify({ deploy: { ...EXAMPLE.deploy, secretsPrefix: 'other/' }, connections: EXAMPLE.connections }),
    );
    const outside = runApp({ connections: file });
    expect(outside.status).toBe(1);
    expect(outside.stderr).toContain('is not under deploy.secretsPrefix other/');
  });

  // A synth takes 10-35 s on this machine under the whole suite's load: the app's own bound (60 s) is the test's.
  it('synthesizes the example when it is given explicitly, as npm run synth does', () => {
    const result = runApp({ connections: 'config/connections.example.json' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  }, 70_000);
});
