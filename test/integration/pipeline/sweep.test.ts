import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { createAtsAdapter } from '../../../shared/ats';
import type { AtsKind } from '../../../shared/config';
import { DynamoMappingStore } from '../../../shared/mapping';
import { sweepConnection } from '../../../shared/pipeline/sweep.use-case';
import type { StageEnteredMessage } from '../../../shared/queue';
import { waitFor } from '../../helpers/local-http';
import { emailsTo, startTestStack } from '../../helpers/local-stack';

const KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly AtsKind[];
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('The ATS sweep: stage changes whose webhook never came', () => {
  let stack: LocalStack;
  let workDir: string;

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'sweep-'));
    stack = await startTestStack(workDir);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  /** The sweep of one connection as the reconciler runs it, its messages kept here instead of enqueued. */
  function sweepDeps(kind: AtsKind, maxPagesPerRun?: number) {
    const connection = stack.connections.find((c) => c.ats === kind)!;
    const configured = maxPagesPerRun ? { ...connection, sweep: { ...connection.sweep, maxPagesPerRun } } : connection;
    const secrets = stack.secrets[connection.secretRef]!;
    const context = { connection: configured, secrets, ats: createAtsAdapter(configured, secrets) };
    const enqueued: StageEnteredMessage[] = [];
    return {
      connectionId: connection.id,
      enqueued,
      deps: {
        store: new DynamoMappingStore({ tables: stack.tables, client: stack.dynamo }),
        contextFor: async () => context as never,
        logger: silent,
        enqueue: async (messages: StageEnteredMessage[]) => void enqueued.push(...messages),
      },
    };
  }

  /** Sweeps until a run reads the list to its end (a run that finds the ATS's window spent leaves it to the next). */
  async function sweepUntilDone(kind: AtsKind) {
    const { connectionId, deps } = sweepDeps(kind);
    for (let run = 0; run < 30; run++) {
      const [trigger] = (await sweepConnection(connectionId, deps)).triggers;
      if (trigger?.state === 'done') return trigger;
      await new Promise((r) => setTimeout(r, 1000));
    }
    throw new Error(`${kind}: the sweep did not finish in 30 runs`);
  }

  it.each(KINDS)(
    '%s: a candidate moved with the webhook off is invited by the next sweep, once',
    async (kind) => {
      const ats = stack.ats[kind];
      const email = `swept.${kind}@candidates.example.com`;
      const application = ats.addCandidate({ firstName: 'Swept', lastName: kind, email });
      ats.setWebhooksEnabled(false);
      try {
        const deliveries = await ats.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
        expect(deliveries.filter((d) => d.status !== undefined)).toEqual([]);
      } finally {
        ats.setWebhooksEnabled(true);
      }
      await stack.waitForQuiet();
      expect(await emailsTo(stack, email)).toHaveLength(0);

      await waitFor(async () => (await stack.reconcileNow()).swept >= 1, 30_000, 'a reconciler run that sweeps it');
      await waitFor(async () => (await emailsTo(stack, email)).length > 0, 30_000, `the invite to ${email}`);
      await stack.waitForQuiet();
      // A second sweep reads the whole stage again and finds every application known: nothing enqueued or sent.
      const again = await sweepUntilDone(kind);
      expect(again.listed).toBeGreaterThanOrEqual(1);
      expect(again.enqueued).toBe(0);
      await stack.waitForQuiet();
      expect(await emailsTo(stack, email)).toHaveLength(1);
    },
    120_000,
  );

  it("reads 1,000 applications of a stage within Greenhouse's rate limit and the run's page cap", async () => {
    const greenhouse = stack.greenhouse;
    const view = stack.ats.greenhouse;
    view.setWebhooksEnabled(false);
    try {
      for (let i = 0; i < 1000; i++) {
        const a = view.addCandidate({ firstName: 'Bulk', lastName: String(i), email: `bulk${i}@x.example` });
        await view.moveCandidate({ applicationId: a.id, stageName: 'AI Interview' });
      }
    } finally {
      view.setWebhooksEnabled(true);
    }
    const before = greenhouse.state.requests['GET /v3/applications'] ?? 0;
    const throttledBefore = greenhouse.state.throttled;
    // Runs of 10 pages (50 applications a page): the list takes several runs, its place kept between them.
    const { connectionId, deps, enqueued } = sweepDeps('greenhouse', 10);
    const runs = [];
    for (let run = 0; run < 5 && runs.at(-1)?.state !== 'done'; run++)
      runs.push((await sweepConnection(connectionId, deps)).triggers[0]!);
    expect(runs[0]).toMatchObject({ pages: 10, state: 'continues' });
    expect(runs.at(-1)?.state).toBe('done');
    expect(runs.every((r) => r.pages <= 10)).toBe(true);
    expect(new Set(enqueued.map((m) => m.event.atsApplicationId)).size).toBe(1000);
    expect(enqueued).toHaveLength(1000);
    expect(enqueued.every((m) => m.event.candidate.email?.endsWith('@x.example'))).toBe(true);
    // Within the window Greenhouse announces: not one 429 for a spent window; the stage in pages of 50.
    expect(greenhouse.state.throttled).toBe(throttledBefore);
    const pages = runs.reduce((sum, r) => sum + r.pages, 0);
    expect(pages).toBe(Math.ceil(runs.reduce((sum, r) => sum + r.listed, 0) / 50));
    expect((greenhouse.state.requests['GET /v3/applications'] ?? 0) - before).toBe(pages);
  }, 120_000);
});
