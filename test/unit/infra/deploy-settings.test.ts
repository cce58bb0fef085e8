import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDeploySettings } from '../../../infra/aws/deploy-settings';

const dir = mkdtempSync(join(tmpdir(), 'deploy-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A connections file whose `deploy` section is `deploy`, with no connections. */
function fileWith(deploy: Record<string, unknown>): string {
  const path = join(dir, `${Object.keys(deploy).join('-')}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(
    path,
    JSON.stringify({ deploy: { mailFrom: 'a@x.example.com', alarmEmail: 'b@x.example.com', ...deploy } }),
  );
  return path;
}

describe('Function: loadDeploySettings', () => {
  it("sets the workers' environments and the reconciler's pace from the file, with defaults", () => {
    expect(loadDeploySettings(fileWith({}), [])).toMatchObject({
      workerMaxConcurrency: 5,
      reconcileEveryMinutes: 10,
      reconcileSegments: 1,
    });
    expect(loadDeploySettings(fileWith({ reconcileSegments: 6 }), [])).toMatchObject({ reconcileSegments: 6 });
    expect(() => loadDeploySettings(fileWith({ reconcileSegments: 0 }), [])).toThrow(/deploy\.reconcileSegments/);
    const set = loadDeploySettings(fileWith({ workerMaxConcurrency: 50, reconcileEveryMinutes: 5 }), []);
    expect(set).toMatchObject({ workerMaxConcurrency: 50, reconcileEveryMinutes: 5 });
  });

  it("sets the webhook API's throttle from the file (100 a second by default, 10 to 10,000)", () => {
    expect(loadDeploySettings(fileWith({}), [])).toMatchObject({ webhookRateLimit: 100 });
    expect(loadDeploySettings(fileWith({ webhookRateLimit: 2_000 }), [])).toMatchObject({ webhookRateLimit: 2_000 });
    for (const refused of [5, 20_000, 150.5])
      expect(() => loadDeploySettings(fileWith({ webhookRateLimit: refused }), [])).toThrow(/deploy\.webhookRateLimit/);
  });

  it('refuses a value outside what SQS event sources and the schedule take, naming the field', () => {
    expect(() => loadDeploySettings(fileWith({ workerMaxConcurrency: 1 }), [])).toThrow(/deploy\.workerMaxConcurrency/);
    expect(() => loadDeploySettings(fileWith({ reconcileEveryMinutes: 2 }), [])).toThrow(
      /deploy\.reconcileEveryMinutes/,
    );
  });
});
