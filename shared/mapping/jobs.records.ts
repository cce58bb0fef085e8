import { ConditionalCheckFailedException, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { Lease, LeaseJobResult } from '../pipeline/ports';
import type { JobKey, JobRecord } from '../pipeline/records';
import { MAPPING_TABLES } from './constants';
import { buildUpdate, withNames } from './expressions';
import { readAll } from './paging';

import { DynamoTables, jobPk } from './dynamo-tables';

/** A job × trigger's interview: elected creator, ready record, template, a connection's jobs. */
export class DynamoJobRecords extends DynamoTables {
  public async getJob(key: JobKey): Promise<JobRecord | undefined> {
    const result = await this.send(
      new GetItemCommand({ TableName: this.tables.jobs, Key: marshall({ pk: jobPk(key) }), ConsistentRead: true }),
    );
    return result.Item ? (unmarshall(result.Item) as JobRecord) : undefined;
  }

  public async leaseJob(
    key: JobKey,
    details: { interviewName: string; templateHash: string; jobName?: string | undefined },
    lease: Lease,
  ): Promise<LeaseJobResult> {
    const update = withNames(
      buildUpdate({
        set: {
          ...key,
          leaseOwner: lease.owner,
          leaseUntil: lease.now + lease.durationMs,
          interviewName: details.interviewName,
          templateHash: details.templateHash,
          jobName: details.jobName,
          updatedAt: lease.now,
        },
        setIfMissing: { state: 'creating' },
        increment: ['createAttempts'],
        extraValues: { ':creating': 'creating', ':now': lease.now },
      }),
      'state',
      'leaseUntil',
    );
    try {
      const result = await this.send(
        new UpdateItemCommand({
          TableName: this.tables.jobs,
          Key: marshall({ pk: jobPk(key) }),
          ...update,
          ConditionExpression: 'attribute_not_exists(pk) OR (#state = :creating AND #leaseUntil < :now)',
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'leased', record: unmarshall(result.Attributes ?? {}) as JobRecord };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const record = error.Item ? (unmarshall(error.Item) as JobRecord) : await this.getJob(key);
      if (!record) throw error;
      return record.state === 'ready' ? { kind: 'ready', record } : { kind: 'busy', record };
    }
  }

  public async completeJob(
    key: JobKey,
    owner: string,
    interview: { interviewId: string; inviteUrl: string; templateHash: string },
  ): Promise<JobRecord> {
    const update = withNames(
      buildUpdate({
        set: { ...interview, state: 'ready', updatedAt: Date.now() },
        remove: ['leaseOwner', 'leaseUntil'],
        extraValues: { ':owner': owner },
      }),
      'leaseOwner',
    );
    const attributes = await this.updateIfHeld(
      { TableName: this.tables.jobs, Key: marshall({ pk: jobPk(key) }) },
      update,
      `job ${key.atsJobId}`,
    );
    return unmarshall(attributes) as JobRecord;
  }

  /** On the job's record only while it exists: never a bare record of a job the TTL or an operator removed. */
  public recordJobTemplate(key: JobKey, templateHash: string): Promise<void> {
    return this.updateExistingJob(key, buildUpdate({ set: { templateHash, updatedAt: Date.now() } }));
  }

  /** On the job's record only while it exists; its `updatedAt` untouched (the reconciler's cadence reads it). */
  public recordReportsReadFrom(key: JobKey, page: number | undefined): Promise<void> {
    const update = buildUpdate(
      page === undefined ? { remove: ['reportsReadFrom'] } : { set: { reportsReadFrom: page } },
    );
    return this.updateExistingJob(key, update);
  }

  private async updateExistingJob(key: JobKey, update: ReturnType<typeof buildUpdate>): Promise<void> {
    const Key = marshall({ pk: jobPk(key) });
    // A removal alone has no values, and DynamoDB refuses an empty ExpressionAttributeValues.
    const { ExpressionAttributeValues: values, ...parts } = update;
    const command = { TableName: this.tables.jobs, Key, ...parts, ConditionExpression: 'attribute_exists(pk)' };
    const withValues = Object.keys(values).length ? { ...command, ExpressionAttributeValues: values } : command;
    await this.ifExists(new UpdateItemCommand(withValues));
  }

  /** A connection's jobs, read by the connection index: the cost is this connection's jobs, not every customer's. */
  public listJobs(connectionId: string): Promise<JobRecord[]> {
    const { name, partitionKey } = MAPPING_TABLES.jobs.connectionIndex;
    return readAll(this.read(`Query ${name}`), {
      query: {
        TableName: this.tables.jobs,
        IndexName: name,
        KeyConditionExpression: '#c = :c',
        ExpressionAttributeNames: { '#c': partitionKey },
        ExpressionAttributeValues: marshall({ ':c': connectionId }),
      },
    });
  }
}
