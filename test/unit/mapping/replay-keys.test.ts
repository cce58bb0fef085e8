import { ConditionalCheckFailedException, type PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoQueueLedger, dynamoMappingStore } from '../../../shared/mapping';

const tables = {
  ...{ jobs: 'jobs', applications: 'applications', events: 'events', orders: 'orders' },
  ...{ connections: 'connections', connectionAudit: 'audit', activity: 'activity' },
};

/**
 * A table whose key already holds an item: the key written by `holder` ('own': this very put, landed on an earlier
 * attempt whose answer the SDK lost, so it retried; 'other': an earlier delivery's), answered as DynamoDB answers a
 * refused condition with ReturnValuesOnConditionCheckFailure ALL_OLD.
 */
function heldClient(holder: 'own' | 'other') {
  const send = async (command: PutItemCommand) => {
    const item = command.input.Item ?? {};
    const held = holder === 'own' ? item : { ...item, writer: { S: 'an-earlier-delivery' } };
    const asked = command.input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD';
    throw new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      $metadata: {},
      ...(asked ? { Item: held } : {}),
    });
  };
  return { send } as never;
}
const heldBy = (holder: 'own' | 'other') => dynamoMappingStore({ client: heldClient(holder), tables: tables as never });

describe('Repositories: a signed delivery remembered once', () => {
  it('takes a key its own landed put holds (its answer lost, retried) as new; an earlier one as seen', async () => {
    expect(await heldBy('own').rememberReplayKey('acme-lever', 'evt-1', Date.now(), 3600)).toBe(true);
    expect(await heldBy('other').rememberReplayKey('acme-lever', 'evt-1', Date.now(), 3600)).toBe(false);
  });
});

describe('Repositories: a report enqueued once by its webhook', () => {
  it("takes a ledger claim its own landed put holds as this webhook's; an earlier one's as pending", async () => {
    // Taken for another's, the report would be answered pending and go nowhere until the grace ran out.
    const claim = (holder: 'own' | 'other') =>
      new DynamoQueueLedger({ table: 'events', client: heldClient(holder) }).claimEnqueue('acme', 'report#r1', 1, 60);
    expect(await claim('own')).toBe(true);
    expect(await claim('other')).toBe(false);
  });
});
