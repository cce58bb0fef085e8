import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConsoleSync } from '../../infra/console/build';

/** The console's weight budget: what a browser downloads to open it, gzipped, at most 200 KB. */
const BUDGET_BYTES = 200 * 1024;

describe("Tooling: the console's files", () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-build-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('build into index.html, app.js, app.css and its icon, under 200 KB gzipped together', () => {
    buildConsoleSync(dir);
    const files = readdirSync(dir).sort();
    expect(files).toEqual(['app.css', 'app.js', 'icon.svg', 'index.html']);
    const gzipped = files.reduce((sum, file) => sum + gzipSync(readFileSync(join(dir, file))).length, 0);
    console.log(`console: ${(gzipped / 1024).toFixed(1)} KB gzipped (${files.join(', ')})`);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
    // The bundle names no source file and carries no source map to the browser.
    expect(readFileSync(join(dir, 'app.js'), 'utf8')).not.toContain('sourceMappingURL');
  });
});
