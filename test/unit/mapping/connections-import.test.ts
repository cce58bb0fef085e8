import { describe, expect, it } from 'vitest';
import { importConnections } from '../../../shared/mapping/connections.import';
import type { DynamoConnectionStore } from '../../../shared/mapping/connections.records';

describe('Function: importConnections, several at a time', () => {
  it('takes no more once one fails, awaits every write begun, and throws the failure', async () => {
    let inFlight = 0;
    let begun = 0;
    const refused = new Error('conditional check failed for c-05');
    const store = {
      read: async () => undefined,
      // No connection was deleted in the console: each is made.
      audit: async () => [],
      write: async (id: string) => {
        begun++;
        inFlight++;
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        if (id === 'c-05') throw refused;
      },
      page: async () => ({ connections: [] }),
    } as unknown as DynamoConnectionStore;
    const documents = Array.from({ length: 100 }, (_, i) => ({ id: `c-${String(i).padStart(2, '0')}` }));
    await expect(importConnections(store, documents, { principal: 'cdk-deploy' })).rejects.toBe(refused);
    // Nothing still writing once it has thrown, and the lanes stopped taking the rest.
    expect(inFlight).toBe(0);
    expect(begun).toBeLessThan(documents.length);
  });
});
