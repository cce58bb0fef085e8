import { buildSync } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'console');

/**
 * The console's static files (`index.html`, `app.js`, `app.css`, `icon.svg`) written to `outDir`: one minified
 * bundle of console/src with Preact, built the same way for `npm start` (infra/local/) and for `cdk deploy` (its S3
 * bucket). Synchronous, as the CDK's local bundling calls it.
 */
export function buildConsoleSync(outDir: string): void {
  mkdirSync(outDir, { recursive: true });
  buildSync({
    entryPoints: [join(root, 'src', 'main.tsx')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outfile: join(outDir, 'app.js'),
    legalComments: 'none',
    logLevel: 'error',
  });
  copyFileSync(join(root, 'index.html'), join(outDir, 'index.html'));
  copyFileSync(join(root, 'app.css'), join(outDir, 'app.css'));
  copyFileSync(join(root, 'icon.svg'), join(outDir, 'icon.svg'));
}
