import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KitApplication } from '../../../infra/local/sandbox/ats/ats-sandbox-kit';
import { startGreenhouseSandbox, type GreenhouseSandbox } from '../../../infra/local/sandbox/ats/greenhouse/server';
import { GreenhouseAdapter } from '../../../shared/ats/greenhouse/greenhouse.adapter';
import { CallPacer, type RateSchedule } from '../../../shared/pacing';
import { greenhouseProfile } from '../../../shared/ats/greenhouse/profile';
import { greenhouseSandboxConnection } from '../../helpers/connections';

/** A schedule that always has room now: the gate's guard alone at work. */
const turnsAtOnce: RateSchedule = { reserve: async (_connection, _span, notBefore) => notBefore };

describe('Class: GreenhouseAdapter (against the Greenhouse sandbox over HTTP)', () => {
  let sandbox: GreenhouseSandbox;
  let tokenRequests = 0;
  // Greenhouse says when a token ends (`expires_at`, by its clock): the adapter's clock starts at the real time.
  let now = Date.now();
  const countingFetch: typeof fetch = (input, init) => {
    if (String(input).endsWith('/token')) tokenRequests++;
    return fetch(input, init);
  };
  const adapter = (options: { clientSecret?: string; sleep?: (ms: number) => Promise<void> } = {}) =>
    new GreenhouseAdapter({
      ...greenhouseSandboxConnection(sandbox, { atsClientSecret: options.clientSecret ?? sandbox.clientSecret }),
      fetch: countingFetch,
      now: () => now,
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      sleep: options.sleep ?? (async () => undefined),
    });
  const candidate = () =>
    sandbox.addCandidate({ firstName: 'Ana', lastName: 'Ruiz', email: 'ana@example.com', jobId: '3301' });
  const target = (application: KitApplication) => ({
    atsApplicationId: application.id,
    atsCandidateId: application.candidateId,
    atsJobId: '3301',
    fromStageId: application.stageId,
  });

  beforeAll(async () => {
    sandbox = await startGreenhouseSandbox({ port: 0, rateLimit: 10_000 });
  });
  afterEach(() => {
    Object.assign(sandbox.state.faults, { rate429: 0, rate500: 0 });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('posts a note on the candidate as the configured user, with its marker, and finds it again', async () => {
    const application = candidate();
    const gh = adapter();
    const { noteId } = await gh.postNote(target(application), {
      body: 'AI interview completed',
      marker: 'ai-interview-report:r1',
    });
    const note = sandbox.state.notes.find((n) => n.id === noteId);
    expect(note).toMatchObject({
      candidateId: application.candidateId,
      applicationId: application.id,
      fields: { visibility: 'admin_only_visible', user_id: 4080, type: 'NOTE' },
    });
    expect(note?.body).toContain('[ai-interview-report:r1]');
    expect(await gh.findNote(target(application), 'ai-interview-report:r1')).toEqual({ noteId });
    expect(await gh.findNote(target(application), 'ai-interview-report:other')).toBeUndefined();
  });

  it('reuses the OAuth token until shortly before it expires', async () => {
    const gh = adapter();
    const application = candidate();
    tokenRequests = 0;
    await gh.findNote(target(application), 'x');
    await gh.findNote(target(application), 'x');
    expect(tokenRequests).toBe(1);
    now += 3600_000 - 30_000;
    await gh.findNote(target(application), 'x');
    expect(tokenRequests).toBe(2);
    now = Date.now();
  });

  it('refuses with a clear error when the client credentials are wrong', async () => {
    await expect(adapter({ clientSecret: 'wrong' }).findNote(target(candidate()), 'x')).rejects.toMatchObject({
      code: 'ats-unauthorized',
      retryable: false,
    });
  });

  it('moves to a stage by name once; a retry finds it there and does not move again', async () => {
    const application = candidate();
    await sandbox.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const gh = adapter();
    const first = await gh.moveToStage(target(application), { name: 'Hiring Manager Review' });
    expect(first).toEqual({ moved: true, stageId: '9002' });
    const again = await gh.moveToStage(target(application), { name: 'Hiring Manager Review' });
    expect(again).toEqual({ moved: false, stageId: '9002' });
    expect(
      sandbox.state.moves.filter((m) => m.applicationId === application.id && m.toStageId === '9002'),
    ).toHaveLength(1);
    await expect(gh.moveToStage(target(application), { name: 'No Such Stage' })).rejects.toMatchObject({
      code: 'ats-invalid-request',
    });
  });

  it('sends nothing into a window the ATS said is spent: the wait goes up to defer the work', async () => {
    // A window of 10 minutes allowing 5 requests for the API credential.
    const limited = await startGreenhouseSandbox({ port: 0, rateLimit: 5, rateWindowMs: 600_000 });
    try {
      // The connection's gate, on a schedule of its own: it keeps to the window the ATS announces.
      const gate = new CallPacer({
        connectionId: 'c',
        rate: { limit: 1_000, windowMs: 1_000 },
        rateHeaders: greenhouseProfile.rateHeaders,
        schedule: turnsAtOnce,
      });
      const gh = new GreenhouseAdapter({
        gate,
        ...greenhouseSandboxConnection(limited),
        retry: { baseDelayMs: 1, maxDelayMs: 5 },
        sleep: async () => undefined,
      });
      const application = limited.addCandidate({ firstName: 'A', lastName: 'R', email: 'a@example.com' });
      // Each answer says how many requests are left in the window.
      for (let i = 0; i < 5; i++) await gh.findNote(target(application), 'x');
      const sixth = await gh.findNote(target(application), 'x').catch((error: unknown) => error);
      expect(sixth).toMatchObject({ code: 'ats-rate-limited', retryable: true });
      expect((sixth as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(5_000);
      expect((sixth as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(601_000);
      expect(gate.waitMs()).toBeGreaterThan(5_000);
      // Kept back by the connector: the ATS answered no 429.
      expect(limited.state.throttled).toBe(0);
    } finally {
      await limited.close();
    }
  });

  it.each([
    ['never re-sends a note that may have been written (5xx): retryable, with mayHaveSucceeded', 'rate500', 1],
    ['re-sends a note Greenhouse refused with 429, since nothing was written', 'rate429', 5],
  ] as const)('%s', async (_title, fault, sent) => {
    sandbox.state.faults[fault] = 1;
    const before = sandbox.state.requests['POST /v3/notes'] ?? 0;
    const error = await adapter()
      .postNote(target(candidate()), { body: 'x', marker: 'm' })
      .catch((e: unknown) => e);
    const code = fault === 'rate500' ? 'ats-unavailable' : 'ats-rate-limited';
    expect(error).toMatchObject({ code, retryable: true, mayHaveSucceeded: fault === 'rate500' });
    expect((sandbox.state.requests['POST /v3/notes'] ?? 0) - before).toBe(sent);
  });

  it('maps a note on an unknown candidate to not-found', async () => {
    await expect(
      adapter().postNote(
        { atsApplicationId: '1', atsCandidateId: '999999', atsJobId: '3301' },
        { body: 'x', marker: 'm' },
      ),
    ).rejects.toMatchObject({ code: 'ats-not-found', status: 404 });
  });
});
