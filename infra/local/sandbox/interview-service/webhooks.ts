import { formatTimestamp, postWebhook, sleep } from '../http-kit';
import type { SandboxDelivery, SandboxReport, SandboxState, SandboxWebhook } from './types';

/**
 * The service's report webhooks (`interview_report.created`): each delivery recorded, dropped at the configured
 * rate, and tracked until it is answered so a test can wait for the sandbox to be idle.
 */
export class ReportDeliveries {
  private readonly pending = new Set<Promise<unknown>>();

  public constructor(
    private readonly state: SandboxState,
    private readonly random: () => number,
    private readonly timeoutMs: number,
  ) {}

  /** Work the sandbox does after answering (a report's delay, a delivery): waited for by `whenIdle`. */
  public track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise)).catch(() => undefined);
    return promise;
  }

  public notify(webhooks: readonly SandboxWebhook[], report: SandboxReport): void {
    for (const webhook of webhooks) void this.track(this.deliver(webhook, report));
  }

  /** Resolves once every scheduled report is created and every delivery answered, or rejects after `timeoutMs`. */
  public async whenIdle(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending.size > 0) {
      if (Date.now() > deadline)
        throw new Error(`sandbox still busy after ${timeoutMs} ms (${this.pending.size} pending)`);
      await Promise.race([Promise.allSettled([...this.pending]), sleep(50)]);
    }
  }

  private async deliver(webhook: SandboxWebhook, report: SandboxReport): Promise<void> {
    const record: SandboxDelivery = {
      webhook_id: webhook.webhook_id,
      url: webhook.url,
      report_id: report.report_id,
      outcome: 'dropped',
      at: formatTimestamp(new Date()),
    };
    this.state.deliveries.push(record);
    if (this.random() < this.state.faults.dropWebhookRate) return;
    const body = JSON.stringify({ event: 'interview_report.created', data: report });
    const answer = await postWebhook(webhook.url, body, { timeoutMs: this.timeoutMs });
    if ('error' in answer) Object.assign(record, { outcome: 'failed', error: answer.error });
    else
      Object.assign(record, {
        outcome: answer.status < 300 ? 'delivered' : 'failed',
        status: answer.status,
        answeredAtMs: Date.now(),
      });
  }
}
