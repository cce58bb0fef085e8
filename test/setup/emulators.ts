import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { type EmulatorEndpoints, startEmulator } from '../../infra/local/emulators';

declare module 'vitest' {
  export interface ProvidedContext {
    /** DynamoDB Local and SQS, started once for the integration lane (test/helpers/local-stack.ts). */
    emulators: Pick<EmulatorEndpoints, 'dynamodb' | 'sqs'>;
    /** `npm run ops` and `npm run doctor`, each bundled once for the lane (test/helpers/ops-cli.ts, doctor.ts). */
    clis: Record<Cli, string>;
  }
}

/**
 * The integration lane's global set-up: DynamoDB Local (a Java process) and the SQS emulator start once, and every
 * file works under tables and queues of its own prefix. SES stays one per file: its mail store has no prefix, and
 * files send to the same fixture addresses.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [dynamodb, sqs, ops, doctor] = await Promise.all([
    startEmulator('dynamodb'),
    startEmulator('sqs'),
    bundleCli('ops'),
    bundleCli('doctor'),
  ]);
  project.provide('emulators', { dynamodb: dynamodb.url, sqs: sqs.url });
  project.provide('clis', { ops, doctor });
  // In watch mode a rerun takes the source as it is now, not as the lane found it.
  project.onTestsRerun(async () => {
    await Promise.all([bundleCli('ops'), bundleCli('doctor')]);
  });
  return async () => {
    await Promise.all([dynamodb.stop(), sqs.stop()]);
    for (const bundle of [ops, doctor]) rmSync(bundle, { force: true });
  };
}

type Cli = 'ops' | 'doctor';

/**
 * A CLI's source (what `npm run <cli>` runs through tsx), bundled as the Lambda functions are: a process starts in
 * about 0.3 s instead of tsx's 0.9 s, which the files that run the CLIs dozens of times feel under the suite's load.
 */
async function bundleCli(cli: Cli): Promise<string> {
  const dir = resolve('.local/test');
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, `${cli}-cli-${process.pid}.mjs`);
  await build({
    entryPoints: [`infra/cli/${cli}/main.ts`],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'warning',
    // Packages still written as CommonJS call `require` from inside the ES module.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  return outfile;
}
