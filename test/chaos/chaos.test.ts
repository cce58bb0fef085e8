import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { CHAOS_DEFAULTS, formatChaosReport, runChaos, type ChaosReport } from './chaos';

const WORK_DIR = `.local/test-chaos-${process.pid}`;

/**
 * One small fixed-seed run covers both ways of inviting: Ashby's and Lever's connections invite per candidate (their
 * own link and id, a fifth typing another e-mail), Greenhouse's and Workable's share one link per interview.
 */
describe('Chaos: a small fixed-seed run on the real local services', () => {
  let report: ChaosReport | undefined;
  afterAll(() => rmSync(WORK_DIR, { recursive: true, force: true }));

  it(
    'keeps every invariant under faults, duplicates, dropped webhooks and crashes',
    async () => {
      const progress: string[] = [];
      report = await runChaos({
        ...CHAOS_DEFAULTS,
        candidates: 16,
        strangers: 4,
        orders: 9,
        komboCandidates: 8,
        seed: 7,
        crashRate: 0.3,
        perCandidateInvites: ['ashby', 'lever'],
        // A failed message is received again after 9 s (3 × the functions' timeout), not 18: the same retries, sooner.
        visibilityTimeoutSeconds: 9,
        timeoutMs: 8 * 60_000,
        workDir: WORK_DIR,
        // Kept for a failure's message: which phase ended, when, and why.
        progress: (line) => void progress.push(line),
      });
      const table = formatChaosReport(report);
      // Every violated invariant with its detail, and the run's whole table, in one failure.
      const violated = report.invariants.filter((i) => i.violations > 0).map(({ name, detail }) => ({ name, detail }));
      expect(violated, `${table}\n${progress.join('\n')}`).toEqual([]);
      expect(report.invariants.map((i) => i.name)).toHaveLength(32);
      // One invitation each on the service, every report matched by its candidate id, where invitations are own.
      for (const name of ['per-candidate: one invitation', "per-candidate: no candidate's report"])
        expect(report.invariants.find((i) => i.name.startsWith(name))?.checked).toBeGreaterThan(0);
      // Candidates left the process after their invitation, and the run checked what reached them after.
      expect(
        report.invariants.find((i) => i.name.startsWith('no e-mail to a candidate after'))?.checked,
      ).toBeGreaterThan(0);
      // Orders from inside Greenhouse, Ashby and Kombo went through the same faults.
      expect(report.invariants.find((i) => i.name.startsWith('orders: every order ended'))?.checked).toBe(9);
      // About one report message per written-back report, whatever the reconciler and the webhooks found.
      expect(report.invariants.find((i) => i.name.includes('report messages per'))?.checked).toBeGreaterThan(0);
      // Every function's AWS calls were held against its policy (the check saw calls to hold).
      expect(report.invariants.find((i) => i.name.includes('IAM policy'))?.checked).toBeGreaterThan(10);
      // The run must have exercised the crash windows it claims to survive.
      expect(
        Object.values(report.crashes).reduce((a, b) => a + b, 0),
        table,
      ).toBeGreaterThanOrEqual(5);
      expect(report.invariants.find((i) => i.name.startsWith('every claimed'))?.checked).toBe(16);
      // Through Kombo: two tools' candidates, each role present (took it, never took it, declined in the ATS), all 8.
      const kombo = (name: string) => report?.invariants.find((i) => i.name.startsWith(name))?.checked ?? 0;
      expect(kombo('Kombo: every candidate invited')).toBe(8);
      const [written, ended] = [kombo('Kombo: every report written back'), kombo('Kombo: every non-completer')];
      const declined = kombo('Kombo: every decliner');
      expect([written > 0, ended >= 2, declined >= 2, written + ended + declined]).toEqual([true, true, true, 8]);
    },
    12 * 60_000,
  );

  it('writes no secret, API key, candidate e-mail, name or phone number to any log line', () => {
    expect(report?.logLines ?? 0).toBeGreaterThan(100);
    expect(report?.logLeaks).toEqual([]);
  });
});
