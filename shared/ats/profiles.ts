import type { AtsKind } from '../config';
import { ashbyProfile } from './ashby/profile';
import { greenhouseProfile } from './greenhouse/profile';
import { leverProfile } from './lever/profile';
import { workableProfile } from './workable/profile';
import { STEP_KINDS, type StepKind, type VendorProfile } from './profile';

export { announcedResetAt, announcedWindow, type RateHeaders, type VendorProfile } from './profile';

/** Every vendor's profile (./<kind>/profile.ts), by ATS. */
export const PROFILES: Readonly<Record<AtsKind, VendorProfile>> = {
  greenhouse: greenhouseProfile,
  ashby: ashbyProfile,
  lever: leverProfile,
  workable: workableProfile,
};

/** The rate a vendor documents as calls per window, for pacing: none where it publishes none or counts concurrency. */
export function documentedRate(kind: AtsKind): { limit: number; windowMs: number } | undefined {
  const rate = PROFILES[kind].rate;
  return 'requests' in rate ? { limit: rate.requests, windowMs: rate.windowMs } : undefined;
}

/** The calls each step of a connection costs, as its ATS's profile declares them, with its status tags or without. */
export function declaredStepCalls(kind: AtsKind, statusTags: boolean): Record<StepKind, number> {
  const { stepCalls, statusTagCalls } = PROFILES[kind];
  return Object.fromEntries(
    STEP_KINDS.map((step) => [step, stepCalls[step] + (statusTags ? statusTagCalls[step] : 0)]),
  ) as Record<StepKind, number>;
}
