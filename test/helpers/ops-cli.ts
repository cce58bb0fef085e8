import { spawn } from 'node:child_process';
import type { LocalStack } from '../../infra/local/local-stack';

/**
 * `npm run ops -- <args>` against the running local stack, in a child process. Asynchronous: the local SQS emulator
 * and gateway run in this process and must keep answering the CLI.
 */
export function runOps(stack: LocalStack, ...args: string[]): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'infra/cli/ops/main.ts', ...args, '--stack', stack.stackFile],
      {
        timeout: 60_000,
      },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('close', (status) => resolve({ status, out }));
  });
}
