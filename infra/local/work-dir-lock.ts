import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Whether a process of this id is running (signal 0 checks without signalling; EPERM: running, not ours). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Holds a local stack's folder for this process: a second stack started on the same folder would rewrite the
 * `stack.json`, secrets and connections the first one serves from, and `ops` and `doctor` would then talk to the
 * wrong stack. A lock left by a process that is gone is taken over. Returns its release.
 */
export function holdWorkDir(workDir: string): () => Promise<void> {
  const lock = join(workDir, 'stack.lock');
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const holder = Number(readFileSync(lock, 'utf8'));
      // This process's own lock is a stack it still runs: refused as another's would be.
      if (Number.isInteger(holder) && holder > 0 && running(holder))
        throw new Error(
          `another local stack (process ${holder}) is running from ${workDir}: stop it first (Ctrl-C where it ` +
            `runs); two stacks on one folder would overwrite each other's stack.json and secrets. If no local ` +
            `stack runs (the process id was reused), remove ${lock}`,
        );
      rmSync(lock, { force: true });
    }
  }
  // Released only while it is still this process's: a lock taken over since is the new holder's.
  return async () => {
    if (heldBy(lock) === String(process.pid)) rmSync(lock, { force: true });
  };
}

/** The lock's holder as written, or undefined when there is no lock. */
function heldBy(lock: string): string | undefined {
  try {
    return readFileSync(lock, 'utf8');
  } catch {
    return undefined;
  }
}
