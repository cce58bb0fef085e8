import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import {
  BUNDLE_SETTINGS,
  ESM_REQUIRE_BANNER,
  FUNCTION_ENTRIES,
  LAMBDA_RUNTIME_MODULES,
  type FunctionName,
} from '../../infra/aws/functions';

export interface BundleFigures {
  name: FunctionName;
  bytes: number;
  /** Median of `runs` fresh node processes importing the bundle (module load + top-level code). */
  coldInitMs: number;
}

/**
 * The esbuild options `cdk synth` bundles a function with (infra/aws/functions.ts); `minify` may be turned off to
 * read it.
 */
export function bundleOptions(name: FunctionName, overrides: Pick<BuildOptions, 'minify'> = {}): BuildOptions {
  return {
    entryPoints: [FUNCTION_ENTRIES[name]],
    bundle: true,
    platform: 'node',
    format: 'esm',
    minify: BUNDLE_SETTINGS.minify,
    target: BUNDLE_SETTINGS.target,
    mainFields: [...BUNDLE_SETTINGS.mainFields],
    external: LAMBDA_RUNTIME_MODULES,
    banner: { js: ESM_REQUIRE_BANNER },
    logLevel: 'silent',
    ...overrides,
  };
}

/** Bundles each function as `cdk synth` does and times its import in fresh processes. */
export async function measureBundles(runs = 15): Promise<BundleFigures[]> {
  const dir = mkdtempSync(join(process.cwd(), '.bench-bundles-'));
  try {
    const figures: BundleFigures[] = [];
    for (const name of Object.keys(FUNCTION_ENTRIES) as FunctionName[]) {
      const outfile = join(dir, `${name}.mjs`);
      await build({ ...bundleOptions(name), outfile });
      const times: number[] = [];
      for (let i = 0; i < runs; i++) {
        const script =
          `const t = performance.now(); await import(${JSON.stringify(outfile)}); ` +
          'process.stdout.write(String(performance.now() - t));';
        const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
          env: {
            ...process.env,
            AWS_REGION: 'us-east-1',
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            JOBS_TABLE: 'jobs',
            APPLICATIONS_TABLE: 'applications',
            EVENTS_TABLE: 'events',
          },
          cwd: process.cwd(),
        });
        times.push(Number(output.toString()));
      }
      times.sort((a, b) => a - b);
      figures.push({ name, bytes: statSync(outfile).size, coldInitMs: times[Math.floor(times.length / 2)] as number });
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
