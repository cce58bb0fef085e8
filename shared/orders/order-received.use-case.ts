import { randomUUID } from 'node:crypto';
import type { Connection, Trigger } from '../config';
import { ensureInterviewForTrigger } from '../pipeline/ensure-interview.use-case';
import { errorCode, isPermanent } from '../pipeline/errors';
import type { ConnectionContext, InviteDependencies, RunOptions } from '../pipeline/ports';
import { runSteps, type Step } from '../pipeline/steps';
import { WORKER_TIMING } from '../pipeline/constants';
import { waitForHolder } from '../pipeline/held-claim';
import { refusalReason } from '../errors';
import { isClaimable, type OrderKey, type OrderRecord, type OrderStore } from './records';

/** A refusal for good of an order's work: the order fails with its code as the reason. */
export class OrderRefusedError extends Error {
  public readonly retryable = false;
  /** A refusal: what was asked did not happen. */
  public readonly definitelyNotSent = true;

  public constructor(
    public readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'OrderRefusedError';
  }
}

export type OrderTest = NonNullable<NonNullable<Connection['orders']>['greenhouse']>['tests'][number];

export interface OrderDependencies extends InviteDependencies {
  orders: OrderStore;
}

export type OrderReceivedOutcome = 'invited' | 'held-elsewhere' | 'done' | 'unknown-order' | 'failed';

/** The test the order names, as the connection configures it for the order's source; undefined when it is gone. */
export function orderTest(
  connection: Connection,
  order: Pick<OrderRecord, 'source' | 'testId'>,
): OrderTest | undefined {
  return connection.orders?.[order.source]?.tests.find((t) => t.id === order.testId);
}

/**
 * The job's interview for an ordered test: one per connection and test, as a trigger's is per job (an order names
 * no job). Its name and questions are the test's.
 */
export function triggerForTest(test: OrderTest): Trigger {
  return {
    id: `order-${test.id}`,
    jobs: 'all',
    stage: { name: test.name },
    interview: test.interview,
    invite: { email: true, atsNote: false, from: test.from },
    // An order is invited again only by a new order (Greenhouse's new url), never by a stage entry.
    reinvite: 'never',
  };
}

/**
 * An order the ATS placed: claimed, the test's interview ensured, then the candidate e-mailed the link, each a step
 * recorded once; the order moves `received → interview_created → invited`. A refusal for good fails the order.
 */
export async function handleOrderReceived(
  key: OrderKey,
  deps: OrderDependencies,
  run: RunOptions = {},
): Promise<{ outcome: OrderReceivedOutcome; reason?: string }> {
  const { signal } = run;
  const context = await deps.contextFor(key.connectionId);
  const owner = (deps.newOwner ?? randomUUID)();
  const now = deps.now ?? Date.now;
  const lease = { owner, now: now(), durationMs: run.leaseMs ?? WORKER_TIMING.applicationLeaseMs };
  const claim = await deps.orders.claimOrder(key, lease);
  if (claim.kind === 'held-elsewhere') {
    // A second copy beside the first (Send Test clicked twice): done once that worker invited.
    const reader = { read: () => deps.orders.getOrder(key), now: deps.now, sleep: deps.sleep };
    const invited = await waitForHolder(reader, (o) => !isClaimable(o.state), lease.durationMs);
    return { outcome: invited ? 'done' : 'held-elsewhere' };
  }
  if (claim.kind !== 'claimed') return { outcome: claim.kind === 'missing' ? 'unknown-order' : claim.kind };
  const order = claim.record;
  const test = context && orderTest(context.connection, order);
  const log = { connectionId: key.connectionId, orderId: key.orderId };
  try {
    if (!context || !test) throw new OrderRefusedError('no-test', 'the ordered test is no longer configured');
    const steps = orderSteps({ context, test, order, owner, deps, signal, leaseMs: lease.durationMs });
    await runSteps(steps, `${key.connectionId}#${key.orderId}`);
    deps.logger.info('order: candidate invited', { ...log, test: order.testId });
    return { outcome: 'invited' };
  } catch (error) {
    if (!isPermanent(error) || errorCode(error) === 'aborted') throw error;
    const reason = errorCode(error);
    const at = now();
    await deps.orders.recordOrderStep(key, {
      owner,
      move: 'fail',
      data: { failureReason: reason, endedAt: at },
      now: at,
    });
    deps.logger.error('order: failed for good', { ...log, code: reason });
    return { outcome: 'failed', reason };
  }
}

