import { createHmac, randomUUID } from 'node:crypto';
import { postWebhook } from '../http-kit';
import type { UnifiedApplication, UnifiedCandidate, UnifiedIntegration } from './unified-records';

/**
 * Kombo's synced copy catching up with the ATS: a change made in the ATS reaches the copy `syncLagMs` later, and
 * only then a signed `data-changed` hint goes to every registered webhook (https://docs.kombo.dev/webhooks,
 * https://docs.kombo.dev/ats/getting-started/syncing-data). A write through Kombo's API is in both at once and
 * hinted after the lag too. The hint names models only, never records.
 */
export type HintTarget = { url: string; secret: string };
/** One hint as sent to one webhook (`dropped`: never sent; `duplicate`: the same event sent again). */
export type HintDelivery = { eventId: string; integrationId: string; models: string[]; at: number } & {
  url?: string;
  status?: number;
  error?: string;
  dropped?: boolean;
  duplicate?: boolean;
};
/** Which records changed, by id: what the sync copies over. */
export type Changed = { applications?: string[]; candidates?: string[] };
export type HintFaults = { dropHintRate: number; duplicateHintRate: number };

/** The fields of a record Kombo's `changed_at` follows: its own, not its timestamps nor nested records. */
const ownFields = ({ changedAt: _c, updatedAt: _u, ...own }: UnifiedApplication | UnifiedCandidate) =>
  JSON.stringify(own);

/** Copies the ATS's records into Kombo's copy: `updatedAt` moves, `changed_at` only where own fields differ. */
export function copyToSynced(integration: UnifiedIntegration, changed: Changed, at = new Date().toISOString()) {
  const copy = <T extends UnifiedApplication | UnifiedCandidate>(
    from: Map<string, T>,
    to: Map<string, T>,
    id: string,
  ) => {
    const [real, known] = [from.get(id), to.get(id)];
    if (!real) return;
    const same = known !== undefined && ownFields(known) === ownFields(real);
    to.set(id, { ...structuredClone(real), changedAt: same ? known.changedAt : at, updatedAt: at });
  };
  for (const id of changed.candidates ?? []) copy(integration.ats.candidates, integration.synced.candidates, id);
  for (const id of changed.applications ?? []) copy(integration.ats.applications, integration.synced.applications, id);
}

/** The models a change touched, as the hint names them. */
const modelsOf = (changed: Changed) => [
  ...(changed.applications?.length ? ['ats_applications'] : []),
  ...(changed.candidates?.length ? ['ats_candidates'] : []),
];

export class SyncClock {
  public readonly targets: HintTarget[] = [];
  public readonly deliveries: HintDelivery[] = [];
  private readonly pending = new Set<Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();

  public constructor(private readonly options: { lagMs: () => number; faults: HintFaults; random: () => number }) {}

  /** A change in the ATS: in Kombo's copy after the lag, then hinted. */
  public changedInAts(integration: UnifiedIntegration, changed: Changed): void {
    this.later(() => {
      copyToSynced(integration, changed);
      return this.hint(integration, modelsOf(changed));
    });
  }

  /** A write through Kombo's API: in both at once (Kombo writes through), hinted after the lag. */
  public writtenThrough(integration: UnifiedIntegration, changed: Changed): void {
    copyToSynced(integration, changed);
    this.later(() => this.hint(integration, modelsOf(changed)));
  }

  /** Resolves once every sync and hint scheduled so far (and those they scheduled) is done. */
  public async idle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  public stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private later(work: () => Promise<void>): void {
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void work().then(resolve, resolve);
      }, this.options.lagMs());
      this.timers.add(timer);
    });
    this.pending.add(done);
    void done.then(() => this.pending.delete(done));
  }

  /** The hint to each webhook, signed with its secret: dropped or sent twice as the faults draw. */
  private async hint(integration: UnifiedIntegration, models: string[]): Promise<void> {
    const { faults, random } = this.options;
    const eventId = randomUUID();
    const base = { eventId, integrationId: integration.id, models, at: Date.now() };
    if (random() < faults.dropHintRate) {
      this.deliveries.push({ ...base, dropped: true });
      return;
    }
    const times = random() < faults.duplicateHintRate ? 2 : 1;
    const body = JSON.stringify({
      id: eventId,
      type: 'data-changed',
      data: {
        ...{ integration_id: integration.id, integration_tool: integration.tool, integration_category: 'ATS' },
        changed_models: models.map((name) => ({ name })),
      },
    });
    for (let time = 0; time < times; time++)
      for (const target of this.targets) {
        // X-Kombo-Signature: HMAC-SHA256 of the body, base64url without padding (as server.ts signs; unconfirmed).
        const signature = createHmac('sha256', target.secret).update(body).digest('base64url');
        const answer = await postWebhook(target.url, body, { headers: { 'x-kombo-signature': signature } });
        const outcome = 'error' in answer ? { error: answer.error } : { status: answer.status };
        this.deliveries.push({ ...base, url: target.url, ...outcome, ...(time > 0 ? { duplicate: true } : {}) });
      }
  }
}
