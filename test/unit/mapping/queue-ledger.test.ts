import {
  ConditionalCheckFailedException,
  type DeleteItemCommand,
  type DynamoDBClient,
  TransactionCanceledException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { DynamoQueueLedger } from '../../../shared/mapping/queue-ledger';

const REPLAY = { key: 'lever-signed:abc', ttlSeconds: 1200 };
const canceled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

/** A ledger on a DynamoDB client whose `send` answers as `answer` says. */
function ledgerWith(answer: (command: unknown) => unknown) {
  const send = vi.fn(async (command: unknown) => answer(command));
  const ledger = new DynamoQueueLedger({ table: 'events', client: { send } as unknown as DynamoDBClient });
  return { ledger, send };
}

describe('Queue ledger: a signed delivery claimed with its replay key', () => {
  it('writes the replay key and the ledger record in one transaction', async () => {
    const { ledger, send } = ledgerWith(() => ({}));
    expect(await ledger.claimDelivery('acme', REPLAY, 'stage#o-1', 1_000_000)).toBe(true);
    expect(send).toHaveBeenCalledTimes(1);
    const command = send.mock.calls[0]?.[0] as TransactWriteItemsCommand;
    expect(command).toBeInstanceOf(TransactWriteItemsCommand);
    const puts = command.input.TransactItems?.map((item) => item.Put?.Item?.pk?.S);
    expect(puts).toEqual(['replay#acme#lever-signed:abc', 'enqueued#acme#stage#o-1']);
    expect(command.input.TransactItems?.[0]?.Put?.ConditionExpression).toContain('attribute_not_exists(pk)');
  });

  it('answers false when the replay key was seen, and throws on any other cancellation', async () => {
    expect(
      await ledgerWith(() => Promise.reject(canceled('ConditionalCheckFailed', 'None'))).ledger.claimDelivery(
        'acme',
        REPLAY,
        'stage#o-1',
        1,
      ),
    ).toBe(false);
    const conflict = ledgerWith(() => Promise.reject(canceled('None', 'TransactionConflict'))).ledger;
    await expect(conflict.claimDelivery('acme', REPLAY, 'stage#o-1', 1)).rejects.toBeInstanceOf(
      TransactionCanceledException,
    );
  });

  it('takes back the replay key, and the ledger record only while it holds the claim', async () => {
    const later = new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
    const { ledger, send } = ledgerWith((command) =>
      (command as DeleteItemCommand).input.ConditionExpression ? Promise.reject(later) : {},
    );
    await ledger.releaseDelivery('acme', REPLAY, 'stage#o-1', 42);
    const deletes = send.mock.calls.map(([command]) => (command as DeleteItemCommand).input);
    expect(deletes.map((d) => d.Key?.pk?.S)).toEqual(['replay#acme#lever-signed:abc', 'enqueued#acme#stage#o-1']);
    expect(deletes[1]?.ConditionExpression).toBe('enqueuedAt = :claimedAt');
    expect(deletes[1]?.ExpressionAttributeValues).toEqual({ ':claimedAt': { N: '42' } });
  });
});
