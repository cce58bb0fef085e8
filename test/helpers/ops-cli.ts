import { spawn } from 'node:child_process';
import { inject } from 'vitest';
import type { LocalStack } from '../../infra/local/local-stack';

/**
 * `npm run ops -- <args>` against the running local stack, in a child process: the CLI's source as the lane's global
 * set-up bundled it (test/setup/emulators.ts). Asynchronous: the local SQS emulator and gateway run in this process
 * and must keep answering the CLI.
 */
export function runOps(stack: LocalStack, ...args: string[]): Promise<{ status: number | null; out: string }> {
  return run([inject('clis').ops, ...args, '--stack', stack.stackFile]);
}

/** The same, through `npm run ops` itself, as a user types it (tsx compiling the source at start). */
export function runOpsAsTyped(stack: LocalStack, ...args: string[]): Promise<{ status: number | null; out: string }> {
  return run(['--import', 'tsx', 'infra/cli/ops/main.ts', ...args, '--stack', stack.stackFile]);
}

function run(nodeArgs: string[]): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, nodeArgs, { timeout: 60_000 });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('close', (status) => resolve({ status, out }));
  });
}
