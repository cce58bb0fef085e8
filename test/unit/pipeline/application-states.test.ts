import { describe, expect, it } from 'vitest';
import { MOVES, mayMove, stateCondition } from '../../../shared/pipeline/application-states';
import { APPLICATION_STATES } from '../../../shared/pipeline/records';

describe('the application state machine', () => {
  it("reaches every state from a claim, and leaves a written-back one only by an operator's retry", () => {
    const reached = new Set<string>(['claimed']);
    for (let round = 0; round < APPLICATION_STATES.length; round++)
      for (const move of Object.values(MOVES)) if (move.from.some((s) => reached.has(s))) reached.add(move.to);
    expect([...reached].sort()).toEqual([...APPLICATION_STATES].sort());
    const left = APPLICATION_STATES.filter((state) => Object.keys(MOVES).some((m) => mayMove(state, m as never)));
    expect(APPLICATION_STATES.filter((s) => !left.includes(s))).toEqual([]);
    expect(Object.keys(MOVES).filter((m) => mayMove('written_back', m as never))).toEqual(['reopenWriteBack']);
  });

  it('takes a late report after the expiry, never an expiry after a report', () => {
    expect(mayMove('expired', 'claimReport')).toBe(true);
    expect(mayMove('completed', 'expire')).toBe(false);
    expect(mayMove('written_back', 'claimReport')).toBe(false);
  });

  it('states a move as one DynamoDB condition with its values', () => {
    expect(stateCondition('claimReport')).toEqual({
      condition: '#state IN (:from0, :from1, :from2, :from3, :from4)',
      values: { ':from0': 'claimed', ':from1': 'invited', ':from2': 'expired', ':from3': 'left', ':from4': 'failed' },
    });
  });
});
