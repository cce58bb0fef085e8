import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { CHAOS_DEFAULTS, formatChaosReport, runChaos } from './chaos';

// A file of its own: the handlers keep their SDK clients at module scope, one local stack per test file.
const WORK_DIR = `.local/test-chaos-per-candidate-${process.pid}`;

describe('Chaos: a small fixed-seed run with per-candidate invitations', () => {
  afterAll(() => rmSync(WORK_DIR, { recursive: true, force: true }));

  it(
    'keeps every invariant: one invitation each on the service, every report matched by its candidate id',
    async () => {
      const progress: string[] = [];
      const report = await runChaos({
        ...CHAOS_DEFAULTS,
        candidates: 16,
        strangers: 2,
        // Orders run the same way in either mode (the other chaos file and `npm run chaos` hold more).
        orders: 12,
        seed: 11,
        crashRate: 0.3,
        perCandidateInvites: true,
        timeoutMs: 6 * 60_000,
        workDir: WORK_DIR,
        // Kept for a failure's message: which phase ended, when, and why.
        progress: (line) => void progress.push(line),
      });
      const violated = report.invariants.filter((i) => i.violations > 0).map(({ name, detail }) => ({ name, detail }));
      expect(violated, `${formatChaosReport(report)}\n${progress.join('\n')}`).toEqual([]);
      expect(report.invariants.filter((i) => i.name.startsWith('per-candidate:'))).toHaveLength(2);
      expect(report.invariants.find((i) => i.name.startsWith('every claimed'))?.checked).toBe(16);
      expect(report.logLeaks).toEqual([]);
    },
    10 * 60_000,
  );
});
