import { describe } from 'vitest';
import { MemoryOrderStore } from '../../helpers/memory-orders';
import { orderRules } from '../../helpers/order-rules';

describe('Orders: the in-memory store holds the order rules', () => {
  const store = new MemoryOrderStore();
  orderRules(() => store);
});
