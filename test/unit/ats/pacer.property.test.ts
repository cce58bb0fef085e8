import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runBurst } from '../../helpers/pacing/simulation';

// Properties of the pacer over N execution environments sharing one schedule, against an ATS that counts one
// credential's calls in fixed windows starting at the first call: not the pacer's waits, only what the ATS sees.
const ATS_RATES = [
  { limit: 50, windowMs: 10_000, headers: true },
  { limit: 75, windowMs: 30_000, headers: true },
  { limit: 10, windowMs: 10_000, headers: true },
  { limit: 10, windowMs: 1_000, headers: false },
];

describe('the pacer across execution environments', () => {
  it('keeps a burst within the limit (429s ≤ 2 % of calls), fills ≥ 85 % of the rate, every message done', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ATS_RATES),
        fc.integer({ min: 1, max: 10 }),
        // Messages an environment works at once: a batch from SQS (the stack takes 10). Fewer workers than that, each
        // sitting out its message's turn, bound a burst by the workers rather than the rate.
        fc.integer({ min: 8, max: 10 }),
        // Two sorts of work (an invitation, a write-back), each with its own cost in calls; one message in ten makes a
        // call more (a lookup a warm environment has cached since).
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        async (rate, environments, perEnvironment, costA, costB, seed) => {
          let state = seed;
          const random = () => {
            state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
            return state / 2 ** 31;
          };
          // Enough calls for four windows and more: the burst is bound by the rate, not by the workers.
          const windows = 4 + (seed % 3);
          const costs: number[] = [];
          const kinds: string[] = [];
          while (costs.reduce((a, b) => a + b, 0) < rate.limit * windows) {
            const invitation = random() < 0.5;
            kinds.push(invitation ? 'invitation' : 'write-back');
            costs.push((invitation ? costA : costB) + (random() < 0.1 ? 1 : 0));
          }
          const result = await runBurst(
            { ...rate, environments, perEnvironment, costs, kinds, random },
            rate.windowMs * windows * 3 + 120_000,
          );
          expect(result.refused).toBeLessThanOrEqual(Math.max(1, 0.02 * result.calls));
          expect(result.share).toBeGreaterThanOrEqual(0.85);
          // Every call the ATS took was one a message still had to make (its own, or a read again after it went back).
          expect(result.calls - result.refused).toBe(result.needed);
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});
