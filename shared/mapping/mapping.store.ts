import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AWS_CLIENT_CONFIG } from '../aws/client-config';
import type { MappingStore } from '../pipeline/ports';
import type { DynamoMappingStoreOptions } from './dynamo-tables';
import { DynamoJobRecords } from './jobs.records';
import { DynamoInviteClaims } from './invite-claims.records';
import { DynamoWriteBacks } from './write-backs.records';
import { DynamoApplicationReads } from './application-reads.records';
import { DynamoSteps } from './steps.records';
import { DynamoEventRecords } from './events.records';
import { DynamoCandidatePurge } from './candidate-purge.records';
import { DynamoLifecycle } from './lifecycle.records';

export type { DynamoMappingStoreOptions, MappingTableNames } from './dynamo-tables';

/** The pipeline's port, and the operator's reads (`npm run ops`). */
export type DynamoMappingStore = MappingStore &
  Pick<DynamoApplicationReads, 'listFailedApplications'> &
  Pick<DynamoWriteBacks, 'reopenWriteBack'> &
  Pick<DynamoEventRecords, 'listParkedReports' | 'parkedReport'>;

/**
 * The mapping tables on DynamoDB, one repository per record kind (jobs, invite claims, write-backs, application
 * reads, steps, events, the candidate purge), all on one client; every state change is a conditional write.
 */
export function dynamoMappingStore(options: DynamoMappingStoreOptions): DynamoMappingStore {
  const shared = { ...options, client: options.client ?? new DynamoDBClient(AWS_CLIENT_CONFIG) };
  const jobs = new DynamoJobRecords(shared);
  const invites = new DynamoInviteClaims(shared);
  const writeBacks = new DynamoWriteBacks(shared);
  const reads = new DynamoApplicationReads(shared);
  const steps = new DynamoSteps(shared);
  const events = new DynamoEventRecords(shared);
  const purge = new DynamoCandidatePurge(shared);
  const lifecycle = new DynamoLifecycle(shared);
  return {
    getJob: (...args) => jobs.getJob(...args),
    leaseJob: (...args) => jobs.leaseJob(...args),
    completeJob: (...args) => jobs.completeJob(...args),
    recordJobTemplate: (...args) => jobs.recordJobTemplate(...args),
    listJobs: (...args) => jobs.listJobs(...args),
    recordReportsReadFrom: (...args) => jobs.recordReportsReadFrom(...args),
    claimApplication: (...args) => invites.claimApplication(...args),
    releaseClaim: (...args) => invites.releaseClaim(...args),
    markApplicationFailed: (...args) => invites.markApplicationFailed(...args),
    claimWriteBack: (...args) => writeBacks.claimWriteBack(...args),
    reopenWriteBack: (...args) => writeBacks.reopenWriteBack(...args),
    listFailedApplications: (...args) => reads.listFailedApplications(...args),
    findApplicationByInterview: (...args) => reads.findApplicationByInterview(...args),
    findApplicationByServiceCandidate: (...args) => reads.findApplicationByServiceCandidate(...args),
    listApplicationsByInterview: (...args) => reads.listApplicationsByInterview(...args),
    listApplicationsInStates: (...args) => reads.listApplicationsInStates(...args),
    knownApplications: (...args) => reads.knownApplications(...args),
    candidateStatuses: (...args) => reads.candidateStatuses(...args),
    getApplication: (...args) => reads.getApplication(...args),
    findApplicationsByAtsId: (...args) => reads.findApplicationsByAtsId(...args),
    recordStep: (...args) => steps.recordStep(...args),
    beginStep: (...args) => steps.beginStep(...args),
    forgetStep: (...args) => steps.forgetStep(...args),
    expireApplication: (...args) => steps.expireApplication(...args),
    recordExit: (...args) => lifecycle.recordExit(...args),
    undoExit: (...args) => lifecycle.undoExit(...args),
    applyOperatorRequest: (...args) => lifecycle.applyOperatorRequest(...args),
    rememberReplayKey: (...args) => events.rememberReplayKey(...args),
    rememberStageNames: (...args) => events.rememberStageNames(...args),
    stageNames: (...args) => events.stageNames(...args),
    forgetReplayKey: (...args) => events.forgetReplayKey(...args),
    noteExitSeen: (...args) => events.noteExitSeen(...args),
    exitSeenAt: (...args) => events.exitSeenAt(...args),
    listParkedReports: (...args) => events.listParkedReports(...args),
    parkedReport: (...args) => events.parkedReport(...args),
    unparkReport: (...args) => events.unparkReport(...args),
    getSweepProgress: (...args) => events.getSweepProgress(...args),
    saveSweepProgress: (...args) => events.saveSweepProgress(...args),
    isReportParked: (...args) => events.isReportParked(...args),
    parkUnmatchedReport: (...args) => events.parkUnmatchedReport(...args),
    purgeCandidate: (...args) => purge.purgeCandidate(...args),
  };
}