interface OrderRun {
  /** The invocation's time: the interview's creation lease lasts no longer than the claim. */
  leaseMs: number;
  context: ConnectionContext;
  test: OrderTest;
  order: OrderRecord;
  owner: string;
  deps: OrderDependencies;
  signal: AbortSignal | undefined;
}

/** The order's steps, in order: the test's interview, then the invitation e-mail with its link. */
function orderSteps(run: OrderRun): Step<unknown>[] {
  const { order, owner, deps } = run;
  const now = deps.now ?? Date.now;
  const record = (write: Omit<Parameters<OrderStore['recordOrderStep']>[1], 'owner'>) =>
    deps.orders.recordOrderStep(order, { owner, now: now(), ...write });
  const link = { url: '' };
  const interview: Step<{ interviewId: string; inviteUrl: string }> = {
    name: 'interview-created',
    done: false,
    started: false,
    // Ensured once per test (a lease elects one creator); safe to ask again.
    perform: () =>
      ensureInterviewForTrigger(
        run.context,
        triggerForTest(run.test),
        { atsJobId: 'orders', jobName: run.test.name },
        {
          store: deps.store,
          logger: deps.logger,
          now,
          newOwner: deps.newOwner ?? randomUUID,
          signal: run.signal,
          leaseMs: run.leaseMs,
        },
      ),
    async recordDone(ready) {
      if (!ready) return;
      link.url = ready.inviteUrl;
      if (order.state !== 'received') return;
      await record({
        step: { name: 'interview', record: { doneAt: now() } },
        move: 'createInterview',
        data: { interviewId: ready.interviewId, inviteUrl: ready.inviteUrl },
      });
    },
  };
  return [interview, inviteEmailStep(run, link, record)];
}

/** The invitation e-mail (Greenhouse expects the partner to send it); SES cannot be asked, so a start is recorded. */
function inviteEmailStep(
  run: OrderRun,
  link: { url: string },
  record: (write: Omit<Parameters<OrderStore['recordOrderStep']>[1], 'owner'>) => Promise<void>,
): Step<unknown> {
  const { order, deps, test, signal } = run;
  const now = deps.now ?? Date.now;
  const step = order.steps.inviteEmail;
  // When the e-mail was started: by an earlier worker, or by this one (kept when it ends uncertain).
  let startedAt = step?.startedAt;
  return {
    name: 'invite-emailed',
    done: step?.doneAt !== undefined,
    started: step?.startedAt !== undefined,
    signal,
    recordStart: () => {
      startedAt = now();
      return record({ step: { name: 'inviteEmail', record: { startedAt } } });
    },
    perform: () =>
      deps.mailer
        .sendInvite({
          to: order.candidateEmail,
          candidateName: order.candidateName ?? '',
          jobName: test.name,
          inviteUrl: link.url,
          language: test.interview.language,
          from: test.from,
        })
        .catch((error: unknown) => {
          const refused = refusalReason(error);
          // The e-mail is the order's only channel: a definite refusal fails the order (Greenhouse is told nothing).
          // An answer that did not come is recorded uncertain and never sent again (steps.ts).
          if (refused) throw new OrderRefusedError('mail-refused', `SES refused the invitation e-mail: ${refused}`);
          throw error;
        }),
    clearStart: () => record({ step: { name: 'inviteEmail', record: undefined } }),
    recordDone: (_result, outcome) =>
      record({
        step: {
          name: 'inviteEmail',
          record: {
            ...(startedAt === undefined ? {} : { startedAt }),
            doneAt: now(),
            ...(outcome === 'uncertain' ? { outcome } : {}),
          },
        },
        move: 'invite',
      }),
  };
}
