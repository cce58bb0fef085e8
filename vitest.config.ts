import { defineConfig } from 'vitest/config';

/**
 * Four lanes (`npm run test:fast` runs `unit`; `npm test` runs them all, as CI does):
 * - `unit`: no I/O — no emulator, no server, no synth; about 10 s.
 * - `build`: the CDK app synthesized, the bundles built, the lint rules held (no emulators, but slow).
 * - `integration`: the real local services; DynamoDB Local and SQS start once (test/setup/emulators.ts) and every
 *   file works under tables and queues of its own prefix.
 * - `chaos`: small fixed-seed chaos runs over the whole local stack.
 */
export default defineConfig({
  test: {
    environment: 'node',
    // A test whose stubbed ATS saw a call no vendor documents fails (test/helpers/stub-fetch.ts).
    setupFiles: ['test/setup/documented-calls.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Three workers on the machine's two cores: an integration file spends part of its time waiting on the emulators
    // and its own stack's timers, which a third file fills (the suite took 554 s with two, 506 s with three).
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // No I/O and no module state a file leaves behind: one import of the code per worker, not one per file
          // (the lane took 27.5 s isolated, 7.0 s not; its files pass in any order, `--sequence.shuffle`).
          isolate: false,
          include: ['test/unit/**/*.test.ts', 'test/contract/**/*.test.ts'],
          exclude: ['test/contract/ats/route-conformance.test.ts'],
        },
      },
      {
        extends: true,
        // Each file builds its own apps and folders: aws-cdk-lib imported once per worker, not once per file. A synth
        // takes 10-36 s under the whole suite's load.
        test: {
          name: 'build',
          isolate: false,
          testTimeout: 90_000,
          include: ['test/infra/**/*.test.ts', 'test/tooling/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/contract/ats/route-conformance.test.ts'],
          globalSetup: ['test/setup/emulators.ts'],
        },
      },
      { extends: true, test: { name: 'chaos', include: ['test/chaos/**/*.test.ts'] } },
    ],
    // `npm test` measures coverage on the unit lane alone: what the fast tests pin down. Measuring the other lanes too
    // cost about a minute of the suite's eight and changed no threshold's verdict.
    coverage: {
      provider: 'v8',
      include: ['shared/**/*.ts', 'functions/**/*.ts'],
      reporter: ['text-summary', ['text', { skipFull: true }]],
      thresholds: {
        'shared/interview-service/**': { lines: 90 },
      },
    },
  },
});
