import type { AtsKind } from '../config';
import { ashbyProfile } from './ashby/profile';
import { greenhouseProfile } from './greenhouse/profile';
import { leverProfile } from './lever/profile';
import { workableProfile } from './workable/profile';
import { komboProfile } from './kombo/profile';
import { STEP_KINDS, type StepKind, type VendorProfile } from './profile';

export { announcedResetAt, announcedWindow, type RateHeaders, type VendorProfile } from './profile';

/** Every vendor's profile (./<kind>/profile.ts), by ATS. */
export const PROFILES: Readonly<Record<AtsKind, VendorProfile>> = {
  greenhouse: greenhouseProfile,
  ashby: ashbyProfile,
  lever: leverProfile,
  workable: workableProfile,
  kombo: komboProfile,
};

/** The rate a vendor documents as calls per window, for pacing: none where it publishes none or counts concurrency. */
export function documentedRate(kind: AtsKind): { limit: number; windowMs: number } | undefined {
  const rate = PROFILES[kind].rate;
  return 'requests' in rate ? { limit: rate.requests, windowMs: rate.windowMs } : undefined;
}

/**
 * The calls each step of a connection costs, as its ATS's profile declares them, with its status tags or without, and
 * with the report file attached at write-back or without.
 */
export function declaredStepCalls(kind: AtsKind, statusTags: boolean, reportFile = false): Record<StepKind, number> {
  const { stepCalls, statusTagCalls, files } = PROFILES[kind];
  const fileCalls = (step: StepKind) => (reportFile && step.startsWith('writeBack') ? files.calls : 0);
  return Object.fromEntries(
    STEP_KINDS.map((step) => [step, stepCalls[step] + (statusTags ? statusTagCalls[step] : 0) + fileCalls(step)]),
  ) as Record<StepKind, number>;
}

/** The connector's own cap on a report file, where the ATS documents none: what a worker holds in memory at once. */
export const REPORT_FILE_MAX_BYTES = 10 * 1_048_576;

/** The largest report file a connection's ATS takes: its documented limit, within the connector's cap. */
export const reportFileMaxBytes = (kind: AtsKind): number =>
  Math.min(PROFILES[kind].files.maxBytes ?? REPORT_FILE_MAX_BYTES, REPORT_FILE_MAX_BYTES);
