import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = join(import.meta.dirname, '..', '..');
const OUT_DIR = join(ROOT, '.local', 'functions');
const BOOTSTRAP = join(import.meta.dirname, 'lambda-environment.ts');

const built = new Map<string, string>();

/**
 * An execution environment's code as one JavaScript module, as `cdk deploy` ships each function: the handler at
 * `entry` bundled with the environment's bootstrap (infra/local/lambda-environment.ts), so the two share one module
 * state (the chaos run's crash seam, the IAM check's call recording). Packages stay outside the bundle and load from
 * node_modules, as the Lambda runtime provides the SDK. A cold start then loads plain JavaScript: compiling the
 * TypeScript sources in every new environment cost seconds of CPU each, which a busy machine turned into timeouts.
 *
 * Built once per process and entry (esbuild takes a fraction of a second); the file is named by its content, so
 * processes running at once (test files) share it without racing, and a changed source makes a new one.
 */
export function environmentBundle(entry: string): string {
  const known = built.get(entry);
  if (known) return known;
  const result = buildSync({
    stdin: {
      contents: [
        `import { runEnvironment } from ${JSON.stringify(BOOTSTRAP)};`,
        `await runEnvironment(() => import(${JSON.stringify(entry)}));`,
      ].join('\n'),
      resolveDir: ROOT,
      sourcefile: 'environment.ts',
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`bundling ${entry} gave no output`);
  const hash = createHash('sha256').update(output.contents).digest('hex').slice(0, 16);
  const name = entry.replace(/^.*[\\/]/, '').replace(/\.[cm]?[jt]s$/, '');
  const file = join(OUT_DIR, `${name}-${hash}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(OUT_DIR, { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, output.contents);
    renameSync(temporary, file);
  }
  const url = pathToFileURL(file).href;
  built.set(entry, url);
  return url;
}
