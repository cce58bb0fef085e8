import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { localStackDown } from '../../../infra/cli/local-stack-down';
import { holdWorkDir } from '../../../infra/local/work-dir-lock';

const dir = mkdtempSync(join(tmpdir(), 'work-dir-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Function: holdWorkDir (one local stack per folder)', () => {
  it('refuses a folder another running process holds, naming it; takes over a lock whose process is gone', async () => {
    const lock = join(dir, 'stack.lock');
    // The parent of this test runner is running and is not this process.
    writeFileSync(lock, String(process.ppid));
    expect(() => holdWorkDir(dir)).toThrow(`another local stack (process ${process.ppid}) is running from ${dir}`);
    expect(readFileSync(lock, 'utf8')).toBe(String(process.ppid));
    // A process that has exited: its lock is stale.
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim();
    writeFileSync(lock, gone);
    const release = holdWorkDir(dir);
    expect(readFileSync(lock, 'utf8')).toBe(String(process.pid));
    // A second stack in this same process is refused too.
    expect(() => holdWorkDir(dir)).toThrow(`another local stack (process ${process.pid})`);
    await release();
    expect(existsSync(lock)).toBe(false);
    // A release finds the lock another process holds now: it leaves it.
    writeFileSync(lock, String(process.ppid));
    await release();
    expect(readFileSync(lock, 'utf8')).toBe(String(process.ppid));
  });
});

describe('Function: localStackDown (what ops and doctor say when the stack is not there)', () => {
  it('names a refused connection as the stack not running; leaves any other error alone', async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const refused = await fetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
    expect(localStackDown(refused, '.local/stack.json')).toMatch(
      /^the local stack \.local\/stack\.json names is not running \(ECONNREFUSED\): start it with npm start/,
    );
    expect(localStackDown(new Error('404: no connection x'), '.local/stack.json')).toBeUndefined();
  });
});
