import * as v from 'valibot';
import { atsIdSchema } from '../ats/ids';
import { safeIdSchema } from '../validation';

const text = v.pipe(v.string(), v.nonEmpty());

/**
 * How often the message was put back for later because an outside API asked to wait (functions/_runtime).
 * Optional, so messages without it (older senders, the DLQ) stay valid v1 messages.
 */
const deferrals = v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)));

/**
 * The turn the message reserved on its connection's ATS schedule (epoch ms) when it went back to wait for it: it
 * runs then without reserving again (shared/pacing/turn.ts).
 */
const turnAt = v.optional(v.pipe(v.number(), v.minValue(0)));
/** The calls that turn holds intervals for. */
const turnCalls = v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)));
/** The step the turn was booked for (a write-back with a stage move or without): for the operator's eye. */
const turnKind = v.optional(v.pipe(v.string(), v.maxLength(200)));

/** The delivery (or reconciler run) the message came from: every log line about it carries this id. */
const correlationId = v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,100}$/)));

/** What every v1 message carries, whatever its kind. */
const envelope = {
  v: v.literal(1),
  /** Unique per enqueue: a retry or redrive of this message keeps it, a second delivery of the event does not. */
  enqueueId: text,
  connectionId: text,
  receivedAt: v.number(),
  deferrals,
  correlationId,
  /**
   * Set by the ats-webhook function: the worker notes the delivery on its application's timeline when it first
   * handles the message (functions/_runtime/activity.ts), so the webhook answers without that write.
   */
  origin: v.optional(v.literal('webhook')),
};

/** What a message that calls the ATS carries: its turn on the connection's schedule. */
const turn = { turnAt, turnCalls, turnKind };

/** v1 of "a candidate entered a stage", as the ats-webhook function enqueues it. */
export const stageEnteredMessageSchema = v.object({
  ...envelope,
  ...turn,
  kind: v.literal('stage-entered'),
  event: v.object({
    deliveryId: safeIdSchema,
    atsJobId: v.optional(atsIdSchema),
    jobName: v.optional(v.string()),
    atsApplicationId: atsIdSchema,
    atsCandidateId: atsIdSchema,
    stage: v.object({ id: v.optional(v.string()), name: v.optional(v.string()) }),
    candidate: v.object({ name: v.optional(v.string()), email: v.optional(v.string()) }),
  }),
});

/** v1 of "the ATS deleted a candidate": their records are purged. Travels on the stage-events queue. */
export const candidateDeletedMessageSchema = v.object({
  ...envelope,
  kind: v.literal('candidate-deleted'),
  atsCandidateId: atsIdSchema,
  atsApplicationIds: v.array(atsIdSchema),
});

/**
 * v1 of "the ATS says an application left the process, or came back" (a hint: the worker reads the application's
 * standing before it acts). Travels on the stage-events queue.
 */
export const applicationChangedMessageSchema = v.object({
  ...envelope,
  ...turn,
  kind: v.literal('application-changed'),
  deliveryId: safeIdSchema,
  atsApplicationId: atsIdSchema,
  change: v.picklist(['left', 'returned']),
});

/**
 * v1 of "an invitation is due a follow-up" (the reconciler's schedule): reminder `reminder` (0-based), or the
 * expiry. Ids only; the worker reads the application and does nothing if it moved on.
 */
export const followUpMessageSchema = v.object({
  ...envelope,
  ...turn,
  kind: v.literal('follow-up'),
  atsApplicationId: atsIdSchema,
  triggerId: text,
  action: v.picklist(['remind', 'expire', 'resend', 'extend']),
  reminder: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10))),
  /** An operator's `resend` or `extend` (`npm run ops`): carried out once by this id, however often it is delivered. */
  requestId: v.optional(safeIdSchema),
  /** `extend`: the days added to the invitation's expiry. */
  days: v.optional(v.pipe(v.number(), v.minValue(0.0001), v.maxValue(365))),
});

/**
 * v1 of "an assessment order has work": its invitation (queued by the ATS's order, or by the reconciler when it was
 * left half done), its expiry, or telling the ATS how it ended. Ids only; the worker reads the order.
 */
export const orderWorkMessageSchema = v.object({
  ...envelope,
  ...turn,
  kind: v.literal('order-work'),
  orderId: safeIdSchema,
  action: v.picklist(['invite', 'expire', 'announce']),
});

/**
 * v1 of "applications changed, not said which" (Kombo's `data-changed` webhook, or the sweep's run in its place): the
 * worker reads the applications changed since the last read (shared/pipeline/changes-hinted.use-case.ts).
 */
export const changesHintedMessageSchema = v.object({
  ...envelope,
  kind: v.literal('changes-hinted'),
  source: v.picklist(['webhook', 'sweep']),
  deliveryId: safeIdSchema,
});

/** What the invite worker takes from its queue. */
export const stageQueueMessageSchema = v.variant('kind', [
  stageEnteredMessageSchema,
  candidateDeletedMessageSchema,
  applicationChangedMessageSchema,
  followUpMessageSchema,
  orderWorkMessageSchema,
  changesHintedMessageSchema,
]);

/** v1 of "a report is ready to write back", from the interview-webhook function or the reconciler. */
export const reportCreatedMessageSchema = v.object({
  ...envelope,
  ...turn,
  kind: v.literal('report-created'),
  source: v.picklist(['webhook', 'reconciler']),
  reportId: safeIdSchema,
  interviewId: safeIdSchema,
  candidateId: safeIdSchema,
  /** Set by an operator (`npm run ops -- match`) to attach a parked report to an application by hand. */
  atsApplicationId: v.optional(atsIdSchema),
  /**
   * The candidate's e-mail as the service's webhook gave it: only to find the application when the service will not
   * give the report (the recruiter is told in the ATS, reminders stop). Nothing is written from it.
   */
  candidateEmail: v.optional(v.pipe(v.string(), v.maxLength(254))),
  /** The application its first run found, carried when it went back for later: it is claimed again with no read. */
  foundApplication: v.optional(v.object({ atsApplicationId: atsIdSchema, triggerId: safeIdSchema })),
});

/** Every message the connector queues: the invite worker's, and the write-back worker's. */
export type QueueMessage =
  | v.InferOutput<typeof stageQueueMessageSchema>
  | v.InferOutput<typeof reportCreatedMessageSchema>;
/** The queued message of one kind. */
type MessageOf<Kind extends QueueMessage['kind']> = Extract<QueueMessage, { kind: Kind }>;

export type StageEnteredMessage = MessageOf<'stage-entered'>;
export type ReportCreatedMessage = MessageOf<'report-created'>;
export type CandidateDeletedMessage = MessageOf<'candidate-deleted'>;
export type FollowUpMessage = MessageOf<'follow-up'>;
export type ApplicationChangedMessage = MessageOf<'application-changed'>;
export type ChangesHintedMessage = MessageOf<'changes-hinted'>;
export type OrderWorkMessage = MessageOf<'order-work'>;
