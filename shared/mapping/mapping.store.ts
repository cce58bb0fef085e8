import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
  type QueryCommandInput,
  type ScanCommandInput,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type {
  ApplicationClaimInput,
  ClaimApplicationResult,
  ClaimWriteBackResult,
  SweepProgress,
  InviteStep,
  Lease,
  LeaseJobResult,
  MappingStore,
} from '../pipeline/ports';
import type { ApplicationKey, ApplicationRecord, JobKey, JobRecord } from '../pipeline/records';
import { MAPPING_TABLES, MAX_QUERY_PAGES, RETENTION_DEFAULTS } from './constants';
import { LeaseLostError } from './errors';
import { buildUpdate, withNames } from './expressions';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import { stageLedgerKey } from './queue-ledger';
import { type PagedRead, pages, readAll } from './paging';

export interface MappingTableNames {
  jobs: string;
  applications: string;
  events: string;
}

/** The events-table key that marks a candidate the ATS deleted. */
const tombstoneKey = (connectionId: string, atsCandidateId: string) => `deleted#${connectionId}#${atsCandidateId}`;

export interface DynamoMappingStoreOptions {
  tables: MappingTableNames;
  client?: DynamoDBClient;
  retention?: { applicationDays?: number; eventDays?: number };
  /** Items per Query or Scan page (DynamoDB's own 1 MB pages when absent) and the page cap; tests set both. */
  paging?: { pageSize?: number; maxPages?: number };
}

const jobPk = (key: JobKey): string => `${key.connectionId}#${key.atsJobId}#${key.triggerId}`;
const applicationKeyFields = (key: ApplicationKey): { pk: string; sk: string } => ({
  pk: `${key.connectionId}#${key.atsApplicationId}`,
  sk: key.triggerId,
});
const applicationKey = (key: ApplicationKey): Record<string, AttributeValue> => marshall(applicationKeyFields(key));
const DAY_SECONDS = 86_400;

/** The mapping tables on DynamoDB; every state change is a conditional write. */
export class DynamoMappingStore implements MappingStore {
  private readonly client: DynamoDBClient;
  private readonly tables: MappingTableNames;
  private readonly applicationDays: number;
  private readonly eventDays: number;
  private readonly paging: { pageSize: number | undefined; maxPages: number };

  /** Every call aborts with the worker's deadline (shared/aws/deadline.ts). */
  private readonly send: DynamoDBClient['send'] = ((command: never) =>
    this.client.send(command, { abortSignal: currentDeadline() })) as never;

  public constructor(options: DynamoMappingStoreOptions) {
    this.client = options.client ?? new DynamoDBClient(AWS_CLIENT_CONFIG);
    this.paging = { pageSize: options.paging?.pageSize, maxPages: options.paging?.maxPages ?? MAX_QUERY_PAGES };
    this.tables = options.tables;
    this.applicationDays = options.retention?.applicationDays ?? RETENTION_DEFAULTS.applicationDays;
    this.eventDays = options.retention?.eventDays ?? RETENTION_DEFAULTS.eventDays;
  }

