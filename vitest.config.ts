import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
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
