import { describe, it } from 'vitest';
import type { AtsKind, DirectAtsKind } from '../../../shared/config';
import { sweepConnection } from '../../../shared/pipeline/sweep.use-case';
import { useTestStack } from '../../helpers/local-stack';
import { sweepDeps } from '../../helpers/sweep';

const KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly AtsKind[];

/**
 * The sweep at scale, at each ATS's documented rate (the sandboxes enforce it, the connections declare it): a stage of
 * 1,000 applications read in runs of a few pages, within the rate limit. The four ATSs run side by side: each its own
 * sandbox, credential and schedule. Greenhouse at 50 per 10 s, the limit Harvest's earlier versions documented (the
 * bench measures both): at 75 per 30 s (v3's windows, its ceiling unpublished) its 85 reads alone take about 40 s.
 */
describe('The ATS sweep at scale', () => {
  const held = useTestStack('sweep-scale', {
    atsRateLimits: { greenhouse: 50 },
    atsRateWindowsMs: { greenhouse: 10_000 },
  });

  /**
   * Each ATS's list route, its page size, whether a listed application carries the candidate's e-mail, and the pages
   * of a pass that read no list (Greenhouse's look at the stage by name over the jobs, first).
   */
  const LISTS = {
    greenhouse: { route: 'GET /v3/application_stages', pageSize: 50, withEmail: true, lookPages: 1 },
    lever: { route: 'GET /v1/opportunities', pageSize: 100, withEmail: false, lookPages: 0 },
    ashby: { route: 'POST /application.list', pageSize: 100, withEmail: true, lookPages: 0 },
    workable: { route: 'GET /spi/v3/candidates', pageSize: 100, withEmail: true, lookPages: 0 },
  } as const satisfies Record<DirectAtsKind, unknown>;

  it.concurrent.for<DirectAtsKind>(KINDS)(
    "%s: reads 1,000 applications of a stage within the ATS's rate limit and the run's page cap",
    { timeout: 180_000 },
    async (kind, { expect }) => {
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
      const before = view.requests()[list.route] ?? 0;
      const throttledBefore = view.throttled();
      // Runs of at most 4 pages: the list takes several runs, its place kept between them. A run that finds the
      // ATS's window spent stops (Workable's 10 requests per 10 s) and the next run, a little later, goes on.
      const { connectionId, deps, enqueued, gate } = sweepDeps(held.stack, kind, 4);
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
      expect((view.requests()[list.route] ?? 0) - before).toBe(pages - list.lookPages);
      const listed = runs.reduce((sum, r) => sum + r.listed, 0);
      expect(listed).toBeGreaterThanOrEqual(1000);
      // Ashby has no stage filter: it pages through every active application and keeps those in the stage.
      if (kind !== 'ashby') expect(pages - list.lookPages).toBe(Math.ceil(listed / list.pageSize));
    },
  );
});
