import { describe, expect, it } from 'vitest';
import type { AtsKind } from '../../../shared/config';
import { DynamoRateSchedule } from '../../../shared/mapping/rate-schedule';
import { LOCAL_DEFAULTS } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { emailsTo, useTestStack } from '../../helpers/local-stack';
import { sweepDeps, sweepUntilDone } from '../../helpers/sweep';

const KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly AtsKind[];

describe('The ATS sweep: stage changes whose webhook never came', () => {
  const held = useTestStack('sweep');

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
    const { connectionId, deps } = sweepDeps(held.stack, kind);
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
      const again = await sweepUntilDone(held.stack, kind);
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
});
