import { createHash } from 'node:crypto';
import type { StepRecord } from '../pipeline/records';

/**
 * Assessment orders: a recruiter orders the AI interview inside the ATS's own assessment framework (Greenhouse
 * Assessment Partner, Ashby Assessments), the ATS calls the connector, and the result goes back where the ATS shows
 * assessments (assessment-partner facts, sections 1, 2 and 5).
 */
export const ORDER_SOURCES = ['greenhouse', 'ashby'] as const;
export type OrderSource = (typeof ORDER_SOURCES)[number];

/** While the order's work is under way; then the ways it ends. */
export const ORDER_OPEN_STATES = ['received', 'interview_created', 'invited'] as const;
export const ORDER_END_STATES = ['completed', 'expired', 'cancelled', 'failed'] as const;
export const ORDER_STATES = [...ORDER_OPEN_STATES, ...ORDER_END_STATES] as const;

/** The states an order's invitation work is claimed in (its last move takes it to `invited`, letting the claim go). */
export const ORDER_CLAIMABLE_STATES = ['received', 'interview_created'] as const;
export const isClaimable = (state: string): boolean => (ORDER_CLAIMABLE_STATES as readonly string[]).includes(state);
export type OrderState = (typeof ORDER_STATES)[number];

/**
 * An order's states and the moves between them, stated once (as the application's in
 * shared/pipeline/application-states.ts):
 *
 *   received ──interview ensured──▶ interview_created ──candidate invited──▶ invited ──report──▶ completed
 *      │                                  │                                    │
 *      │                                  │                                    ├──no report in time──▶ expired
 *      └──────────────────────────────────┴────────────────────────────────────┼──the recruiter cancels──▶ cancelled
 *                                                                              └──refused for good──▶ failed
 *
 * A report that comes after the expiry still completes the order (the candidate took the interview).
 */
export const ORDER_MOVES = {
  createInterview: { from: ['received'], to: 'interview_created' },
  invite: { from: ['interview_created'], to: 'invited' },
  complete: { from: ['invited', 'expired'], to: 'completed' },
  expire: { from: ['invited'], to: 'expired' },
  cancel: { from: ['received', 'interview_created', 'invited'], to: 'cancelled' },
  fail: { from: ['received', 'interview_created', 'invited'], to: 'failed' },
} as const satisfies Record<string, { from: readonly OrderState[]; to: OrderState }>;

export type OrderMove = keyof typeof ORDER_MOVES;

export const mayMoveOrder = (state: OrderState, move: OrderMove): boolean =>
  (ORDER_MOVES[move].from as readonly OrderState[]).includes(state);

export interface OrderKey {
  connectionId: string;
  /** Ours, given to the ATS (Greenhouse's `partner_interview_id`, Ashby's `assessment_id`). */
  orderId: string;
}

export interface OrderRecord extends OrderKey {
  source: OrderSource;
  /** The test the recruiter picked: one of the connection's configured interview templates. */
  testId: string;
  state: OrderState;
  /** Lower-cased, trimmed; the only candidate field every source guarantees. */
  candidateEmail: string;
  candidateName?: string | undefined;
  atsCandidateId?: string | undefined;
  atsApplicationId?: string | undefined;
  /** Where the result is announced (Greenhouse: the `url` a completion PATCH goes to). */
  completionUrl?: string | undefined;
  interviewId?: string | undefined;
  reportId?: string | undefined;
  score?: number | undefined;
  profileUrl?: string | undefined;
  /** The order's outward side effects, each under its name, as an application's (shared/pipeline/steps.ts). */
  steps: Partial<Record<string, StepRecord>>;
  failureReason?: string | undefined;
  /** The claim on the order's work: who holds it, until when, how many claims were taken. */
  leaseOwner?: string | undefined;
  leaseUntil?: number | undefined;
  claims?: number | undefined;
  createdAt: number;
  updatedAt: number;
}

/**
 * An order's id, the same for the same order however often the ATS sends it: a digest of the source, the connection
 * and the order's natural key (Greenhouse sends no order id: its key is the test, the candidate's profile URL and
 * e-mail; Ashby's is the application and the assessment type).
 */
export function orderIdFor(source: OrderSource, connectionId: string, naturalKey: readonly string[]): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([source, connectionId, ...naturalKey]))
    .digest('base64url');
  return `ord_${digest.slice(0, 32)}`;
}

/** The order's own fields a step may set. */
export type OrderData = Partial<
  Pick<OrderRecord, 'interviewId' | 'reportId' | 'score' | 'profileUrl' | 'failureReason'>
>;

export type ClaimOrderResult =
  /** `resumed`: an earlier worker held this claim and stopped; its steps may be half done. */
  | { kind: 'claimed'; record: OrderRecord; resumed: boolean }
  /** Another worker holds it: this message comes back later. */
  | { kind: 'held-elsewhere' }
  /** Its work is done (or ended for good): nothing to do. */
  | { kind: 'done'; record: OrderRecord }
  | { kind: 'missing' };

/** Records orders, each once, and the work on them, each step once, under a claim. */
export interface OrderStore {
  /** Records a new order; an order already recorded under its id is answered as it stands (`created: false`). */
  recordOrder(order: OrderRecord): Promise<{ created: boolean; record: OrderRecord }>;
  getOrder(key: OrderKey): Promise<OrderRecord | undefined>;
  /** Claims the order's invitation work (received or interview_created) for `lease`: a first claim or a take-over. */
  claimOrder(key: OrderKey, lease: { owner: string; now: number; durationMs: number }): Promise<ClaimOrderResult>;
  /**
   * Records a step under the claim (else a LeaseLostError); `move` moves the order as `ORDER_MOVES` allows, and a
   * move out of the invitation's states lets the claim go.
   */
  recordOrderStep(
    key: OrderKey,
    write: {
      owner: string;
      step?: { name: string; record: StepRecord | undefined };
      move?: OrderMove;
      data?: OrderData;
    },
  ): Promise<void>;
}
