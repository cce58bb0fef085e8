import { vi } from 'vitest';
import type { ApplicationRecord } from '../../shared/pipeline/records';
import { connectionDocument } from './connections';
import { MemoryMappingStore } from './memory-store';
import { dependencies, fakeContext } from './pipeline-fakes';
import { applicationRecord, jobRecord, NOW } from './pipeline-records';

/** Job 3301's interview, ready and held by no one. */
export const readyJob = () =>
  jobRecord({ state: 'ready', interviewId: 'int-1', inviteUrl: 'https://i/int-1', leaseOwner: undefined });

/** A connection with reminders, an expiry and status tags, its store holding one invitation of application 4401. */
export function invitedCandidate(record: Partial<ApplicationRecord> = {}, trigger: Record<string, unknown> = {}) {
  const document = connectionDocument({
    writeBack: { status: 'tags', advance: { minAiMatchScore: 75, toStage: { name: 'Hiring Manager Review' } } },
  });
  const connection = document.connections[0] as { triggers: Record<string, unknown>[] };
  connection.triggers = connection.triggers.map((t) => ({
    ...t,
    reminders: { afterHours: 24, max: 2 },
    expireAfterDays: 7,
    ...trigger,
  }));
  const { context, ats, interviews } = fakeContext(document);
  const setStatusTag = vi.fn().mockResolvedValue(undefined);
  Object.assign(ats, { setStatusTag });
  const store = new MemoryMappingStore().seed({
    jobs: [readyJob()],
    applications: [
      applicationRecord({
        state: 'invited',
        entryDeliveryId: 'evt-1',
        steps: { inviteEmail: { doneAt: NOW }, status: { value: 'invited', rank: 1, startedAt: NOW } },
        ...record,
      }),
    ],
  });
  const deps = dependencies(store, context);
  return { store, deps, ats, setStatusTag, context, interviews };
}
