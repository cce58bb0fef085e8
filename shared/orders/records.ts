import { createHash } from 'node:crypto';
import type { StepRecord } from '../pipeline/records';

/**
 * Assessment orders: a recruiter orders the AI interview inside the ATS's own assessment framework (Greenhouse
 * Assessment Partner, Ashby Assessments), the ATS calls the connector, and the result goes back where the ATS shows
 * assessments (assessment-partner facts, sections 1, 2 and 5).
 */
export const ORDER_SOURCES = ['greenhouse', 'ashby', 'kombo'] as const;
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

/**
 * The ends the ATS is told of (Greenhouse: the completion PATCH, then `test_status`; Ashby: `assessment.update`). A
 * cancelled order is not: the ATS cancelled it.
 */
export const ORDER_ANNOUNCED_STATES = ['completed', 'expired', 'failed'] as const;

/** What a claim on an order is for: its invitation, or telling the ATS how it ended. */
export type OrderWork = 'invite' | 'announce';

/** Whether the order's end is still to be told to the ATS. */
export const isAnnounceable = (order: Pick<OrderRecord, 'state' | 'announced'>): boolean =>
  (ORDER_ANNOUNCED_STATES as readonly string[]).includes(order.state) && order.announced !== order.state;

/** Whether work remains on the order (its invitation, its expiry, its announcement): the reconciler looks at these. */
export const hasWorkLeft = (order: Pick<OrderRecord, 'state' | 'announced'>): boolean =>
  (ORDER_OPEN_STATES as readonly string[]).includes(order.state) || isAnnounceable(order);

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
  /** Kombo: the order's own id (results are PUT to it) and the customer's ATS it came from. */
  atsOrderId?: string | undefined;
  integrationId?: string | undefined;
  interviewId?: string | undefined;
  /** The interview's link the candidate was sent. */
  inviteUrl?: string | undefined;
  reportId?: string | undefined;
  score?: number | undefined;
  profileUrl?: string | undefined;
  recordingUrl?: string | undefined;
  proctoringViolations?: number | undefined;
  /** When the order completed or expired (Kombo's `completed_at`). */
  endedAt?: number | undefined;
  /** The last end the ATS was told of (`ORDER_ANNOUNCED_STATES`). */
  announced?: OrderState | undefined;
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

/**
 * An order id in UUID form (8-4-4-4-12 hex, the version nibble 8: a name-based UUID), derived like `orderIdFor` from
 * the order's natural key, for an ATS that types its id `format: uuid` (Ashby's `assessment_id`).
 */
export function orderUuidFor(source: OrderSource, connectionId: string, naturalKey: readonly string[]): string {
  const hex = createHash('sha256')
    .update(JSON.stringify([source, connectionId, ...naturalKey]))
    .digest('hex')
    .slice(0, 32)
    .split('');
  hex[12] = '8';
  hex[16] = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The order's own fields a step may set. */
export type OrderData = Partial<
  Pick<
    OrderRecord,
    | 'interviewId'
    | 'inviteUrl'
    | 'reportId'
    | 'score'
    | 'profileUrl'
    | 'recordingUrl'
    | 'proctoringViolations'
    | 'endedAt'
    | 'failureReason'
    | 'announced'
  >
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
  /**
   * Claims the order's `work` for `lease` (a first claim or a take-over): its invitation while it is received or
   * interview_created; its announcement while its end is not yet told (`isAnnounceable`).
   */
  claimOrder(
    key: OrderKey,
    lease: { owner: string; now: number; durationMs: number },
    work?: OrderWork,
  ): Promise<ClaimOrderResult>;
  /**
   * Records a step under the claim (else a LeaseLostError); `move` moves the order as `ORDER_MOVES` allows. A move
   * out of the invitation's states, or `release`, lets the claim go.
   */
  recordOrderStep(
    key: OrderKey,
    write: {
      owner: string;
      step?: { name: string; record: StepRecord | undefined };
      move?: OrderMove;
      data?: OrderData;
      release?: boolean;
      /** When it was written (the worker's clock); now by default. */
      now?: number;
    },
  ): Promise<void>;
  /**
   * Moves the order, holding no claim (a report completes it, the reconciler expires it, the ATS cancels it):
   * conditional on the states `ORDER_MOVES` allows, and for `expire` on its age. Answers the record as it stands.
   */
  moveOrder(
    key: OrderKey,
    move: OrderMove,
    options: { now: number; data?: OrderData; receivedBefore?: number },
  ): Promise<{ moved: boolean; record: OrderRecord | undefined }>;
  /** The order a report belongs to: the test's interview and the candidate's normalised e-mail. */
  findOrderByInterview(interviewId: string, candidateEmail: string): Promise<OrderRecord | undefined>;
  /** A connection's orders with work left (`hasWorkLeft`), oldest first, at most `limit`. */
  listOrdersWithWork(connectionId: string, limit: number): Promise<OrderRecord[]>;
}
