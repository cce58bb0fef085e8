import type { QueueMessage } from '../../shared/queue';
import { timeLeftMs } from '../../shared/http/deadline';
import type { DeferTarget } from './deferral';

interface DeferredCopy {
  message: QueueMessage;
  delaySeconds: number;
}

/**
 * The copies an invocation's records send back, gathered into as few SendMessageBatch requests as their delays
 * allow (records run in parallel, and defer at different moments: at once when their turn is far, later when a step
 * finds no room). The copies go once every record still running waits for its own, or when the most urgent could
 * wait no longer (a second before its delay ends), or at the invocation's deadline. A copy's delay counts from when
 * it was planned, so being gathered does not bring it back later. Each record waits for its own copy's answer.
 */
export class DeferralBatch {
  private pending: { copy: DeferredCopy; plannedAt: number; done: (sent: boolean) => void }[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private running: number;

  public constructor(
    private readonly publish: (copies: DeferredCopy[]) => Promise<boolean[]>,
    records: number,
    private readonly signal: AbortSignal,
    private readonly now: () => number = Date.now,
  ) {
    this.running = records;
  }

  /** One record is finished (acknowledged, failed, or deferred): the copies may be all there are to wait for. */
  public settled(): void {
    this.running--;
    this.plan();
  }

  /** Sends `copy` with the others; true once SQS took it. */
  public send(copy: DeferredCopy): Promise<boolean> {
    return new Promise((resolve) => {
      this.pending.push({ copy, plannedAt: this.now(), done: resolve });
      this.plan();
    });
  }

  private plan(): void {
    if (!this.pending.length) return;
    const now = this.now();
    const due =
      this.pending.length >= this.running
        ? now
        : Math.min(
            now + timeLeftMs(this.signal, this.now),
            ...this.pending.map((p) => p.plannedAt + Math.max(0, p.copy.delaySeconds - 1) * 1000),
          );
    if (due >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = due;
    // On a later turn of the event loop at the soonest, so the records that defer in the same moment join.
    this.timer = setTimeout(() => void this.flush(), Math.max(0, due - now));
  }

  private async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const batch = this.pending;
    this.pending = [];
    if (!batch.length) return;
    const now = this.now();
    // Sent even when the deadline's signal has fired: the margin it leaves before the function's timeout is there for
    // this, and a record that is neither deferred nor failed would be lost.
    const sent = await this.publish(
      batch.map(({ copy, plannedAt }) => ({
        message: copy.message,
        delaySeconds: Math.max(0, copy.delaySeconds - Math.floor((now - plannedAt) / 1000)),
      })),
    ).catch(() => batch.map(() => false));
    for (const [index, p] of batch.entries()) p.done(sent[index] === true);
  }
}

/** A batch of the worker's own copies, sent to its queue (the DeferTarget's). */
export function deferralBatch(target: DeferTarget, records: number, signal: AbortSignal): DeferralBatch {
  return new DeferralBatch((copies) => target.publisher.publishDelayed(target.queueUrl(), copies), records, signal);
}
