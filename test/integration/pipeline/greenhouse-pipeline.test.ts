import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { emailsTo, scanTable } from '../../helpers/local-stack';
import { useGreenhouseStack } from '../../helpers/greenhouse-stack';

describe('Pipeline: Greenhouse end to end on the local stack', () => {
  const greenhouse = useGreenhouseStack('greenhouse-pipeline');
  const { interviewsCreated, invitedCandidate } = greenhouse;
  let stack: LocalStack;
  beforeAll(() => {
    ({ stack } = greenhouse.held);
  });

  it('invites once when the same delivery arrives three times', async () => {
    const email = 'triple@candidates.example.com';
    const application = stack.greenhouse.addCandidate({ firstName: 'Tri', lastName: 'Ple', email, jobId: '3301' });
    const deliveries = await stack.greenhouse.moveCandidate({
      applicationId: application.id,
      stageName: 'AI Interview',
      repeat: 3,
    });
    expect(deliveries.map((d) => d.status)).toEqual([200, 200, 200]);
    expect(new Set(deliveries.map((d) => d.eventId)).size).toBe(1);
    await waitFor(async () => (await emailsTo(stack, email)).length > 0, 20_000, 'the invite');
    await stack.waitForQuiet();
    expect(await emailsTo(stack, email)).toHaveLength(1);
    expect(
      stack.greenhouse.state.notes.filter(
        (n) => n.candidateId === application.candidateId && n.body.includes('ai-interview-invite:'),
      ),
    ).toHaveLength(1);
    expect(interviewsCreated()).toBe(1);
  });

  it('invites once when the same stage is entered twice under different event ids', async () => {
    const { email, application } = await invitedCandidate();
    const resend = await stack.greenhouse.resendStageChange(application.id);
    expect(resend.map((d) => d.status)).toEqual([200]);
    await stack.waitForQuiet();
    expect(await emailsTo(stack, email)).toHaveLength(1);
    expect(interviewsCreated()).toBe(1);
    const events = await scanTable(stack, stack.tables.events);
    expect(events.filter((e) => String(e.pk).startsWith('greenhouse:')).length).toBeGreaterThanOrEqual(2);
  });

  // Bounds for a loaded machine (two suites at once, 20 cold environments): the test asserts exactly once, not speed.
  it('creates exactly one interview when 20 candidates of a new job enter at once', async () => {
    const before = interviewsCreated();
    const applications = Array.from({ length: 20 }, (_, i) =>
      stack.greenhouse.addCandidate({
        firstName: 'Burst',
        lastName: String(i),
        email: `burst-${i}@candidates.example.com`,
        jobId: '3302',
      }),
    );
    await Promise.all(
      applications.map((a) => stack.greenhouse.moveCandidate({ applicationId: a.id, stageName: 'AI Interview' })),
    );
    await waitFor(
      async () =>
        (await Promise.all(applications.map((_, i) => emailsTo(stack, `burst-${i}@candidates.example.com`)))).every(
          (m) => m.length === 1,
        ),
      90_000,
      '20 invites',
    );
    await stack.waitForQuiet();
    expect(interviewsCreated() - before).toBe(1);
    const jobs = await scanTable(stack, stack.tables.jobs);
    expect(jobs.filter((j) => j.atsJobId === '3302')).toEqual([expect.objectContaining({ state: 'ready' })]);
  }, 120_000);
});
