import { GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { ApplicationKey, ApplicationRecord, ApplicationState } from '../pipeline/records';
import { MAPPING_TABLES } from './constants';
import { toApplication } from './legacy-steps';
import { batchGetAll } from './paging';

import { DynamoTables, applicationKeyFields } from './dynamo-tables';

/** Applications found by their indexes, and the operator's list of refused ones. */
export class DynamoApplicationReads extends DynamoTables {
  /**
   * Applications refused for good, of one connection or all (`npm run ops -- failed`), invitations whose e-mail SES
   * refused (the note carried the link; the candidate has no e-mail) or whose note the ATS refused (the e-mail carried
   * it), and write-backs whose note or stage move the ATS refused.
   */
  public async listFailedApplications(connectionId?: string): Promise<ApplicationRecord[]> {
    const failed =
      '(#state = :failed OR #steps.#inviteEmail.#outcome = :refused OR attribute_exists(inviteEmailRefused) OR ' +
      '#steps.#inviteNote.#outcome = :refused OR #steps.#stageMove.#outcome = :refused OR ' +
      '#steps.#reportNote.#outcome = :refused)';
    const items = await this.scanAll<Record<string, unknown>>({
      TableName: this.tables.applications,
      FilterExpression: connectionId ? `${failed} AND connectionId = :c` : failed,
      ExpressionAttributeNames: {
        '#state': 'state',
        '#steps': 'steps',
        '#inviteEmail': 'inviteEmail',
        '#inviteNote': 'inviteNote',
        '#stageMove': 'stageMove',
        '#reportNote': 'reportNote',
        '#outcome': 'outcome',
      },
      ExpressionAttributeValues: marshall({
        ':failed': 'failed',
        ':refused': 'refused',
        ...(connectionId ? { ':c': connectionId } : {}),
      }),
    });
    return items.map(toApplication);
  }

  public async findApplicationByInterview(
    interviewId: string,
    candidateEmail: string,
  ): Promise<ApplicationRecord | undefined> {
    const { name, partitionKey, sortKey } = MAPPING_TABLES.applications.interviewIndex;
    const found = await this.queryAll({
      TableName: this.tables.applications,
      IndexName: name,
      KeyConditionExpression: `${partitionKey} = :i AND ${sortKey} = :e`,
      ExpressionAttributeValues: marshall({ ':i': interviewId, ':e': candidateEmail }),
    });
    return found.sort((a, b) => b.createdAt - a.createdAt)[0];
  }

  /** The application whose per-candidate invitation the service gave `candidateId` (one at most: ids are unique). */
  public async findApplicationByServiceCandidate(
    interviewId: string,
    candidateId: string,
  ): Promise<ApplicationRecord | undefined> {
    const { name, partitionKey } = MAPPING_TABLES.applications.serviceCandidateIndex;
    const result = await this.send(
      new QueryCommand({
        TableName: this.tables.applications,
        IndexName: name,
        KeyConditionExpression: '#k = :k',
        ExpressionAttributeNames: { '#k': partitionKey },
        ExpressionAttributeValues: marshall({ ':k': `${interviewId}#${candidateId}` }),
        Limit: 1,
      }),
    );
    const [item] = result.Items ?? [];
    return item ? toApplication(unmarshall(item)) : undefined;
  }

  public listApplicationsByInterview(interviewId: string): Promise<ApplicationRecord[]> {
    const { name, partitionKey } = MAPPING_TABLES.applications.interviewIndex;
    return this.queryAll({
      TableName: this.tables.applications,
      IndexName: name,
      KeyConditionExpression: `${partitionKey} = :i`,
      ExpressionAttributeValues: marshall({ ':i': interviewId }),
    });
  }

  /** Which of `keys` are recorded (BatchGetItem, keys only). */
  public async knownApplications(keys: readonly ApplicationKey[]): Promise<Set<string>> {
    const items = await batchGetAll(this.client, this.tables.applications, keys.map(applicationKeyFields), {
      ProjectionExpression: 'pk',
    });
    return new Set(items.map(({ pk }) => String(pk).slice(String(pk).indexOf('#') + 1)));
  }

  /**
   * A connection's applications in `states` (the state index, keys only, then each record read whole and
   * consistently): what is still open, without reading every application of every job. One Query, over the states'
   * range in the index's order: the open states (`claimed` to `invited`) are one range, apart from `left` and
   * `written_back`. A record that has moved on since the index saw it is left out.
   */
  public async listApplicationsInStates(
    connectionId: string,
    states: readonly ApplicationState[],
  ): Promise<ApplicationRecord[]> {
    const { name, partitionKey, sortKey } = MAPPING_TABLES.applications.stateIndex;
    const index = { table: this.tables.applications, name, partitionKey, sortKey };
    const sorted = [...states].sort();
    const [from, to] = [sorted[0], sorted.at(-1)];
    if (from === undefined || to === undefined) return [];
    // By key: an application that changed state between two pages of the index may be listed twice.
    const keys = new Map<string, { pk: string; sk: string }>();
    await this.forEachIndexKeys<{ pk: string; sk: string; state: ApplicationState }>(
      index,
      { partition: connectionId, from, to },
      `open applications of connection ${connectionId}`,
      (page) => {
        for (const { pk, sk, state } of page) if (states.includes(state)) keys.set(`${pk}\n${sk}`, { pk, sk });
      },
    );
    const items = await batchGetAll(this.client, this.tables.applications, [...keys.values()], {
      ConsistentRead: true,
    });
    return items.map(toApplication).filter((record) => states.includes(record.state));
  }

  /**
   * The statuses claimed by each of a candidate's applications in the connection (candidate index, keys only, then
   * each record), for an ATS whose tags belong to the candidate rather than to one application.
   */
  public async candidateStatuses(connectionId: string, atsCandidateId: string): Promise<string[]> {
    const statuses: string[] = [];
    await this.forEachCandidateKeys(connectionId, atsCandidateId, async (keys) => {
      for (const { pk, sk } of keys) {
        const result = await this.send(
          new GetItemCommand({
            TableName: this.tables.applications,
            Key: marshall({ pk, sk }),
            // The old field too: an application recorded before the steps map (legacy-steps.ts).
            ProjectionExpression: '#steps.#status, statusTag, statusRank',
            ExpressionAttributeNames: { '#steps': 'steps', '#status': 'status' },
            ConsistentRead: true,
          }),
        );
        const status = result.Item ? toApplication(unmarshall(result.Item)).steps.status?.value : undefined;
        if (typeof status === 'string') statuses.push(status);
      }
    });
    return statuses;
  }
}
