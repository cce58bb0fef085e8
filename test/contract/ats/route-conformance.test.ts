import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import type { AtsKind } from '../../../shared/config';
import { runDoctor } from '../../helpers/doctor';
import { waitFor } from '../../helpers/local-http';
import { emailsTo, invitedInterviewId, startTestStack } from '../../helpers/local-stack';
import { undocumentedCalls } from '../../../infra/local/sandbox/documented-routes';

const KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly AtsKind[];

/**
 * Every call the adapters, the sweep and the doctor make reaches a sandbox, which records its method, route, query
 * parameters and body fields; each is held against the vendors' documented routes
 * (infra/local/sandbox/documented-routes.json).
 */
describe('Route conformance: every ATS call is one the vendor documents', () => {
  let stack: LocalStack;
  let workDir: string;

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'routes-'));
    stack = await startTestStack(workDir, { lifecycle: { status: 'tags', reminders: { afterHours: 48, max: 1 } } });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('invitations, write-backs with moves and status tags, the sweep and the doctor: all documented', async () => {
    await Promise.all(
      KINDS.map(async (kind) => {
        const ats = stack.ats[kind];
        const email = `routes.${kind}@candidates.example.com`;
        const application = ats.addCandidate({ firstName: 'Rou', lastName: kind, email });
        await ats.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
        const interviewId = await invitedInterviewId(stack, email);
        const { report_id: reportId } = stack.interview.completeInterview({
          interview_id: interviewId,
          candidate_name: `Rou ${kind}`,
          candidate_email: email,
          delay_ms: 0,
          ai_match_score: 92,
          proctoring_violations: 0,
        });
        await waitFor(() => ats.notesOf(application.id).some((n) => n.includes(reportId)), 60_000, `${kind} note`);
        // A stage change whose webhook never came, found by the sweep.
        const swept = `routes.swept.${kind}@candidates.example.com`;
        const lost = ats.addCandidate({ firstName: 'Swe', lastName: kind, email: swept });
        ats.setWebhooksEnabled(false);
        try {
          await ats.moveCandidate({ applicationId: lost.id, stageName: 'AI Interview' });
        } finally {
          ats.setWebhooksEnabled(true);
        }
        // A bound, not a target: a sweep yields to its connection's backlog and to a busy rate schedule (the suite's
        // other files share the two cores), so it may take a few runs of the reconciler.
        await waitFor(
          async () => {
            await stack.reconcileNow();
            return (await emailsTo(stack, swept)).length > 0;
          },
          120_000,
          `${kind} sweep`,
        );
      }),
    );
    await stack.waitForQuiet(60_000);
    const doctor = await runDoctor(['--stack', stack.stackFile]);
    expect(doctor.code, doctor.output).toBe(0);

    for (const kind of KINDS) {
      const calls = stack.ats[kind].calls();
      if (process.env.PRINT_ATS_CALLS)
        console.log(
          calls.map((c) => `${kind} ${c.method} ${c.route} ?${c.query.join('&')} {${c.body.join(',')}}`).join('\n'),
        );
      expect(calls.length).toBeGreaterThan(5);
      expect(undocumentedCalls(kind, calls)).toEqual([]);
    }
    expect(stack.greenhouse.state.calls).not.toEqual({});
  }, 300_000);

  it('fails on a call with a parameter the vendor does not document', async () => {
    const before = stack.ats.workable.calls();
    const token = stack.secrets[stack.connections.find((c) => c.ats === 'workable')!.secretRef]!.atsApiKey;
    // Workable's window (10 per 10 s) may be spent by the run before: a 429 is not the call, so it is made again.
    for (let attempt = 0; attempt < 30; attempt++) {
      const response = await fetch(`${stack.ats.workable.url}/spi/v3/candidates?shortcode=GROOV005&status=hired`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (response.status !== 429) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const problems = undocumentedCalls('workable', stack.ats.workable.calls());
    expect(problems).toEqual(['workable GET /spi/v3/candidates: undocumented query parameter status']);
    expect(undocumentedCalls('workable', before)).toEqual([]);
  });
});
