import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AtsSandbox, LifecycleAction } from '../../../infra/local/sandbox/ats/ats-sandbox-kit';
import { startWorkableSandbox, WORKABLE_SANDBOX_DEFAULTS } from '../../../infra/local/sandbox/ats/workable/server';
import type { ApplicationStanding, WebhookParseResult } from '../../../shared/ats/port';
import { WorkableSetupAdapter } from '../../../shared/ats/workable/workable.setup';
import { parseConnections } from '../../../shared/config';
import { connectionDocument } from '../../helpers/connections';
import { startRecordingServer } from '../../helpers/local-http';

type Receiver = Awaited<ReturnType<typeof startRecordingServer>>;

describe('Workable adapter against the Workable sandbox: a candidate leaving and coming back', () => {
  let sandbox: AtsSandbox;
  let receiver: Receiver;
  let adapter: WorkableSetupAdapter;

  beforeAll(async () => {
    sandbox = await startWorkableSandbox({ port: 0, rateLimit: 10_000 });
    receiver = await startRecordingServer();
    const connection = parseConnections(
      connectionDocument({
        id: 'acme-workable',
        ats: 'workable',
        atsBaseUrl: sandbox.url,
        atsUserId: WORKABLE_SANDBOX_DEFAULTS.memberIds[0],
        triggers: [
          {
            id: 'ai-screen',
            stage: { name: 'AI Interview' },
            interview: { questions: [{ question: 'Tell us about a system you built.', time: 3, type: 'audio' }] },
          },
        ],
      }),
    )[0]!;
    // Workable signs with the account token (reference: webhooks): the subscription's secret is the API key.
    const token = WORKABLE_SANDBOX_DEFAULTS.token;
    adapter = new WorkableSetupAdapter({
      connection,
      secrets: {
        interviewApiKey: 'k',
        interviewWebhookToken: 't'.repeat(32),
        atsApiKey: token,
        atsWebhookSecret: token,
      },
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      sleep: async () => undefined,
    });
    // As `doctor --register-webhooks` does: one subscription on every job and stage, so moves out reach it too.
    for (const event of adapter.webhookEvents)
      await adapter.setup.createWebhook({ event, url: receiver.url, secret: undefined });
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
  });

  /** A candidate in the AI Interview stage, as after an invitation. */
  const invited = async (firstName: string) => {
    const application = sandbox.addCandidate({ firstName, lastName: 'Ruiz', email: `${firstName}@example.com` });
    await sandbox.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const target = { atsApplicationId: application.id, atsCandidateId: application.id, atsJobId: application.jobId };
    return { application, target };
  };

  /** What the connector makes of the last delivery: refused unless its signature verifies. */
  const lastDelivery = (): WebhookParseResult => {
    const last = receiver.received.at(-1);
    const request = {
      headers: { 'x-workable-signature': String(last?.headers['x-workable-signature'] ?? '') },
      rawBody: Buffer.from(last?.body ?? ''),
    };
    const verified = adapter.verifyWebhook(request, Date.now());
    expect(verified).toEqual({ valid: true });
    return adapter.parseWebhook(request);
  };

  it.each<[LifecycleAction, string | undefined, ApplicationStanding, string]>([
    ['reject', 'Not a fit', { active: false, exit: 'rejected', reason: 'Not a fit' }, 'AI Interview'],
    [
      'withdraw',
      'Candidate withdrew',
      { active: false, exit: 'rejected', reason: 'Candidate withdrew' },
      'AI Interview',
    ],
    ['hire', undefined, { active: false, exit: 'hired' }, 'Hired'],
  ])(
    '%s: the signed candidate_moved parses as left, the read says why, and a move is refused',
    async (action, reason, standing, stageName) => {
      const { application, target } = await invited(`ana-${action}`);
      const deliveries = await sandbox.changeLifecycle({ applicationId: application.id, action, reason });
      expect(deliveries).toHaveLength(1);
      expect(lastDelivery()).toEqual({
        kind: 'application-changed',
        event: { deliveryId: expect.any(String), atsApplicationId: application.id, change: 'left' },
      });
      expect(await adapter.readStanding(target)).toEqual(standing);
      expect(sandbox.stageNameOf(application.id)).toBe('AI Interview');
      const moves = sandbox.movesOf(application.id).length;
      const moveCalls = sandbox.requests()['POST /spi/v3/candidates/:id/move'] ?? 0;
      const answer = await adapter.moveToStage(target, { name: 'Hiring Manager Review' });
      const stageId = stageName === 'Hired' ? 'hired' : 'ai-interview';
      expect(answer).toEqual({ moved: false, stageId, exit: standing.active ? undefined : standing.exit });
      expect(sandbox.movesOf(application.id)).toHaveLength(moves);
      expect(sandbox.requests()['POST /spi/v3/candidates/:id/move'] ?? 0).toBe(moveCalls);
    },
  );

  it('unreject: the requalified candidate comes as a stage entry, reads active again and can be moved', async () => {
    const { application, target } = await invited('bo');
    await sandbox.changeLifecycle({ applicationId: application.id, action: 'reject', reason: 'Not a fit' });
    expect(await adapter.readStanding(target)).toMatchObject({ active: false, exit: 'rejected' });
    const deliveries = await sandbox.changeLifecycle({ applicationId: application.id, action: 'unreject' });
    expect(deliveries).toHaveLength(1);
    expect(lastDelivery()).toMatchObject({
      kind: 'stage-entered',
      event: { atsApplicationId: application.id, atsJobId: application.jobId, stage: { name: 'AI Interview' } },
    });
    expect(await adapter.readStanding(target)).toEqual({
      active: true,
      stageId: 'ai-interview',
      stageName: 'AI Interview',
    });
    expect(await adapter.moveToStage(target, { name: 'Hiring Manager Review' })).toEqual({
      moved: true,
      stageId: 'hiring-manager-review',
    });
    expect(sandbox.movesOf(application.id).at(-1)).toBe('Hiring Manager Review');
  });

  it('serves the exit as Workable shows it: details with disqualified_at, the list without; hired', async () => {
    const { application: rejected } = await invited('cy');
    const { application: hired } = await invited('di');
    await sandbox.changeLifecycle({ applicationId: rejected.id, action: 'reject', reason: 'Too junior' });
    await sandbox.changeLifecycle({ applicationId: hired.id, action: 'hire' });
    const api = async (path: string) =>
      (await fetch(`${sandbox.url}/spi/v3${path}`, {
        headers: { authorization: `Bearer ${WORKABLE_SANDBOX_DEFAULTS.token}` },
      }).then((r) => r.json())) as Record<string, unknown>;
    expect((await api(`/candidates/${rejected.id}`)).candidate).toMatchObject({
      stage: 'AI Interview',
      disqualified: true,
      disqualification_reason: 'Too junior',
      disqualified_at: expect.any(String),
      hired_at: null,
    });
    expect((await api(`/candidates/${hired.id}`)).candidate).toMatchObject({
      stage: 'Hired',
      disqualified: false,
      hired_at: expect.any(String),
    });
    const listed = (await api('/candidates?shortcode=GROOV005&stage=hired&limit=100')).candidates as Record<
      string,
      unknown
    >[];
    expect(listed.map((c) => c.id)).toContain(hired.id);
    expect(listed.map((c) => c.id)).not.toContain(rejected.id);
    const shown = listed.find((c) => c.id === hired.id);
    expect(shown).toMatchObject({ stage: 'hired', hired_at: expect.any(String), disqualified: false });
    expect(shown).not.toHaveProperty('disqualified_at');
    const stages = (await api('/jobs/GROOV005/stages')).stages as { slug: string; kind: string }[];
    expect(stages.map((s) => s.slug)).toEqual(['applied', 'ai-interview', 'hiring-manager-review', 'offer', 'hired']);
    expect(stages.at(-1)?.kind).toBe('hired');
  });
});
