import { beforeAll, describe } from 'vitest';
import { DynamoOrderStore } from '../../../shared/mapping';
import { useLocalTables } from '../../helpers/local-stack';
import { orderRules } from '../../helpers/order-rules';

describe('Orders: the DynamoDB store holds the order rules (DynamoDB Local)', () => {
  const local = useLocalTables('orders-test');
  let store: DynamoOrderStore;
  beforeAll(() => {
    store = new DynamoOrderStore({ table: local.tables.orders, client: local.client });
  });

  orderRules(() => store);
});
