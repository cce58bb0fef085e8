import { describe, expect, it } from 'vitest';
import { connectionRate, createAtsAdapter, declaredStepCalls, PROFILES } from '../../../shared/ats';
import { CallPacer, Turns } from '../../../shared/pacing';
import type { AtsKind } from '../../../shared/config';
import { DynamoQueueLedger, dynamoMappingStore } from '../../../shared/mapping';
import { DynamoRateSchedule } from '../../../shared/mapping/rate-schedule';
import { sweepConnection } from '../../../shared/pipeline/sweep.use-case';
import type { StageEnteredMessage } from '../../../shared/queue';
import { LOCAL_DEFAULTS } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { emailsTo, useTestStack } from '../../helpers/local-stack';

const KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly AtsKind[];
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('The ATS sweep: stage changes whose webhook never came', () => {
  const held = useTestStack('sweep');

  /** The sweep of one connection as the reconciler runs it, its messages kept here instead of enqueued. */
  function sweepDeps(kind: AtsKind, maxPagesPerRun?: number) {
    const connection = held.stack.connections.find((c) => c.ats === kind)!;
    const configured = maxPagesPerRun ? { ...connection, sweep: { ...connection.sweep, maxPagesPerRun } } : connection;
    const secrets = held.stack.secrets[connection.secretRef]!;
    // Paced as the functions pace it: the ATS's documented rate, on the connection's schedule in the events table.
    const schedule = new DynamoRateSchedule({ table: held.stack.tables.events, client: held.stack.dynamo });
    const rate = connectionRate(configured);
    const { rateHeaders } = PROFILES[connection.ats];
    const stepCalls = declaredStepCalls(connection.ats, connection.writeBack.status === 'tags');
    const connectionId = connection.id;
    const gate = rate ? new CallPacer({ connectionId, rate, rateHeaders, schedule }) : undefined;
    const turns = rate ? new Turns({ connectionId, rate, schedule, stepCalls }) : undefined;
    const ats = createAtsAdapter(configured, secrets, gate ? { gate } : {});
    const context = { connection: configured, secrets, ats, turns };
    const enqueued: StageEnteredMessage[] = [];
    return {
      connectionId: connection.id,
      enqueued,
      gate,
      deps: {
        store: dynamoMappingStore({ tables: held.stack.tables, client: held.stack.dynamo }),
        ledger: new DynamoQueueLedger({ table: held.stack.tables.events, client: held.stack.dynamo }),
        contextFor: async () => context as never,
        logger: silent,
        enqueue: async (messages: StageEnteredMessage[]) => void enqueued.push(...messages),
      },
    };
  }

  it('keeps one schedule of ATS turns per connection in DynamoDB, whatever the environments on it', async () => {
    // Two environments' schedules (module state apart), one connection: their turns never overlap.
    const environments = [1, 2].map(
      () => new DynamoRateSchedule({ table: held.stack.tables.events, client: held.stack.dynamo }),
    );
    const connection = `schedule-${Date.now()}`;
    const now = Date.now();
    const turns = await Promise.all(
      Array.from({ length: 20 }, (_, i) => environments[i % 2]!.reserve(connection, 100, now)),
    );
    const sorted = [...turns].sort((a, b) => a - b);
    expect(sorted[0]).toBe(now);
    expect(sorted).toEqual(sorted.map((_, i) => now + i * 100));
    // A spent window moves it past the reset; an idle one starts again where it is asked.
    expect(await environments[0]!.reserve(connection, 0, now + 60_000)).toBe(now + 60_000);
    expect(await environments[1]!.reserve(connection, 100, now)).toBe(now + 60_000);
    expect(await environments[1]!.reserve(`${connection}-idle`, 100, now)).toBe(now);
    // Work of no message takes a near turn or none: free only after its `latest`, nothing is reserved.
    expect(await environments[0]!.reserve(connection, 100, now, now + 1_000)).toBe(now + 60_100);
    expect(await environments[1]!.reserve(connection, 100, now, now + 60_100)).toBe(now + 60_100);
    expect(await environments[0]!.reserve(connection, 0, now)).toBe(now + 60_200);
  });

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

  /**
   * Waits for the invite through one retry of its message: its e-mail, or, where SES's answer did not come on a busy
   * machine, the invitation recorded with its e-mail uncertain (never sent again: docs/architecture.md); answers
   * which. A timeout says what is left on the queues, and why, and what the connector recorded of the application
   * (its state and steps, no personal data).
   */
  async function invitedWithinRetry(
    email: string,
    kind: AtsKind,
    applicationId: string,
  ): Promise<'sent' | 'uncertain'> {
    // The queues' visibility timeout is six times the workers' timeout.
    const withinMs = 6 * LOCAL_DEFAULTS.functionTimeoutMs + 30_000;
    const { connectionId, deps } = sweepDeps(kind);
    const records = () => deps.store.findApplicationsByAtsId(connectionId, applicationId);
    const uncertain = async () =>
      (await records()).some((r) => r.state === 'invited' && r.steps.inviteEmail?.outcome === 'uncertain');
    try {
      let outcome: 'sent' | 'uncertain' = 'sent';
      const invited = async () => {
        if ((await emailsTo(held.stack, email)).length > 0) return true;
        if (await uncertain()) outcome = 'uncertain';
        return outcome === 'uncertain';
      };
      await waitFor(invited, withinMs, `the invite to ${email}`);
      return outcome;
    } catch (error) {
      const left = held.stack.watch.describeUnfinished();
      const steps = (r: Awaited<ReturnType<typeof records>>[number]) =>
        Object.entries(r.steps).map(([name, step]) => `${name}${step?.outcome ? ` (${step.outcome})` : ''}`);
      const recorded = (await records()).map((r) => `${r.state}, steps: ${steps(r).join(', ') || 'none'}`);
      throw new Error(
        `${(error as Error).message}; left on the queues: ${left.join('; ') || 'nothing'}; ` +
          `recorded: ${recorded.join('; ') || 'nothing'}`,
      );
    }
  }

  it.each(KINDS)(
    '%s: a candidate moved with the webhook off is invited by the next sweep, once',
    async (kind) => {
      const ats = held.stack.ats[kind];
      const email = `swept.${kind}@candidates.example.com`;
      const application = ats.addCandidate({ firstName: 'Swept', lastName: kind, email });
      ats.setWebhooksEnabled(false);
      try {
        const deliveries = await ats.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
        expect(deliveries.filter((d) => d.status !== undefined)).toEqual([]);
      } finally {
        ats.setWebhooksEnabled(true);
      }
      await held.stack.waitForQuiet();
      expect(await emailsTo(held.stack, email)).toHaveLength(0);

      await waitFor(
        async () => (await held.stack.reconcileNow()).swept >= 1,
        30_000,
        'a reconciler run that sweeps it',
      );
      // Within a retry: a worker's attempt that failed on a busy machine comes back after the visibility timeout.
      const invite = await invitedWithinRetry(email, kind, String(application.id));
      await held.stack.waitForQuiet();
      // A second sweep reads the whole stage again and finds every application known: nothing enqueued or sent.
      const again = await sweepUntilDone(kind);
      expect(again.listed).toBeGreaterThanOrEqual(1);
      expect(again.enqueued).toBe(0);
      await held.stack.waitForQuiet();
      // Once: an e-mail whose answer did not come is never sent again (it may have gone out).
      const sent = await emailsTo(held.stack, email);
      if (invite === 'sent') expect(sent).toHaveLength(1);
      else expect(sent.length).toBeLessThanOrEqual(1);
    },
    200_000,
  );

  /** Each ATS's list route, its page size, and whether a listed application carries the candidate's e-mail. */
  const LISTS = {
    greenhouse: { route: 'GET /v3/application_stages', pageSize: 50, withEmail: true },
    lever: { route: 'GET /v1/opportunities', pageSize: 100, withEmail: false },
    ashby: { route: 'POST /application.list', pageSize: 100, withEmail: true },
    workable: { route: 'GET /spi/v3/candidates', pageSize: 100, withEmail: true },
  } as const satisfies Record<AtsKind, unknown>;

  it.each(KINDS)(
    "%s: reads 1,000 applications of a stage within the ATS's rate limit and the run's page cap",
    async (kind) => {
      const view = held.stack.ats[kind];
      const list = LISTS[kind];
      view.setWebhooksEnabled(false);
      try {
        for (let i = 0; i < 1000; i++) {
          const a = view.addCandidate({ firstName: 'Bulk', lastName: String(i), email: `bulk${i}.${kind}@x.example` });
          await view.moveCandidate({ applicationId: a.id, stageName: 'AI Interview' });
        }
      } finally {
        view.setWebhooksEnabled(true);
      }
      // The sweep's adapter is new and knows no window yet: Workable's 10-s window, which the test before spent,
      // is let run out first, so the run starts on a window as the reconciler's would.
      if (kind === 'workable') await new Promise((r) => setTimeout(r, 10_000));
      const before = view.requests()[list.route] ?? 0;
      const throttledBefore = view.throttled();
      // Runs of at most 4 pages: the list takes several runs, its place kept between them. A run that finds the
      // ATS's window spent stops (Workable's 10 requests per 10 s) and the next run, a little later, goes on.
      const { connectionId, deps, enqueued, gate } = sweepDeps(kind, 4);
      const runs = [];
      for (let run = 0; run < 40 && runs.at(-1)?.state !== 'done'; run++) {
        const outcome = (await sweepConnection(connectionId, deps)).triggers[0]!;
        runs.push(outcome);
        // As the reconciler's next run would: after the window the ATS announced has reset (3 s at least).
        const wait = Math.min(31_000, Math.max(3_000, gate?.waitMs() ?? 0));
        if (outcome.state === 'rate-limited') await new Promise((r) => setTimeout(r, wait));
      }
      // The sandbox counts one window per API credential, which the tests before may have spent: the first run
      // reads a page, or stops for the spent window before sending anything.
      expect((runs[0]?.pages ?? 0) > 0 || runs[0]?.state === 'rate-limited').toBe(true);
      expect(runs.at(-1)?.state).toBe('done');
      expect(runs.every((r) => r.pages <= 4 && r.state !== 'failed')).toBe(true);
      expect(new Set(enqueued.map((m) => m.event.atsApplicationId)).size).toBe(1000);
      expect(enqueued).toHaveLength(1000);
      if (list.withEmail)
        expect(enqueued.every((m) => m.event.candidate.email?.endsWith(`.${kind}@x.example`))).toBe(true);
      // Within the ATS's rate limit: not one 429 for a spent window; one list request a page, none repeated.
      expect(view.throttled()).toBe(throttledBefore);
      const pages = runs.reduce((sum, r) => sum + r.pages, 0);
      expect((view.requests()[list.route] ?? 0) - before).toBe(pages);
      const listed = runs.reduce((sum, r) => sum + r.listed, 0);
      expect(listed).toBeGreaterThanOrEqual(1000);
      // Ashby has no stage filter: it pages through every active application and keeps those in the stage.
      if (kind !== 'ashby') expect(pages).toBe(Math.ceil(listed / list.pageSize));
    },
    180_000,
  );
});
