import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const biome = join(root, 'node_modules', '.bin', 'biome');
// Inside the tree (under shared/, where every rule applies), so the root configuration is read; removed after.
const probeDir = join(root, 'shared', `.lint-probe-${randomUUID()}`);

/** Runs `biome check` (what `npm run lint` runs) on one file; the exit code and the diagnostics. */
async function lint(name: string, source: string): Promise<{ code: number; output: string }> {
  mkdirSync(probeDir, { recursive: true });
  const file = join(probeDir, name);
  writeFileSync(file, source);
  try {
    const { stdout, stderr } = await run(biome, ['check', '--error-on-warnings', '--max-diagnostics=50', file], {
      cwd: root,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

describe('Tooling: npm test fails on unformatted or lint-failing code', () => {
  it('runs the lint check before anything else in npm test', () => {
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<string, string>;
    expect(scripts.test?.startsWith('npm run lint &&')).toBe(true);
    expect(scripts.lint).toBe('biome check --error-on-warnings .');
  });

  it('keeps every TypeScript line within 120 characters, strings and titles too', async () => {
    const { stdout } = await run('git', ['ls-files', '*.ts'], { cwd: root });
    const long = stdout
      .split('\n')
      .filter(Boolean)
      .flatMap((file) =>
        readFileSync(join(root, file), 'utf8')
          .split('\n')
          .flatMap((line, index) => (line.length > 120 ? [`${file}:${index + 1} (${line.length})`] : [])),
      );
    expect(long).toEqual([]);
  });

  it('passes a file written in the house style', async () => {
    const result = await lint('clean.ts', 'export const greeting = (name: string): string => name.trim();\n');
    expect(result).toMatchObject({ code: 0 });
  });

  it.each([
    ['a formatting difference (double quotes, no semicolon)', 'export const name = "x"\n', 'format'],
    [
      'a line over 120 characters',
      `export const list = [${Array.from({ length: 40 }, (_, i) => i).join(', ')}];\n`,
      'format',
    ],
    ['an unused import', "import { join } from 'node:path';\nexport const x = 1;\n", 'noUnusedImports'],
    ['an explicit any outside tests', 'export const parse = (x: unknown) => x as any;\n', 'noExplicitAny'],
    [
      'a floating promise',
      'async function send(): Promise<void> {}\nexport function go(): void {\n  send();\n}\n',
      'noFloatingPromises',
    ],
    ['a non-null assertion', 'export const first = (xs: string[]): string => xs[0]!;\n', 'noNonNullAssertion'],
  ])('fails on %s', async (_what, source, diagnostic) => {
    const result = await lint(`${randomUUID()}.ts`, source);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain(diagnostic);
  });
});
