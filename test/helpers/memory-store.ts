import { mayMove } from '../../shared/pipeline/application-states';
import { mayReinvite, noteHeldElsewhere } from '../../shared/mapping/invite-claims.records';
import { LeaseLostError } from '../../shared/mapping/errors';
import { EXIT_SEEN_SECONDS } from '../../shared/mapping/dynamo-tables';
import { carriedExpiry } from '../../shared/pipeline/records';
import {
  begunStep,
  newClaim,
  type ApplicationClaimInput,
  type ApplicationExit,
  type ApplicationKey,
  type ApplicationSteps,
  type ApplicationRecord,
  type ApplicationState,
  type ClaimApplicationResult,
  type JobKey,
  type JobRecord,
  type Lease,
  type LeaseJobResult,
  type MappingStore,
  type OperatorRequest,
  type StepBegin,
  type StepName,
  type StepRecord,
  type StepWrite,
  stepsBefore,
  type SweepProgress,
} from '../../shared/pipeline';

type Fields = Record<string, unknown>;
const jobId = (k: JobKey) => `${k.connectionId}#${k.atsJobId}#${k.triggerId}`;
const appId = (k: ApplicationKey) => `${k.connectionId}#${k.atsApplicationId}#${k.triggerId}`;
const copy = <T>(value: T): T => structuredClone(value);

/** Sets the defined fields and removes the named ones, as the repositories' update expressions do. */
function update<T extends object>(item: T, set: Fields, remove: string[] = []): T {
  const next = { ...item } as Fields;
  for (const [name, value] of Object.entries(set)) if (value !== undefined) next[name] = value;
  for (const name of remove) delete next[name];
  return next as T;
}

/** Who may begin a step: the conditions of the DynamoDB repository's `beginStep`, one per kind of begin. */
function mayBegin(
  { state, reinvitations, steps }: Pick<ApplicationRecord, 'state' | 'reinvitations' | 'steps'>,
  step: StepRecord | undefined,
  begin: StepBegin,
): boolean {
  if (begin.kind === 'once')
    return state === begin.state && step === undefined && !begin.unless?.some((other) => steps[other] !== undefined);
  if (begin.round !== undefined && (reinvitations ?? 0) !== begin.round) return false;
  if (begin.kind === 'lease')
    return (
      state === begin.state &&
      step?.doneAt === undefined &&
      ((step?.leaseUntil ?? 0) < begin.now || (begin.holds !== undefined && step?.leaseUntil === begin.holds))
    );
  if (begin.whileState !== undefined && state !== begin.whileState) return false;
  return (step?.rank ?? 0) <= begin.rank;
}

/**
 * The mapping tables in memory, holding the same state rules as the DynamoDB repositories (each rule is the
 * condition of the repository's write): the shared suite in test/helpers/mapping-rules.ts runs against both. For
 * use-case tests that assert outcomes and records rather than calls.
 */
export class MemoryMappingStore implements MappingStore {
  public readonly jobs = new Map<string, JobRecord>();
  public readonly applications = new Map<string, ApplicationRecord>();
  private readonly deliveries = new Map<string, string>();
  private readonly tombstones = new Set<string>();
  private readonly replayKeys = new Map<string, number>();
  private readonly parked = new Map<string, Fields>();
  private readonly sweeps = new Map<string, SweepProgress>();

  /** Puts records as they stand, with no rule applied: a test's fixture of what earlier work left. */
  public seed(records: { jobs?: JobRecord[]; applications?: ApplicationRecord[] }): this {
    for (const job of records.jobs ?? []) this.jobs.set(jobId(job), copy(job));
    for (const application of records.applications ?? []) this.applications.set(appId(application), copy(application));
    return this;
  }

  public async claimApplication(
    delivery: { source: string; deliveryId: string; enqueueId: string },
    input: ApplicationClaimInput,
    lease: Lease,
  ): Promise<ClaimApplicationResult> {
    if (this.tombstones.has(`${input.connectionId}#${input.atsCandidateId}`)) return { kind: 'candidate-deleted' };
    const seen = this.deliveries.get(`${delivery.source}#${delivery.deliveryId}`);
    if (seen !== undefined && seen !== delivery.enqueueId) return { kind: 'duplicate-delivery' };
    const existing = this.applications.get(appId(input));
    const exitSeen = this.exitsSeen.get(`${input.connectionId}#${input.atsApplicationId}`);
    const exitHolds = exitSeen !== undefined && lease.now < exitSeen + EXIT_SEEN_SECONDS * 1000;
    if (!existing && exitHolds && !(input.exitReadAt !== undefined && exitSeen < input.exitReadAt))
      return { kind: 'exit-seen' };
    if (!existing) {
      const fresh = newClaim(input, lease, delivery.deliveryId);
      this.deliveries.set(`${delivery.source}#${delivery.deliveryId}`, delivery.enqueueId);
      this.applications.set(appId(input), fresh);
      return { kind: 'claimed', record: copy(fresh), resumed: false };
    }
    return this.claimExisting(existing, input, lease, delivery.deliveryId);
  }