  /**
   * One transaction: the delivery is recorded and the application × trigger claimed when new. Only when the
   * claim exists (a retry after a crash, a duplicate) is a second request made, to take over an expired lease.
   */
  public async claimApplication(
    delivery: { source: string; deliveryId: string; enqueueId: string },
    input: ApplicationClaimInput,
    lease: Lease,
  ): Promise<ClaimApplicationResult> {
    const fields = {
      atsCandidateId: input.atsCandidateId,
      atsJobId: input.atsJobId,
      stageId: input.stageId,
      connectionId: input.connectionId,
      atsApplicationId: input.atsApplicationId,
      triggerId: input.triggerId,
      candidateEmail: input.candidateEmail,
    };
    const fresh: ApplicationRecord = {
      ...fields,
      state: 'claimed',
      leaseOwner: lease.owner,
      leaseUntil: lease.now + lease.durationMs,
      createdAt: lease.now,
      updatedAt: lease.now,
    };
    try {
      await this.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tables.events,
                Item: marshall({
                  pk: `${delivery.source}#${delivery.deliveryId}`,
                  kind: 'delivery',
                  connectionId: input.connectionId,
                  enqueueId: delivery.enqueueId,
                  receivedAt: lease.now,
                  [MAPPING_TABLES.ttlAttribute]: this.expiry(lease.now, this.eventDays),
                }),
                // The same message again (a retry or a DLQ redrive) may pass; another delivery of the same event may
                // not.
                ConditionExpression: 'attribute_not_exists(pk) OR enqueueId = :enqueueId',
                ExpressionAttributeValues: marshall({ ':enqueueId': delivery.enqueueId }),
              },
            },
            {
              Put: {
                TableName: this.tables.applications,
                Item: marshall(
                  {
                    ...applicationKeyFields(input),
                    ...fresh,
                    candidateKey: `${input.connectionId}#${input.atsCandidateId}`,
                    [MAPPING_TABLES.ttlAttribute]: this.expiry(lease.now, this.applicationDays),
                  },
                  { removeUndefinedValues: true },
                ),
                ConditionExpression: 'attribute_not_exists(pk)',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            {
              // A candidate the ATS deleted stays deleted: no delivery, late or replayed, records or invites them.
              ConditionCheck: {
                TableName: this.tables.events,
                Key: marshall({ pk: tombstoneKey(input.connectionId, input.atsCandidateId) }),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
      return { kind: 'claimed', record: fresh, resumed: false };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const [deliveryReason, claimReason, tombstoneReason] = error.CancellationReasons ?? [];
      if (tombstoneReason?.Code === 'ConditionalCheckFailed') return { kind: 'candidate-deleted' };
      if (deliveryReason?.Code === 'ConditionalCheckFailed') return { kind: 'duplicate-delivery' };
      if (claimReason?.Code !== 'ConditionalCheckFailed') throw error;
      const record = claimReason.Item
        ? (unmarshall(claimReason.Item) as ApplicationRecord)
        : await this.getApplication(input);
      if (!record) throw error;
      if (record.state === 'failed' && record.reportId === undefined)
        return this.reclaimFailedInvite(input, record, lease);
      if (record.state !== 'claimed') return { kind: 'already-invited', record };
      if (record.leaseUntil !== undefined && record.leaseUntil >= lease.now) return { kind: 'held-elsewhere', record };
      return this.takeOverClaim(input, record, lease);
    }
  }

  /**
   * An invite that failed for good (a revoked key, a missing permission) is tried again when the candidate
   * enters the stage anew, after the cause is fixed: a new delivery, since the one that failed is recorded.
   * The steps it had done stay recorded and are skipped; `resumed` makes the worker look for its note first.
   */
  private async reclaimFailedInvite(
    input: ApplicationClaimInput,
    previous: ApplicationRecord,
    lease: Lease,
  ): Promise<ClaimApplicationResult> {
    const update = withNames(
      buildUpdate({
        set: {
          state: 'claimed',
          leaseOwner: lease.owner,
          leaseUntil: lease.now + lease.durationMs,
          updatedAt: lease.now,
          stageId: input.stageId,
          atsJobId: input.atsJobId,
          candidateEmail: input.candidateEmail,
        },
        remove: ['failureReason'],
        increment: ['inviteClaims'],
        extraValues: { ':failed': 'failed' },
      }),
      'state',
      'reportId',
    );
    try {
      const result = await this.send(
        new UpdateItemCommand({
          TableName: this.tables.applications,
          Key: applicationKey(input),
          ...update,
          ConditionExpression: '#state = :failed AND attribute_not_exists(#reportId)',
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { kind: 'claimed', record: unmarshall(result.Attributes ?? {}) as ApplicationRecord, resumed: true };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return { kind: 'held-elsewhere', record: previous };
      throw error;
    }
  }

  /** A claim whose worker stopped (crash, timeout): its lease has run out, so this worker resumes its steps. */
  private async takeOverClaim(
    key: ApplicationKey,
    previous: ApplicationRecord,
    lease: Lease,
  ): Promise<ClaimApplicationResult> {
    const update = withNames(
      buildUpdate({
        set: { leaseOwner: lease.owner, leaseUntil: lease.now + lease.durationMs, updatedAt: lease.now },
        increment: ['inviteClaims'],
        extraValues: { ':claimed': 'claimed', ':now': lease.now },
      }),
      'state',
      'leaseUntil',
    );
    try {
      const result = await this.send(
        new UpdateItemCommand({
          TableName: this.tables.applications,
          Key: applicationKey(key),
          ...update,
          ConditionExpression: '#state = :claimed AND (attribute_not_exists(#leaseUntil) OR #leaseUntil < :now)',
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { kind: 'claimed', record: unmarshall(result.Attributes ?? {}) as ApplicationRecord, resumed: true };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return { kind: 'held-elsewhere', record: previous };
      throw error;
    }
  }

  public async recordInviteStep(
    key: ApplicationKey,
    owner: string,
    step: InviteStep & { interviewId: string; candidateEmail?: string | undefined },
  ): Promise<void> {
    const invitation = step.serviceInvitation;
    await this.updateHeldApplication(key, owner, {
      set: {
        serviceInviteStartedAt: step.serviceInviteStartedAt,
        serviceCandidateId: invitation?.candidateId,
        candidateInviteUrl: invitation?.inviteUrl,
        serviceInviteAt: invitation?.at,
        serviceCandidateKey: invitation ? `${step.interviewId}#${invitation.candidateId}` : undefined,
        interviewId: step.interviewId,
        candidateEmail: step.candidateEmail,
        inviteEmailStartedAt: step.inviteEmailStartedAt,
        inviteEmailAt: step.inviteEmailAt,
        inviteEmailUncertain: step.inviteEmailUncertain,
        inviteEmailRefused: step.inviteEmailRefused,
        inviteNoteAt: step.inviteNoteAt,
        statusTag: step.statusTag,
        updatedAt: Date.now(),
        ...(step.done ? { state: 'invited' } : {}),
      },
      remove: [
        ...(step.done ? ['leaseOwner', 'leaseUntil'] : []),
        ...(step.clearEmailStart ? ['inviteEmailStartedAt'] : []),
      ],
    });
  }

  public async releaseClaim(key: ApplicationKey, owner: string, cleanStop: string | undefined): Promise<void> {
    await this.updateHeldApplication(key, owner, {
      set: { cleanStop, updatedAt: Date.now() },
      remove: cleanStop === undefined ? ['leaseOwner', 'leaseUntil', 'cleanStop'] : ['leaseOwner', 'leaseUntil'],
    });
  }

  public async markApplicationFailed(key: ApplicationKey, owner: string, reason: string): Promise<void> {
    await this.updateHeldApplication(key, owner, {
      set: { state: 'failed', failureReason: reason.slice(0, 500), updatedAt: Date.now() },
      remove: ['leaseOwner', 'leaseUntil'],
    });
  }

  public async getJob(key: JobKey): Promise<JobRecord | undefined> {
    const result = await this.send(
      new GetItemCommand({ TableName: this.tables.jobs, Key: marshall({ pk: jobPk(key) }), ConsistentRead: true }),
    );
    return result.Item ? (unmarshall(result.Item) as JobRecord) : undefined;
  }

  public async leaseJob(
    key: JobKey,
    details: { interviewName: string; templateHash: string },
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
    const attributes = await this.conditionalUpdate(
      this.tables.jobs,
      marshall({ pk: jobPk(key) }),
      update,
      '#leaseOwner = :owner',
      `job ${key.atsJobId}`,
    );
    return unmarshall(attributes) as JobRecord;
  }

  /** On the job's record only while it exists: never a bare record of a job the TTL or an operator removed. */
  public async recordJobTemplate(key: JobKey, templateHash: string): Promise<void> {
    const update = buildUpdate({ set: { templateHash, updatedAt: Date.now() } });
    await this.ifExists(
      new UpdateItemCommand({
        TableName: this.tables.jobs,
        Key: marshall({ pk: jobPk(key) }),
        ...update,
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
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

  /**
   * Applications refused for good, of one connection or all (`npm run ops -- failed`), and invitations whose
   * e-mail SES refused (the note carried the link; the candidate has no e-mail).
   */
  public listFailedApplications(connectionId?: string): Promise<ApplicationRecord[]> {
    const failed = '(#state = :failed OR attribute_exists(inviteEmailRefused))';
    return this.scanAll<ApplicationRecord>({
      TableName: this.tables.applications,
      FilterExpression: connectionId ? `${failed} AND connectionId = :c` : failed,
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: marshall(
        connectionId ? { ':failed': 'failed', ':c': connectionId } : { ':failed': 'failed' },
      ),
    });
  }

  public findApplicationsByAtsId(connectionId: string, atsApplicationId: string): Promise<ApplicationRecord[]> {
    return this.queryAll({
      TableName: this.tables.applications,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: marshall({ ':pk': `${connectionId}#${atsApplicationId}` }),
      ConsistentRead: true,
    });
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
    return item ? (unmarshall(item) as ApplicationRecord) : undefined;
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

  public async claimWriteBack(
    key: ApplicationKey,
    reportId: string,
    lease: Lease,
    reportCandidateId?: string,
  ): Promise<ClaimWriteBackResult> {
    const update = withNames(
      buildUpdate({
        set: {
          reportId,
          reportCandidateId,
          state: 'completed',
          leaseOwner: lease.owner,
          leaseUntil: lease.now + lease.durationMs,
          updatedAt: lease.now,
        },
        increment: ['writeBackAttempts'],
        extraValues: {
          ':claimed': 'claimed',
          ':invited': 'invited',
          ':expired': 'expired',
          ':completed': 'completed',
          ':now': lease.now,
        },
      }),
      'state',
      'leaseUntil',
    );
    try {
      const result = await this.send(
        new UpdateItemCommand({
          TableName: this.tables.applications,
          Key: applicationKey(key),
          ...update,
          ConditionExpression:
            // A report that comes after the invitation expired is still written back.
            '(#state IN (:claimed, :invited, :expired) AND attribute_not_exists(#reportId)) OR ' +
            '(#reportId = :reportId AND #state = :completed AND ' +
            '(attribute_not_exists(#leaseUntil) OR #leaseUntil < :now))',
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'claimed', record: unmarshall(result.Attributes ?? {}) as ApplicationRecord };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const record = (
        error.Item
          ? unmarshall(error.Item)
          : (await this.findApplicationsByAtsId(key.connectionId, key.atsApplicationId)).find(
              (r) => r.triggerId === key.triggerId,
            )
      ) as ApplicationRecord | undefined;
      if (!record) throw error;
      if (record.reportId !== reportId) return { kind: 'other-report', record };
      return record.state === 'written_back' ? { kind: 'done', record } : { kind: 'busy', record };
    }
  }

  /**
   * An operator fixed what made a write-back fail for good (`npm run ops -- retry`): the application goes back to
   * `completed` with no lease, so the next claim of its report resumes the steps not yet recorded.
   */
  public async reopenFailedWriteBack(key: ApplicationKey): Promise<ApplicationRecord | undefined> {
    const update = withNames(
      buildUpdate({
        set: { state: 'completed', updatedAt: Date.now() },
        remove: ['failureReason', 'leaseOwner', 'leaseUntil'],
        extraValues: { ':failed': 'failed' },
      }),
      'state',
      'reportId',
    );
    try {
      const result = await this.send(
        new UpdateItemCommand({
          TableName: this.tables.applications,
          Key: applicationKey(key),
          ...update,
          ConditionExpression: '#state = :failed AND attribute_exists(#reportId)',
          ReturnValues: 'ALL_NEW',
        }),
      );
      return unmarshall(result.Attributes ?? {}) as ApplicationRecord;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  public async recordWriteBackStep(
    key: ApplicationKey,
    owner: string,
    step: {
      reportLinkAt?: number;
      reportNoteId?: string;
      reportNoteAt?: number;
      movedToStageId?: string;
      movedAt?: number;
      flaggedForReview?: boolean;
      statusTag?: string;
      done: boolean;
    },
  ): Promise<void> {
    const { done, ...fields } = step;
    await this.updateHeldApplication(key, owner, {
      set: { ...fields, updatedAt: Date.now(), ...(done ? { state: 'written_back' } : {}) },
      remove: done ? ['leaseOwner', 'leaseUntil'] : [],
    });
  }

  public async rememberReplayKey(connectionId: string, key: string, now: number, ttlSeconds: number): Promise<boolean> {
    try {
      await this.send(
        new PutItemCommand({
          TableName: this.tables.events,
          Item: marshall({
            pk: `replay#${connectionId}#${key}`,
            kind: 'replay-key',
            connectionId,
            seenAt: now,
            [MAPPING_TABLES.ttlAttribute]: Math.floor(now / 1000) + ttlSeconds,
          }),
          // TTL deletion lags; an expired key counts as unseen.
          ConditionExpression: 'attribute_not_exists(pk) OR #expiresAt < :nowSeconds',
          ExpressionAttributeNames: { '#expiresAt': MAPPING_TABLES.ttlAttribute },
          ExpressionAttributeValues: marshall({ ':nowSeconds': Math.floor(now / 1000) }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  public async forgetReplayKey(connectionId: string, key: string): Promise<void> {
    await this.send(
      new DeleteItemCommand({ TableName: this.tables.events, Key: marshall({ pk: `replay#${connectionId}#${key}` }) }),
    );
  }

  /** Deletes every application record of the candidate (found by the candidate index and by the ids given). */
  public async purgeCandidate(
    connectionId: string,
    atsCandidateId: string,
    atsApplicationIds: readonly string[] = [],
  ): Promise<{ applications: number }> {
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
    return { applications: keys.size };
  }

  /** Reports parked as unmatched, every page of them (`npm run ops -- unmatched`). */
  public listParkedReports(connectionId?: string): Promise<Record<string, unknown>[]> {
    return this.scanAll<Record<string, unknown>>({
      TableName: this.tables.events,
      FilterExpression: connectionId ? 'kind = :k AND connectionId = :c' : 'kind = :k',
      ExpressionAttributeValues: marshall(
        connectionId ? { ':k': 'unmatched-report', ':c': connectionId } : { ':k': 'unmatched-report' },
      ),
    });
  }

  /** One parked report, read by its key (`npm run ops -- match`). */
  public async parkedReport(connectionId: string, reportId: string): Promise<Record<string, unknown> | undefined> {
    const result = await this.send(
      new GetItemCommand({
        TableName: this.tables.events,
        Key: marshall({ pk: `unmatched#${connectionId}#${reportId}` }),
        ConsistentRead: true,
      }),
    );
    return result.Item ? unmarshall(result.Item) : undefined;
  }

  public async unparkReport(connectionId: string, reportId: string): Promise<void> {
    await this.send(
      new DeleteItemCommand({
        TableName: this.tables.events,
        Key: marshall({ pk: `unmatched#${connectionId}#${reportId}` }),
      }),
    );
  }

  public async beginReminder(key: ApplicationKey, n: number, now: number): Promise<boolean> {
    const update = withNames(
      buildUpdate({
        set: { remindersStarted: n + 1, updatedAt: now },
        extraValues: { ':n': n, ':invited': 'invited' },
      }),
      'state',
    );
    return this.updateApplicationIf(
      key,
      update,
      '#state = :invited AND (attribute_not_exists(#remindersStarted) OR #remindersStarted = :n)',
    );
  }

  /** Recorded on the application while it exists: a reminder finished after a privacy purge re-creates nothing. */
  public async finishReminder(key: ApplicationKey, n: number, now: number): Promise<void> {
    const update = buildUpdate({ set: { remindersSent: n + 1, lastReminderAt: now, updatedAt: now } });
    await this.updateApplicationIf(key, update, 'attribute_exists(pk)');
  }

  public async expireApplication(key: ApplicationKey, now: number): Promise<ApplicationRecord | undefined> {
    const update = withNames(
      buildUpdate({
        set: { state: 'expired', expiredAt: now, updatedAt: now },
        extraValues: { ':invited': 'invited' },
      }),
      'state',
    );
    try {
      const result = await this.send(
        new UpdateItemCommand({
          TableName: this.tables.applications,
          Key: applicationKey(key),
          ...update,
          // Only an invitation with no report expires; one already expired keeps its first time.
          ConditionExpression: '#state = :invited',
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return unmarshall(result.Attributes ?? {}) as ApplicationRecord;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const record = error.Item ? (unmarshall(error.Item) as ApplicationRecord) : undefined;
      return record?.state === 'expired' ? record : undefined;
    }
  }

  public async leaseExpiryNote(key: ApplicationKey, now: number, until: number): Promise<boolean> {
    const update = withNames(
      buildUpdate({ set: { expiryLeaseUntil: until }, extraValues: { ':now': now, ':expired': 'expired' } }),
      'state',
      'expiryNoteAt',
    );
    return this.updateApplicationIf(
      key,
      update,
      '#state = :expired AND attribute_not_exists(#expiryNoteAt) AND ' +
        '(attribute_not_exists(#expiryLeaseUntil) OR #expiryLeaseUntil < :now)',
    );
  }

  public async claimStatus(key: ApplicationKey, status: string, rank: number): Promise<boolean> {
    const update = withNames(
      buildUpdate({ set: { statusTag: status, statusRank: rank, updatedAt: Date.now() } }),
      'statusRank',
    );
    return this.updateApplicationIf(
      key,
      update,
      'attribute_exists(pk) AND (attribute_not_exists(#statusRank) OR #statusRank <= :statusRank)',
    );
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
            ProjectionExpression: 'statusTag',
            ConsistentRead: true,
          }),
        );
        const status = result.Item ? unmarshall(result.Item).statusTag : undefined;
        if (typeof status === 'string') statuses.push(status);
      }
    });
    return statuses;
  }

  /** Recorded on the application while it exists: a follow-up finished after a privacy purge re-creates nothing. */
  public async recordFollowUp(key: ApplicationKey, fields: { expiryNoteAt?: number; statusTag?: string }) {
    const update = buildUpdate({ set: { ...fields, updatedAt: Date.now() } });
    await this.updateApplicationIf(key, update, 'attribute_exists(pk)');
  }

  /** A conditional write whose condition is the item's existence: an item gone is nothing to record. */
  private async ifExists(command: UpdateItemCommand): Promise<void> {
    try {
      await this.send(command);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** A conditional update of an application: true when it was made, false when the condition did not hold. */
  private async updateApplicationIf(
    key: ApplicationKey,
    update: ReturnType<typeof buildUpdate>,
    condition: string,
  ): Promise<boolean> {
    try {
      await this.send(
        new UpdateItemCommand({
          TableName: this.tables.applications,
          Key: applicationKey(key),
          ...update,
          ConditionExpression: condition,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  public async getSweepProgress(connectionId: string, triggerId: string): Promise<SweepProgress | undefined> {
    const result = await this.send(
      new GetItemCommand({
        TableName: this.tables.events,
        Key: marshall({ pk: `sweep#${connectionId}#${triggerId}` }),
        ConsistentRead: true,
      }),
    );
    if (!result.Item) return undefined;
    const { cursor, startedAt, completedAt, found } = unmarshall(result.Item) as SweepProgress;
    return { cursor, startedAt, completedAt, found };
  }

  public async saveSweepProgress(connectionId: string, triggerId: string, progress: SweepProgress): Promise<void> {
    await this.send(
      new PutItemCommand({
        TableName: this.tables.events,
        Item: marshall({ pk: `sweep#${connectionId}#${triggerId}`, ...progress }, { removeUndefinedValues: true }),
      }),
    );
  }

  /** BatchGetItem, 100 keys a request (its limit), keys only; unprocessed keys are asked for again, 5 times at most. */
  public async knownApplications(keys: readonly ApplicationKey[]): Promise<Set<string>> {
    const known = new Set<string>();
    for (let start = 0; start < keys.length; start += 100) {
      let pending: Record<string, AttributeValue>[] = keys
        .slice(start, start + 100)
        .map((key) => marshall(applicationKeyFields(key)));
      for (let attempt = 1; pending.length; attempt++) {
        if (attempt > 5) throw new Error(`DynamoDB left ${pending.length} keys unprocessed five times`);
        const result = await this.send(
          new BatchGetItemCommand({
            RequestItems: { [this.tables.applications]: { Keys: pending, ProjectionExpression: 'pk' } },
          }),
        );
        for (const item of result.Responses?.[this.tables.applications] ?? []) {
          const pk = String(unmarshall(item).pk);
          known.add(pk.slice(pk.indexOf('#') + 1));
        }
        pending = (result.UnprocessedKeys?.[this.tables.applications]?.Keys ?? []) as Record<string, AttributeValue>[];
      }
    }
    return known;
  }

  public async isReportParked(connectionId: string, reportId: string): Promise<boolean> {
    const result = await this.send(
      new GetItemCommand({
        TableName: this.tables.events,
        Key: marshall({ pk: `unmatched#${connectionId}#${reportId}` }),
        ProjectionExpression: 'pk',
      }),
    );
    return result.Item !== undefined;
  }

  public async parkUnmatchedReport(
    connectionId: string,
    report: { reportId: string; interviewId: string; candidateId: string },
    reason: string,
    now: number,
  ): Promise<void> {
    await this.send(
      new PutItemCommand({
        TableName: this.tables.events,
        Item: marshall({
          pk: `unmatched#${connectionId}#${report.reportId}`,
          kind: 'unmatched-report',
          connectionId,
          ...report,
          reason,
          parkedAt: now,
          [MAPPING_TABLES.ttlAttribute]: this.expiry(now, this.eventDays),
        }),
      }),
    );
  }

  public async getApplication(key: ApplicationKey): Promise<ApplicationRecord | undefined> {
    const result = await this.send(
      new GetItemCommand({ TableName: this.tables.applications, Key: applicationKey(key), ConsistentRead: true }),
    );
    return result.Item ? (unmarshall(result.Item) as ApplicationRecord) : undefined;
  }

  /** An update of an application only its claim's holder may make (a lost lease is a LeaseLostError). */
  private async updateHeldApplication(
    key: ApplicationKey,
    owner: string,
    parts: { set: Record<string, unknown>; remove: string[] },
  ): Promise<void> {
    await this.conditionalUpdate(
      this.tables.applications,
      applicationKey(key),
      withNames(buildUpdate({ ...parts, extraValues: { ':owner': owner } }), 'leaseOwner'),
      '#leaseOwner = :owner',
      `application ${key.atsApplicationId}`,
    );
  }

  private async conditionalUpdate(
    table: string,
    key: Record<string, AttributeValue>,
    update: ReturnType<typeof buildUpdate>,
    condition: string,
    what: string,
  ): Promise<Record<string, AttributeValue>> {
    try {
      const result = await this.send(
        new UpdateItemCommand({
          TableName: table,
          Key: key,
          ...update,
          ConditionExpression: condition,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return result.Attributes ?? {};
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new LeaseLostError(what);
      throw error;
    }
  }

  private queryAll(input: QueryCommandInput): Promise<ApplicationRecord[]> {
    return readAll(this.read(`Query ${input.IndexName ?? input.TableName}`), { query: input });
  }

  private scanAll<T>(input: ScanCommandInput): Promise<T[]> {
    return readAll(this.read(`Scan ${input.TableName}`), { scan: input });
  }

  private read(what: string): PagedRead {
    return { client: this.client, pageSize: this.paging.pageSize, maxPages: this.paging.maxPages, what };
  }

  /** Calls `each` with every page of the keys of a candidate's applications (the candidate index projects keys). */
  private async forEachCandidateKeys(
    connectionId: string,
    atsCandidateId: string,
    each: (keys: { pk: string; sk: string }[]) => Promise<void> | void,
  ): Promise<void> {
    const { name, partitionKey } = MAPPING_TABLES.applications.candidateIndex;
    const query = {
      TableName: this.tables.applications,
      IndexName: name,
      KeyConditionExpression: `${partitionKey} = :c`,
      ExpressionAttributeValues: marshall({ ':c': `${connectionId}#${atsCandidateId}` }),
    };
    const read = this.read(`the applications of candidate ${atsCandidateId}`);
    for await (const page of pages<{ pk: string; sk: string }>(read, { query })) await each(page);
  }

  private expiry(now: number, days: number): number {
    return Math.floor(now / 1000) + days * DAY_SECONDS;
  }
}
