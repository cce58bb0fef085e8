import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callsOf, runBurst, type SimulatedWork } from '../../helpers/pacing/simulation';

// Properties of the pacer over N execution environments sharing one schedule, against an ATS that counts one
// credential's calls in fixed windows starting at the first call: not the pacer's waits, only what the ATS sees.
const ATS_RATES = [
  { limit: 50, windowMs: 10_000, headers: true },
  { limit: 75, windowMs: 30_000, headers: true },
  { limit: 10, windowMs: 10_000, headers: true },
  { limit: 10, windowMs: 1_000, headers: false },
];

describe('the pacer across execution environments', () => {
  it('keeps a burst in the limit (429s ≤ 2 %), fills ≥ 55 % of the rate (40 % alone), ≤ 1.5 × the calls', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ATS_RATES),
        fc.integer({ min: 1, max: 10 }),
        // Messages an environment works at once: a batch from SQS (the stack takes 10). Fewer workers than that, each
        // sitting out its message's turn, bound a burst by the workers rather than the rate.
        fc.integer({ min: 8, max: 10 }),
        // Two sorts of work (an invitation, a write-back), each with its reads (made again each run) and one-call
        // steps; one message in three has a step more of a lookup and its write (a stage move).
        fc.integer({ min: 0, max: 1 }),
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        async (rate, environments, perEnvironment, reads, stepsA, stepsB, seed) => {
          let state = seed;
          const random = () => {
            state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
            return state / 2 ** 31;
          };
          // Enough calls for four windows and more: the burst is bound by the rate, not by the workers.
          const windows = 4 + (seed % 3);
          const messages: SimulatedWork[] = [];
          while (messages.reduce((sum, work) => sum + callsOf(work), 0) < rate.limit * windows) {
            const invitation = random() < 0.5;
            const steps = Array.from({ length: invitation ? stepsA : stepsB }, () => 1);
            if (random() < 1 / 3) steps.push(2);
            messages.push({ kind: invitation ? 'invitation' : 'write-back', reads: invitation ? reads : 0, steps });
          }
          const result = await runBurst(
            { ...rate, environments, perEnvironment, messages, random },
            rate.windowMs * windows * 3 + 120_000,
          );
          expect(result.refused).toBeLessThanOrEqual(Math.max(1, 0.02 * result.calls));
          // Floors every burst holds, however small its windows or its environments' batches; the benchmark measures
          // the pipeline's own (npm run bench: ≥ 90 % of the rate, ≤ 1.10 × the calls). One environment alone books
          // its first batches at its first run's cost until a second run shows the kind's usual one: where that first
          // run took the rarer, costlier path (a stage move), a burst of 4 to 6 windows fills 48 % of the rate at worst
          // (400 bursts at 10 per 10 s); two or more learn from each other: 0.61 at worst in 400 bursts, and 0.57 in
          // the worst seen (75 per 30 s, two environments, four windows: a third of the messages cut before a move).
          expect(result.share).toBeGreaterThanOrEqual(environments === 1 ? 0.4 : 0.55);
          // A message that goes back makes again only its reads and the step under way; on a slow ATS, reads again
          // while the environments learn what each sort costs (the benchmark: 1.00 × on Greenhouse and Workable).
          expect(result.calls).toBeLessThanOrEqual(1.5 * result.needed + 5);
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});
