import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { inject } from 'vitest';
import type { LocalStack } from '../../infra/local/local-stack';

export interface DoctorRun {
  code: number;
  output: string;
}

/**
 * `npm run doctor -- <args>` in a child process, its exit code and everything it printed: the CLI's source as the
 * integration lane's global set-up bundled it (test/setup/emulators.ts).
 */
export function runDoctor(args: string[], timeoutMs = 90_000): Promise<DoctorRun> {
  return run(process.execPath, [inject('clis').doctor, ...args], timeoutMs);
}

/** The same, as an operator types it: `npm run doctor` runs tsx, which compiles the source at start. */
export function runDoctorAsTyped(args: string[], timeoutMs = 90_000): Promise<DoctorRun> {
  return run(resolve('node_modules/.bin/tsx'), ['infra/cli/doctor/main.ts', ...args], timeoutMs);
}

function run(command: string, args: string[], timeoutMs: number): Promise<DoctorRun> {
  return new Promise((done) => {
    execFile(
      command,
      args,
      { timeout: timeoutMs, env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

/** The lines of one connection's section of the doctor's report. */
export function sectionOf(output: string, connectionId: string): string {
  const lines = output.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`${connectionId} (`));
  if (start < 0) return '';
  const end = lines.findIndex((l, i) => i > start && /^\S/.test(l));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** What a secret's value looks like in the local stack: never in the doctor's output. */
export const SECRET_FIELDS = /[0-9a-f]{48}|sandbox-key|sandbox-token|sandbox-secret/;

/** Writes `change(secrets)` into the stack's secrets file for the length of `work`, then puts the file back. */
export async function withSecrets<T>(
  stack: LocalStack,
  change: (s: Record<string, Record<string, unknown>>) => void,
  work: () => Promise<T>,
) {
  const path = JSON.parse(readFileSync(stack.stackFile, 'utf8')).files.secrets as string;
  const original = readFileSync(path, 'utf8');
  const edited = JSON.parse(original) as Record<string, Record<string, unknown>>;
  change(edited);
  writeFileSync(path, JSON.stringify(edited));
  try {
    return await work();
  } finally {
    writeFileSync(path, original);
  }
}