  private claimExisting(
    record: ApplicationRecord,
    input: ApplicationClaimInput,
    lease: Lease,
    deliveryId: string,
  ): ClaimApplicationResult {
    const held = { leaseOwner: lease.owner, leaseUntil: lease.now + lease.durationMs, updatedAt: lease.now };
    const claims = { inviteClaims: (record.inviteClaims ?? 0) + 1 };
    const { stageId, atsJobId, candidateEmail } = input;
    if (mayMove(record.state, 'reclaimInvite') && record.reportId === undefined) {
      const set = { ...held, ...claims, state: 'claimed', stageId, atsJobId, candidateEmail };
      return { kind: 'claimed', record: this.put(update(record, set, ['failureReason', 'exit'])), resumed: true };
    }
    if (mayReinvite(input, record, deliveryId)) {
      // A worker writing the expired invitation's note holds the re-entry off until its lease ends.
      noteHeldElsewhere(record, lease.now);
      const carried = carriedExpiry(record);
      const again = {
        reinvitations: (record.reinvitations ?? 0) + 1,
        entryDeliveryId: deliveryId,
        earlierSteps: record.steps,
        ...carried,
      };
      const set = { ...held, ...again, state: 'claimed', stageId, atsJobId, candidateEmail };
      const remove = ['expiredAt', 'exit', 'leftFrom', 'returnedAt', 'failureReason', 'cleanStop', 'extendedUntil'];
      if (!carried.priorExpiry) remove.push('priorExpiry');
      return { kind: 'claimed', record: this.put(update(record, set, remove)), resumed: false };
    }
    if (record.state !== 'claimed') return { kind: 'already-invited', record: copy(record) };
    if (record.leaseUntil !== undefined && record.leaseUntil >= lease.now)
      return { kind: 'held-elsewhere', record: copy(record) };
    return { kind: 'claimed', record: this.put(update(record, { ...held, ...claims })), resumed: true };
  }

  public async forgetStep(key: ApplicationKey, name: StepName, value: string): Promise<boolean> {
    const record = this.applications.get(appId(key));
    if (record?.steps[name]?.value !== value) return false;
    const steps: ApplicationSteps = { ...record.steps };
    delete steps[name];
    this.put(update(record, { steps, updatedAt: Date.now() }));
    return true;
  }

  public async recordStep(key: ApplicationKey, write: StepWrite): Promise<void> {
    const { step, before, owner, finish, data } = write;
    const record = this.applications.get(appId(key));
    if (owner !== undefined && record?.leaseOwner !== owner)
      throw new LeaseLostError(`application ${key.atsApplicationId}`);
    // Without a holder, a step is recorded while the application exists: a purge is never undone.
    if (!record) return;
    // A follow-up of an earlier invitation records nothing on the next one; a holder finds its lease lost, as the
    // DynamoDB write's one condition says.
    if (write.round !== undefined && (record.reinvitations ?? 0) !== write.round) {
      if (owner !== undefined) throw new LeaseLostError(`application ${key.atsApplicationId}`);
      return;
    }
    const earlier = Object.fromEntries(stepsBefore(before).map((done) => [done.name, done.record]));
    const steps: ApplicationSteps = { ...record.steps, ...earlier };
    if (step?.record) steps[step.name] = step.record;
    else if (step) delete steps[step.name];
    const set = { ...data, steps, updatedAt: Date.now(), ...(finish ? { state: finish } : {}) };
    this.put(update(record, set, finish ? ['leaseOwner', 'leaseUntil'] : []));
  }

  public async beginStep(key: ApplicationKey, name: StepName, begin: StepBegin): Promise<boolean> {
    const record = this.applications.get(appId(key));
    const step = record?.steps[name];
    if (!record || !mayBegin(record, step, begin)) return false;
    this.put(update(record, { steps: { ...record.steps, [name]: begunStep(begin) } }));
    return true;
  }

