import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Debian's Chromium (`apt-get install chromium`, as CI installs it), or the one `CHROMIUM_PATH` names; the browser
 * tests fail with what to install when there is none (nothing downloads a browser).
 */
export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find(existsSync);
  if (!path || !existsSync(path))
    throw new Error('no Chromium: apt-get install chromium (Debian), or set CHROMIUM_PATH to a Chromium binary');
  return path;
}

/** Where the browser tests' screenshots go: docs/console/ with `UPDATE_SCREENSHOTS=1`, a temporary folder else. */
export function screenshotDir(): string {
  return process.env.UPDATE_SCREENSHOTS === '1'
    ? join(import.meta.dirname, '..', '..', 'docs', 'console')
    : join(tmpdir(), 'console-screenshots');
}
