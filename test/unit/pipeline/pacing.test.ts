import { describe, expect, it } from 'vitest';
import { withinRateWindow } from '../../../shared/pipeline/pacing';
import type { ConnectionContext } from '../../../shared/pipeline/ports';

/** A connection whose pacer turns every message away: its turn is 30 s off. */
const turnedAway = {
  connection: { id: 'c1' },
  pacer: {
    admit: async () => ({ admitted: false, turnAt: 1_000_000, turnCalls: 2, waitMs: 30_000, returnInMs: 28_000 }),
    waitMs: () => 0,
  },
} as unknown as ConnectionContext;

const turnOf = (message: { kind: string; turnAt?: number; turnWhole?: boolean }) =>
  withinRateWindow(turnedAway, message, undefined, async () => 'ran').catch((error: unknown) => error);

describe('A message turned away for a later turn', () => {
  it('goes back marked whole only when no earlier run did part of its work', async () => {
    expect(await turnOf({ kind: 'k' })).toMatchObject({ turnAt: 1_000_000, turnCalls: 2, turnWhole: true });
    expect(await turnOf({ kind: 'k', turnAt: 5, turnWhole: true })).toMatchObject({ turnWhole: true });
    // Back for a block a step took mid-run: its first run did part of the work.
    expect(await turnOf({ kind: 'k', turnAt: 5 })).toMatchObject({ turnAt: 1_000_000, turnWhole: false });
  });
});