  public async releaseClaim(key: ApplicationKey, owner: string, cleanStop: string | undefined): Promise<void> {
    const remove = cleanStop === undefined ? ['leaseOwner', 'leaseUntil', 'cleanStop'] : ['leaseOwner', 'leaseUntil'];
    this.updateHeld(key, owner, { cleanStop, updatedAt: Date.now() }, remove);
  }

  public async markApplicationFailed(key: ApplicationKey, owner: string, reason: string): Promise<void> {
    const set = { state: 'failed', failureReason: reason.slice(0, 500), updatedAt: Date.now() };
    this.updateHeld(key, owner, set, ['leaseOwner', 'leaseUntil']);
  }

  public async getJob(key: JobKey): Promise<JobRecord | undefined> {
    const job = this.jobs.get(jobId(key));
    return job && copy(job);
  }

  public async leaseJob(
    key: JobKey,
    details: { interviewName: string; templateHash: string; jobName?: string | undefined },
    lease: Lease,
  ): Promise<LeaseJobResult> {
    const job = this.jobs.get(jobId(key));
    if (job && !(job.state === 'creating' && job.leaseUntil !== undefined && job.leaseUntil < lease.now))
      return job.state === 'ready' ? { kind: 'ready', record: copy(job) } : { kind: 'busy', record: copy(job) };
    const set = { ...key, ...details, leaseOwner: lease.owner, leaseUntil: lease.now + lease.durationMs };
    const base = job ?? ({ state: 'creating', createAttempts: 0 } as unknown as JobRecord);
    const next = update(base, { ...set, updatedAt: lease.now, createAttempts: (base.createAttempts ?? 0) + 1 });
    this.jobs.set(jobId(key), next);
    return { kind: 'leased', record: copy(next) };
  }

  public async completeJob(
    key: JobKey,
    owner: string,
    interview: { interviewId: string; inviteUrl: string; templateHash: string },
  ): Promise<JobRecord> {
    const job = this.jobs.get(jobId(key));
    if (job?.leaseOwner !== owner) throw new LeaseLostError(`job ${key.atsJobId}`);
    const set = { ...interview, state: 'ready', updatedAt: Date.now() };
    const next = update(job, set, ['leaseOwner', 'leaseUntil']);
    this.jobs.set(jobId(key), next);
    return copy(next);
  }

  public async recordJobTemplate(key: JobKey, templateHash: string): Promise<void> {
    const job = this.jobs.get(jobId(key));
    if (job) this.jobs.set(jobId(key), update(job, { templateHash, updatedAt: Date.now() }));
  }

  public async recordReportsReadFrom(key: JobKey, page: number | undefined): Promise<void> {
    const job = this.jobs.get(jobId(key));
    if (job) this.jobs.set(jobId(key), { ...job, reportsReadFrom: page });
  }

  public async listJobs(connectionId: string): Promise<JobRecord[]> {
    return [...this.jobs.values()].filter((j) => j.connectionId === connectionId).map(copy);
  }

  public async getApplication(key: ApplicationKey): Promise<ApplicationRecord | undefined> {
    const record = this.applications.get(appId(key));
    return record && copy(record);
  }

  public async findApplicationsByAtsId(connectionId: string, atsApplicationId: string): Promise<ApplicationRecord[]> {
    return this.where((a) => a.connectionId === connectionId && a.atsApplicationId === atsApplicationId);
  }

  public async findApplicationByInterview(
    interviewId: string,
    candidateEmail: string,
  ): Promise<ApplicationRecord | undefined> {
    const found = this.where((a) => a.interviewId === interviewId && a.candidateEmail === candidateEmail);
    return found.sort((a, b) => b.createdAt - a.createdAt)[0];
  }

  public async findApplicationByServiceCandidate(interviewId: string, candidateId: string) {
    return this.where((a) => a.interviewId === interviewId && a.serviceCandidateId === candidateId)[0];
  }

  public async listApplicationsByInterview(interviewId: string): Promise<ApplicationRecord[]> {
    return this.where((a) => a.interviewId === interviewId);
  }

  public async listApplicationsInStates(
    connectionId: string,
    states: readonly ApplicationState[],
  ): Promise<ApplicationRecord[]> {
    return this.where((a) => a.connectionId === connectionId && states.includes(a.state));
  }

  public async knownApplications(keys: readonly ApplicationKey[]): Promise<Set<string>> {
    return new Set(keys.filter((k) => this.applications.has(appId(k))).map((k) => `${k.atsApplicationId}`));
  }

