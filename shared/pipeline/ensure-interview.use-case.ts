import type { Trigger } from '../config';
import { singleLine, TEXT_LIMITS } from '../validation';
import { WORKER_TIMING } from './constants';
import { InterviewNotReadyError } from './errors';
import { ownWaitMs } from './held-claim';
import { afterSideEffect } from './fault-injection';
import {
  createInputFor,
  fullUpdateInputFor,
  interviewNameFor,
  templateHash,
  updateOnlyInputFor,
} from './interview-template';
import type { ConnectionContext, MappingStore, PipelineLogger } from './ports';
import type { JobKey, JobRecord } from './records';

export interface EnsureInterviewDependencies {
  store: MappingStore;
  logger: PipelineLogger;
  now: () => number;
  newOwner: () => string;
  sleep?: (ms: number) => Promise<void>;
  signal?: AbortSignal | undefined;
  /** How long the creation lease lasts: the invocation's remaining time. */
  leaseMs?: number | undefined;
}

export interface ReadyInterview {
  interviewId: string;
  inviteUrl: string;
}

/** Ready interviews per warm container: most candidates of a job need no DynamoDB read for it. */
const readyCache = new Map<string, { interviewId: string; inviteUrl: string; templateHash: string }>();

export function clearInterviewCache(): void {
  readyCache.clear();
}

/**
 * Exactly one interview per connection × job × trigger. A conditional lease elects one creator; the others
 * wait for it. A creator that takes over an expired lease first looks the interview up by its unique name,
 * since the earlier creator may have created it and stopped before recording it.
 */
export async function ensureInterviewForTrigger(
  context: ConnectionContext,
  trigger: Trigger,
  job: { atsJobId: string; jobName?: string | undefined },
  deps: EnsureInterviewDependencies,
): Promise<ReadyInterview> {
  const key: JobKey = { connectionId: context.connection.id, atsJobId: job.atsJobId, triggerId: trigger.id };
  const cacheKey = `${key.connectionId}#${key.atsJobId}#${key.triggerId}`;
  const interviewName = interviewNameFor(context.connection, trigger, job);
  const hash = templateHash(trigger, interviewName);
  const cached = readyCache.get(cacheKey);
  if (cached?.templateHash === hash) return cached;
  const wanted: TemplateOf = { context, trigger, key, interviewName, hash, deps };

  const existing = await deps.store.getJob(key);
  if (existing?.state === 'ready') return remember(cacheKey, await refreshTemplate(wanted, existing));

  const owner = deps.newOwner();
  const leaseMs = deps.leaseMs ?? WORKER_TIMING.jobLeaseMs;
  const lease = await deps.store.leaseJob(
    key,
    { interviewName, templateHash: hash, jobName: job.jobName && singleLine(job.jobName, TEXT_LIMITS.name) },
    { owner, now: deps.now(), durationMs: leaseMs },
  );
  if (lease.kind === 'ready') return remember(cacheKey, await refreshTemplate(wanted, lease.record));
  if (lease.kind === 'busy')
    return remember(cacheKey, await waitForReady(key, cacheKey, deps, lease.record.leaseUntil));

  let interview: ReadyInterview | undefined;
  if (lease.record.createAttempts > 1) {
    const found = await context.interviews.findInterviewsByName(interviewName, { signal: deps.signal });
    if (found[0]?.invite_url) {
      interview = { interviewId: found[0].interview_id, inviteUrl: found[0].invite_url };
      deps.logger.warn('adopted an interview created by an earlier attempt', {
        jobKey: cacheKey,
        interviewId: interview.interviewId,
        matches: found.length,
      });
    }
  }
  if (!interview) {
    const created = await context.interviews.createInterview(createInputFor(trigger, interviewName), {
      signal: deps.signal,
    });
    afterSideEffect('interview-created', cacheKey);
    interview = { interviewId: created.interview_id, inviteUrl: created.invite_url };
    deps.logger.info('interview created', { jobKey: cacheKey, interviewId: interview.interviewId });
  }
  const updateOnly = updateOnlyInputFor(trigger);
  if (updateOnly) await context.interviews.updateInterview(interview.interviewId, updateOnly, { signal: deps.signal });
  const record = await deps.store.completeJob(key, owner, { ...interview, templateHash: hash });
  return remember(cacheKey, record);
}

function remember(
  cacheKey: string,
  record: Pick<JobRecord, 'interviewId' | 'inviteUrl' | 'templateHash'>,
): ReadyInterview {
  const ready = {
    interviewId: record.interviewId as string,
    inviteUrl: record.inviteUrl as string,
    templateHash: record.templateHash,
  };
  readyCache.set(cacheKey, ready);
  return ready;
}

/** The interview a job × trigger should have: its key, name and template hash, and what it runs with. */
interface TemplateOf {
  context: ConnectionContext;
  trigger: Trigger;
  key: JobKey;
  interviewName: string;
  hash: string;
  deps: EnsureInterviewDependencies;
}

/** A trigger whose template changed since the interview was made updates it in place (PUT), never makes another. */
async function refreshTemplate(of: TemplateOf, record: JobRecord): Promise<JobRecord> {
  const { context, trigger, key, interviewName, hash, deps } = of;
  if (record.templateHash === hash) return record;
  await context.interviews.updateInterview(record.interviewId as string, fullUpdateInputFor(trigger, interviewName), {
    signal: deps.signal,
  });
  await deps.store.recordJobTemplate(key, hash);
  deps.logger.info('interview template updated', { interviewId: record.interviewId });
  return { ...record, templateHash: hash };
}

async function waitForReady(
  key: JobKey,
  cacheKey: string,
  deps: EnsureInterviewDependencies,
  creatorLeaseUntil: number | undefined,
): Promise<JobRecord> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  // Never wait past half this invocation's own time: SQS retries the message later instead.
  const deadline = deps.now() + ownWaitMs(deps.leaseMs ?? WORKER_TIMING.jobLeaseMs, WORKER_TIMING.jobWaitMs);
  while (deps.now() < deadline) {
    await sleep(WORKER_TIMING.jobPollMs);
    const record = await deps.store.getJob(key);
    if (record?.state === 'ready') return record;
  }
  throw new InterviewNotReadyError(
    cacheKey,
    creatorLeaseUntil === undefined ? undefined : Math.max(1000, creatorLeaseUntil - deps.now()),
  );
}
