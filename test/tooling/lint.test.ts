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

/** Each probe file by name: its source, and the diagnostic `biome check` must give it (none for the clean one). */
const PROBES: [what: string, source: string, diagnostic: string | undefined][] = [
  ['a file written in the house style', 'export const greeting = (name: string): string => name.trim();\n', undefined],
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
];
const fileOf = (index: number) => join(probeDir, `probe-${index}.ts`);

/**
 * `biome check` (what `npm run lint` runs) once over every probe file: its exit code, and each diagnostic's header
 * (`<file>[:line:col] <rule> ━━━`). One run, since each run reads the whole project for its typed rules.
 */
async function lintProbes(): Promise<{ code: number; headers: string[] }> {
  mkdirSync(probeDir, { recursive: true });
  for (const [index, [, source]] of PROBES.entries()) writeFileSync(fileOf(index), source);
  const args = ['check', '--error-on-warnings', '--max-diagnostics=200', probeDir];
  const { code, output } = await run(biome, args, { cwd: root }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
    }),
  );
  return { code, headers: output.split('\n').filter((line) => line.includes('━━')) };
}

let linted: Promise<{ code: number; headers: string[] }> | undefined;
afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

describe('Tooling: npm test fails on unformatted or lint-failing code', () => {
  it('runs lint, typecheck and the dependency rules together, and no test lane unless all three pass', () => {
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<string, string>;
    const [checks = '', lanes] = scripts.test?.split(' && wait $lint && wait $deps && ') ?? [];
    expect(
      checks
        .split(/[;&]+/)
        .map((part) => part.trim())
        .filter((part) => part.startsWith('npm run')),
    ).toEqual(['npm run lint', 'npm run depcheck', 'npm run typecheck']);
    expect(checks).toContain('npm run lint & lint=$!');
    expect(checks).toContain('npm run depcheck & deps=$!');
    // Coverage is the unit lane's; every other lane runs after it, a new lane included.
    expect(lanes).toBe("vitest run --project unit --coverage && vitest run --project '!unit'");
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

  it.each(PROBES.map(([what, , diagnostic], index) => [what, diagnostic ?? 'nothing', diagnostic, index] as const))(
    '%s: biome check reports %s for it',
    async (_what, _said, diagnostic, index) => {
      linted ??= lintProbes();
      const { code, headers } = await linted;
      // The run failed (some probe is bad), and it read every probe: the clean one and each rule's.
      expect(code).not.toBe(0);
      const own = headers.filter((line) => line.startsWith(`${fileOf(index).slice(root.length + 1)}`));
      if (diagnostic === undefined) expect(own).toEqual([]);
      else expect(own.some((line) => line.includes(diagnostic))).toBe(true);
    },
    60_000,
  );
});