  public async candidateStatuses(connectionId: string, atsCandidateId: string): Promise<string[]> {
    return this.where((a) => a.connectionId === connectionId && a.atsCandidateId === atsCandidateId)
      .map((a) => a.steps.status?.value)
      .filter((s): s is string => s !== undefined);
  }

  public readonly claimWriteBack: MappingStore['claimWriteBack'] = async (key, reportId, lease, reportCandidateId) => {
    const record = this.applications.get(appId(key));
    if (!record) throw new Error(`application ${key.atsApplicationId}: its claim was refused, and it is gone`);
    const open = mayMove(record.state, 'claimReport') && record.reportId === undefined;
    const resumable =
      record.reportId === reportId && record.state === 'completed' && (record.leaseUntil ?? 0) < lease.now;
    if (open || resumable) {
      const held = { leaseOwner: lease.owner, leaseUntil: lease.now + lease.durationMs, updatedAt: lease.now };
      const attempts = { writeBackAttempts: (record.writeBackAttempts ?? 0) + 1 };
      const set = { reportId, reportCandidateId, state: 'completed', ...held, ...attempts };
      return { kind: 'claimed', record: this.put(update(record, set, ['failureReason'])) };
    }
    if (record.reportId !== reportId) return { kind: 'other-report', record: copy(record) };
    return record.state === 'written_back'
      ? { kind: 'done', record: copy(record) }
      : { kind: 'busy', record: copy(record) };
  };

  public async expireApplication(
    key: ApplicationKey,
    now: number,
    unless: readonly StepName[] = [],
  ): Promise<ApplicationRecord | undefined> {
    const record = this.applications.get(appId(key));
    if (record && mayMove(record.state, 'expire') && !unless.some((step) => record.steps[step] !== undefined))
      return this.put(update(record, { state: 'expired', expiredAt: now, updatedAt: now }));
    return record?.state === 'expired' ? copy(record) : undefined;
  }

  public async recordExit(key: ApplicationKey, exit: ApplicationExit): Promise<ApplicationRecord | undefined> {
    const record = this.applications.get(appId(key));
    if (!record) return undefined;
    if (mayMove(record.state, 'leave'))
      return this.put(update(record, { state: 'left', leftFrom: record.state, exit, updatedAt: exit.at }));
    // Kept only where a report came: an invitation being sent or failed is looked at before its next contact.
    if (record.state === 'left' || record.exit || !['completed', 'written_back'].includes(record.state))
      return copy(record);
    return this.put(update(record, { exit, updatedAt: exit.at }));
  }

  public async undoExit(key: ApplicationKey, now: number): Promise<ApplicationRecord | undefined> {
    const record = this.applications.get(appId(key));
    if (!record) return undefined;
    if (record.state === 'left' && record.leftFrom) {
      const steps = { ...record.steps };
      delete steps.status;
      return this.put(
        update(record, { state: record.leftFrom, steps, returnedAt: now, updatedAt: now }, ['exit', 'leftFrom']),
      );
    }
    if (record.state !== 'left' && record.exit) return this.put(update(record, { updatedAt: now }, ['exit']));
    return copy(record);
  }

  public async applyOperatorRequest(key: ApplicationKey, request: OperatorRequest) {
    const record = this.applications.get(appId(key));
    const extend = request.kind === 'extend';
    const open = record && (extend ? mayMove(record.state, 'extend') : record.state === 'invited');
    if (!record || !open || record.operatorRequests?.includes(request.id))
      return { applied: false, record: record && copy(record) };
    const operatorRequests = [...(record.operatorRequests ?? []), request.id];
    if (!extend) {
      const steps = { ...record.steps, resend: { startedAt: request.now } };
      return { applied: true, record: this.put(update(record, { operatorRequests, steps, updatedAt: request.now })) };
    }
    const steps = { ...record.steps };
    delete steps.status;
    const set = {
      operatorRequests,
      extendedUntil: request.extendedUntil,
      steps,
      state: 'invited',
      updatedAt: request.now,
    };
    return { applied: true, record: this.put(update(record, set, ['expiredAt'])) };
  }

  public async rememberReplayKey(connectionId: string, key: string, now: number, ttlSeconds: number) {
    const until = this.replayKeys.get(`${connectionId}#${key}`);
    if (until !== undefined && until > now) return false;
    this.replayKeys.set(`${connectionId}#${key}`, now + ttlSeconds * 1000);
    return true;
  }

