import { describe, expect, it } from 'vitest';
import { orderLines, orderUrlLines } from '../../../infra/cli/ops/orders';
import { parseConnections } from '../../../shared/config';
import type { OrderRecord } from '../../../shared/orders/records';
import { connectionDocument } from '../../helpers/connections';

const QUESTIONS = [{ question: 'Walk us through a system you built.', time: 3, type: 'audio' }];
const order = (orderId: string, state: OrderRecord['state'], extra: Partial<OrderRecord> = {}): OrderRecord => ({
  connectionId: 'acme-greenhouse',
  orderId,
  source: 'greenhouse',
  testId: 'backend-screen',
  state,
  candidateEmail: 'never@shown.io',
  steps: {},
  createdAt: Date.UTC(2026, 10, 26),
  updatedAt: Date.UTC(2026, 10, 26),
  ...extra,
});

describe('npm run ops -- orders, urls', () => {
  it('counts orders by state and lists those with work left or failed, ids only', () => {
    const lines = orderLines(
      [
        order('ord_1', 'completed', { announced: 'completed' }),
        order('ord_2', 'completed'),
        order('ord_3', 'invited'),
        order('ord_4', 'failed', { failureReason: 'mail-refused', announced: 'failed' }),
        order('ord_5', 'invited', { connectionId: 'other' }),
      ],
      'acme-greenhouse',
    );
    expect(lines[0]).toBe('4 order(s)');
    expect(lines[1]).toBe('  acme-greenhouse greenhouse: invited 1, completed 2, failed 1');
    const text = lines.join('\n');
    expect(text).toContain('ord_2 greenhouse completed (not yet told to the ATS)');
    expect(text).toContain('ord_3 greenhouse invited since 2026-11-26');
    expect(text).toContain('ord_4 greenhouse failed mail-refused');
    expect(text).not.toContain('ord_1');
    expect(text).not.toContain('never@shown.io');
  });

  it("prints the order endpoints a customer gives Greenhouse's partner team and Ashby", () => {
    const tests = [{ id: 't', name: 'T', interview: { questions: QUESTIONS } }];
    const [connection] = parseConnections(connectionDocument({ orders: { greenhouse: { tests } } }));
    expect(orderUrlLines(connection!, 'https://api.example.com')).toEqual(
      ['list_tests', 'send_test', 'test_status', 'response_error'].map(
        (call) =>
          `acme-greenhouse (Greenhouse Assessment Partner ${call}): https://api.example.com/orders/greenhouse/${call}`,
      ),
    );
  });
});
