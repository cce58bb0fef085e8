import { describe, expect, it } from 'vitest';
import { eventSourceBatches } from '../../../infra/local/sqs-event-source';

describe('eventSourceBatches', () => {
  it("reads as many batches at once as the function has environments, and two at the least, as Lambda's do", () => {
    expect(eventSourceBatches('environments', 5)).toBe(5);
    expect(eventSourceBatches('environments', 2)).toBe(2);
    // One environment: the next batch is gathered while it works, and waits for it.
    expect(eventSourceBatches('environments', 1)).toBe(2);
  });

  it('in one process, where nothing waits for an environment, reads as many as its concurrency', () => {
    expect(eventSourceBatches('one-process', 1)).toBe(1);
    expect(eventSourceBatches('one-process', 5)).toBe(5);
  });
});
