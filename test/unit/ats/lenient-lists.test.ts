import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { interviewStagesSchema } from '../../../shared/ats/ashby/ashby.schemas';
import { stagesSchema } from '../../../shared/ats/lever/lever.schemas';

// A list in a vendor's answer whose one item the connector cannot read keeps the rest: a stage list with one odd
// stage still moves a candidate to any other stage by name.
describe('Stage lists with an item the connector cannot read', () => {
  it("keeps Lever's other stages", () => {
    const answer = { data: [{ id: 'stage-1', text: 'AI Interview' }, { id: 7 }, { id: 'stage-2', text: 'Onsite' }] };
    expect(v.parse(stagesSchema, answer).data.map((s) => s.text)).toEqual(['AI Interview', 'Onsite']);
  });

  it("keeps Ashby's other interview stages", () => {
    const answer = {
      results: [
        { id: 'st-1', title: null },
        { id: 'st-2', title: 'Hiring Manager Review' },
      ],
    };
    expect(v.parse(interviewStagesSchema, answer).results).toEqual([{ id: 'st-2', title: 'Hiring Manager Review' }]);
  });

  it('still refuses an answer that is not a list at all', () => {
    expect(v.safeParse(stagesSchema, { data: 'none' }).success).toBe(false);
  });
});
