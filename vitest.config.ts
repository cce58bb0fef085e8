import { defineConfig } from 'vitest/config';

/**
 * Four lanes (`npm run test:fast` runs `unit`; `npm test` runs them all, as CI does):
 * - `unit`: no I/O — no emulator, no server, no synth; under 30 s.
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
    // Integration suites start real local services; two workers match the machine's two cores.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/contract/**/*.test.ts'],
          exclude: ['test/contract/ats/route-conformance.test.ts'],
        },
      },
      { extends: true, test: { name: 'build', include: ['test/infra/**/*.test.ts', 'test/tooling/**/*.test.ts'] } },
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