  public readonly exitsSeen = new Map<string, number>();

  public async noteExitSeen(connectionId: string, atsApplicationId: string, now: number): Promise<void> {
    this.exitsSeen.set(`${connectionId}#${atsApplicationId}`, now);
  }

  public async exitSeenAt(connectionId: string, atsApplicationId: string, now: number): Promise<number | undefined> {
    const seenAt = this.exitsSeen.get(`${connectionId}#${atsApplicationId}`);
    return seenAt !== undefined && now < seenAt + EXIT_SEEN_SECONDS * 1000 ? seenAt : undefined;
  }

  public async forgetReplayKey(connectionId: string, key: string): Promise<void> {
    this.replayKeys.delete(`${connectionId}#${key}`);
  }

  public readonly sharedStageNames = new Map<string, Record<string, string>>();

  public async rememberStageNames(connectionId: string, names: Record<string, string>): Promise<void> {
    this.sharedStageNames.set(connectionId, { ...names });
  }

  public async stageNames(connectionId: string): Promise<Record<string, string> | undefined> {
    const names = this.sharedStageNames.get(connectionId);
    return names ? { ...names } : undefined;
  }

  public async isReportParked(connectionId: string, reportId: string): Promise<boolean> {
    return this.parked.has(`${connectionId}#${reportId}`);
  }

  public async unparkReport(connectionId: string, reportId: string): Promise<void> {
    this.parked.delete(`${connectionId}#${reportId}`);
  }

  public readonly parkUnmatchedReport: MappingStore['parkUnmatchedReport'] = async (
    connectionId,
    report,
    reason,
    now,
  ) => {
    this.parked.set(`${connectionId}#${report.reportId}`, { connectionId, ...report, reason, parkedAt: now });
  };

  public async getSweepProgress(connectionId: string, triggerId: string): Promise<SweepProgress | undefined> {
    return this.sweeps.get(`${connectionId}#${triggerId}`);
  }

  public async saveSweepProgress(connectionId: string, triggerId: string, progress: SweepProgress): Promise<void> {
    this.sweeps.set(`${connectionId}#${triggerId}`, { ...progress });
  }

  public async purgeCandidate(connectionId: string, atsCandidateId: string, atsApplicationIds: readonly string[] = []) {
    this.tombstones.add(`${connectionId}#${atsCandidateId}`);
    const gone = this.where(
      (a) =>
        a.connectionId === connectionId &&
        (a.atsCandidateId === atsCandidateId || atsApplicationIds.includes(a.atsApplicationId)),
    );
    for (const record of gone) this.applications.delete(appId(record));
    return { applications: gone.length };
  }

  private where(test: (record: ApplicationRecord) => boolean): ApplicationRecord[] {
    return [...this.applications.values()].filter(test).map(copy);
  }

  private put(record: ApplicationRecord): ApplicationRecord {
    this.applications.set(appId(record), record);
    return copy(record);
  }

  /** An update only the lease's holder may make: a lost lease is a LeaseLostError, as on DynamoDB. */
  private updateHeld(key: ApplicationKey, owner: string, set: Fields, remove: string[]): void {
    const record = this.applications.get(appId(key));
    if (record?.leaseOwner !== owner) throw new LeaseLostError(`application ${key.atsApplicationId}`);
    this.put(update(record, set, remove));
  }
}

/** Application 4401 of `acme-greenhouse`'s trigger `ai-screen`, as the helpers below hold it. */
export const INVITED_APPLICATION = {
  connectionId: 'acme-greenhouse',
  atsApplicationId: '4401',
  triggerId: 'ai-screen',
};

/** A store holding application 4401 invited (by Ana, ana@example.com) to interview `int-1`, with `data` recorded. */
export async function storeWithInvitation(
  now: number,
  data: Record<string, unknown> = {},
): Promise<MemoryMappingStore> {
  const store = new MemoryMappingStore();
  const lease = { owner: 'invite', now, durationMs: 60_000 };
  await store.claimApplication(
    { source: 'greenhouse', deliveryId: 'd', enqueueId: 'e' },
    {
      ...INVITED_APPLICATION,
      atsCandidateId: '7702',
      atsJobId: '3301',
      stageId: '9001',
      candidateEmail: 'ana@example.com',
    },
    lease,
  );
  const invited = { owner: 'invite', finish: 'invited' as const, data: { interviewId: 'int-1', ...data } };
  await store.recordStep(INVITED_APPLICATION, invited);
  return store;
}
