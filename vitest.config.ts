import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // A test whose stubbed ATS saw a call no vendor documents fails (test/helpers/stub-fetch.ts).
    setupFiles: ['test/setup/documented-calls.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Integration suites start real local services; two workers match the machine's two cores.
    maxWorkers: 2,
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
