import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

export interface DoctorRun {
  code: number;
  output: string;
}

/** `npm run doctor -- <args>` as an operator runs it: a child process, its exit code and everything it printed. */
export function runDoctor(args: string[], timeoutMs = 90_000): Promise<DoctorRun> {
  const tsx = resolve('node_modules/.bin/tsx');
  return new Promise((done) => {
    execFile(
      tsx,
      ['infra/cli/doctor/main.ts', ...args],
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
