import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { MAPPING_TABLES } from './constants';
import { stageLedgerKey } from './queue-ledger';

import { DynamoTables, tombstoneKey } from './dynamo-tables';
import { orderCandidateKey } from './orders.records';

/** A candidate's personal data forgotten: every application, the ledger's records, their orders, a tombstone. */
export class DynamoCandidatePurge extends DynamoTables {
  /** Deletes every application record of the candidate (found by the candidate index and by the ids given). */
  public async purgeCandidate(
    connectionId: string,
    atsCandidateId: string,
    atsApplicationIds: readonly string[] = [],
  ): Promise<{ applications: number; orders: number }> {
    // The tombstone first: a delivery claimed after it finds it; one claimed before is deleted below. It holds the
    // ATS's candidate id only and lasts as long as an application record would have.
    const now = Date.now();
    await this.send(
      new PutItemCommand({
        TableName: this.tables.events,
        Item: marshall({
          pk: tombstoneKey(connectionId, atsCandidateId),
          kind: 'candidate-deleted',
          connectionId,
          deletedAt: now,
          [MAPPING_TABLES.ttlAttribute]: this.expiry(now, this.applicationDays),
        }),
      }),
    );
    // The candidate index projects keys only: delete by the table's own key, page by page, however many.
    const keys = new Map<string, { pk: string; sk: string }>();
    const remove = async (records: { pk: string; sk: string }[]) => {
      for (const { pk, sk } of records) {
        if (keys.has(`${pk}|${sk}`)) continue;
        keys.set(`${pk}|${sk}`, { pk, sk });
        await this.send(new DeleteItemCommand({ TableName: this.tables.applications, Key: marshall({ pk, sk }) }));
      }
    };
    await this.forEachCandidateKeys(connectionId, atsCandidateId, remove);
    for (const id of atsApplicationIds)
      await remove((await this.findApplicationsByAtsId(connectionId, id)) as unknown as { pk: string; sk: string }[]);
    // The queue ledger's records of the candidate's stage changes name their application ids: deleted too.
    const applicationIds = new Set([
      ...atsApplicationIds,
      ...[...keys.values()].map(({ pk }) => pk.slice(connectionId.length + 1)),
    ]);
    for (const id of applicationIds)
      await this.send(
        new DeleteItemCommand({
          TableName: this.tables.events,
          Key: marshall({ pk: stageLedgerKey(connectionId, id) }),
        }),
      );
    return { applications: keys.size, orders: await this.purgeOrders(connectionId, atsCandidateId) };
  }

  /**
   * The candidate's assessment orders (their e-mail and name), found by the orders' candidate index: an order whose
   * ATS named no candidate id is not found here (docs/operations.md, Privacy).
   */
  private async purgeOrders(connectionId: string, atsCandidateId: string): Promise<number> {
    const table = this.tables.orders;
    if (!table) return 0;
    const index = { table, ...MAPPING_TABLES.orders.candidateIndex };
    let removed = 0;
    const key = orderCandidateKey(connectionId, atsCandidateId);
    await this.forEachIndexKeys<{ pk: string }>(index, key, `orders of candidate ${atsCandidateId}`, async (page) => {
      for (const { pk } of page) {
        await this.send(new DeleteItemCommand({ TableName: table, Key: marshall({ pk }) }));
        removed++;
      }
    });
    return removed;
  }
}
