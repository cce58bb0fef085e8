import { beforeEach, describe } from 'vitest';
import { lifecycleRules } from '../../helpers/lifecycle-rules';
import { MemoryMappingStore } from '../../helpers/memory-store';
import { mappingRules } from '../../helpers/mapping-rules';

describe('Repositories: the in-memory store holds the same rules as DynamoDB', () => {
  let store: MemoryMappingStore;
  beforeEach(() => {
    store = new MemoryMappingStore();
  });

  mappingRules(() => store);
  lifecycleRules(() => store);
});
