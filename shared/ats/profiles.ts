import type { AtsKind } from '../config';
import { ashbyProfile } from './ashby/profile';
import { greenhouseProfile } from './greenhouse/profile';
import { leverProfile } from './lever/profile';
import { workableProfile } from './workable/profile';
import type { VendorProfile } from './profile';

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
