import type { ServerResponse } from 'node:http';
import { sendJson } from '../http-kit';

/** Injected faults of an ATS sandbox's API; each ATS answers its own 429, the rest is common. */
export interface AtsFaults {
  rate429: number;
  rate500: number;
  /** Answers as to a key that lacks the permission: a refusal for good, until an operator fixes it. */
  rate403: number;
  latencyMs: number;
  slowRate: number;
  slowMs: number;
  /** A share of recruiters' stage changes whose webhook is never sent (the ATS gave up, or the webhook is off). */
  dropStageChangeRate: number;
  /**
   * Routes (`GET /v3/candidate_tags`, as the sandbox counts requests) the key was not granted: always 403, as to a
   * customer who left a permission out.
   */
  forbiddenRoutes?: string[] | undefined;
}

export function noFaults(): AtsFaults {
  return { rate429: 0, rate500: 0, rate403: 0, latencyMs: 0, slowRate: 0, slowMs: 0, dropStageChangeRate: 0 };
}

export async function addLatency(faults: AtsFaults): Promise<void> {
  if (faults.latencyMs) await new Promise((resolve) => setTimeout(resolve, faults.latencyMs));
}

/**
 * After authentication and the 429 check (`roll` is the draw that decided the 429): answers an injected 500
 * or 403 and returns true, or waits out an injected slow answer and returns false for the route to answer.
 */
export async function answeredByFault(
  response: ServerResponse,
  faults: AtsFaults,
  draw: { roll: number; random: () => number },
  route?: string,
): Promise<boolean> {
  if (route !== undefined && faults.forbiddenRoutes?.includes(route)) {
    sendJson(response, 403, { message: 'This API key lacks the permission for this endpoint' });
    return true;
  }
  if (draw.roll < faults.rate429 + faults.rate500) {
    sendJson(response, 500, { message: 'Internal error' });
    return true;
  }
  if (faults.rate403 && draw.random() < faults.rate403) {
    sendJson(response, 403, { message: 'This API key lacks the permission for this endpoint' });
    return true;
  }
  if (draw.random() < faults.slowRate) await new Promise((resolve) => setTimeout(resolve, faults.slowMs));
  return false;
}
