import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AshbySandbox, startAshbySandbox } from '../../../infra/local/sandbox/ats/ashby/server';
import type { LifecycleAction } from '../../../infra/local/sandbox/ats/ats-sandbox-kit';
import { AshbySetupAdapter } from '../../../shared/ats/ashby/ashby.setup';
import type { WebhookParseResult } from '../../../shared/ats/port';
import { parseConnections } from '../../../shared/config';
import { connectionDocument } from '../../helpers/connections';
import { startRecordingServer } from '../../helpers/local-http';

// Ashby's lifecycle end to end over HTTP: the sandbox archives, hires or unarchives an application and sends what
// Ashby documents, signed; the adapter verifies and reads it, reads the standing, and never moves a left application.
const SECRET = 'whsec_ashby_standing_0123456789';

describe('Class: AshbyAdapter, lifecycle (against the Ashby sandbox over HTTP)', () => {
  let sandbox: AshbySandbox;
  let receiver: Awaited<ReturnType<typeof startRecordingServer>>;
  let adapter: AshbySetupAdapter;

  beforeAll(async () => {
    sandbox = await startAshbySandbox({ port: 0, rateLimit: 10_000 });
    receiver = await startRecordingServer();
    adapter = new AshbySetupAdapter({
      connection: parseConnections(connectionDocument({ id: 'acme-ashby', ats: 'ashby', atsBaseUrl: sandbox.url }))[0]!,
      secrets: {
        interviewApiKey: 'k',
        interviewWebhookToken: 't'.repeat(32),
        atsApiKey: sandbox.credentials.atsApiKey,
        atsWebhookSecret: SECRET,
      },
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    // One webhook per type, as `--register-webhooks` makes them (webhook.create takes one webhookType).
    for (const event of adapter.webhookEvents)
      await adapter.setup.createWebhook({ event, url: receiver.url, secret: SECRET });
  });
  afterAll(async () => {
    await sandbox?.close();
    await receiver?.close();
  });

  /** An application in the AI Interview stage, and what the receiver got from `action` on it (each verified). */
  async function afterLifecycle(actions: LifecycleAction[]) {
    const application = sandbox.addCandidate({ firstName: 'Ana', lastName: 'Ruiz', email: 'ana@example.com' });
    await sandbox.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    for (const action of actions.slice(0, -1)) await sandbox.changeLifecycle({ applicationId: application.id, action });
    const before = receiver.received.length;
    await sandbox.changeLifecycle({ applicationId: application.id, action: actions.at(-1)!, repeat: 2 });
    const parsed: { action: string; result: WebhookParseResult }[] = [];
    for (const delivery of receiver.received.slice(before)) {
      const request = {
        headers: { 'ashby-signature': String(delivery.headers['ashby-signature']) },
        rawBody: Buffer.from(delivery.body),
      };
      expect(adapter.verifyWebhook(request, Date.now())).toEqual({ valid: true });
      parsed.push({
        action: (JSON.parse(delivery.body) as { action: string }).action,
        result: adapter.parseWebhook(request),
      });
    }
    const target = {
      atsApplicationId: application.id,
      atsCandidateId: application.candidateId,
      atsJobId: application.jobId,
    };
    return { application, parsed, target };
  }

  const changes = (parsed: { result: WebhookParseResult }[]) =>
    parsed.flatMap(({ result }) => (result.kind === 'application-changed' ? [result.event] : []));

  it.each([
    { action: 'reject', exit: 'rejected', reason: 'Not a fit', actions: ['candidateStageChange', 'applicationUpdate'] },
    {
      action: 'withdraw',
      exit: 'withdrawn',
      reason: 'Withdrew',
      actions: ['candidateStageChange', 'applicationUpdate'],
    },
    {
      action: 'hire',
      exit: 'hired',
      reason: undefined,
      actions: ['candidateHire', 'applicationUpdate', 'candidateStageChange'],
    },
  ] as const)('$action: every delivery reads as the application leaving; standing $exit; never moved', async (c) => {
    const { application, parsed, target } = await afterLifecycle([c.action]);
    // Sent twice (a retry): the same deliveries, each parsed the same, and one delivery id for the whole action.
    expect(parsed.map((p) => p.action).sort()).toEqual([...c.actions, ...c.actions].sort());
    expect(parsed.map((p) => p.result.kind)).toEqual(parsed.map(() => 'application-changed'));
    const events = changes(parsed);
    expect(new Set(events.map((e) => e.deliveryId)).size).toBe(1);
    expect(events[0]).toMatchObject({ atsApplicationId: application.id, change: 'left' });

    expect(await adapter.readStanding(target)).toEqual({ active: false, exit: c.exit, reason: c.reason });
    const moves = sandbox.state.moves.length;
    const answer = await adapter.moveToStage(target, { name: 'Hiring Manager Review' });
    expect(answer).toMatchObject({ moved: false, exit: c.exit });
    expect(answer.stageId).not.toBe('');
    expect(sandbox.state.moves.length).toBe(moves);
    expect(sandbox.requests()['POST /application.changeStage'] ?? 0).toBe(0);
  });

  it('unreject: the update a return, the move back a stage entry; standing active; moved again', async () => {
    const { application, parsed, target } = await afterLifecycle(['reject', 'unreject']);
    expect(parsed.map((p) => p.action)).toEqual([
      'candidateStageChange',
      'applicationUpdate',
      'candidateStageChange',
      'applicationUpdate',
    ]);
    const events = changes(parsed);
    expect(events).toHaveLength(2);
    expect(events[1]?.deliveryId).toBe(events[0]?.deliveryId);
    expect(events.every((e) => e.change === 'returned' && e.atsApplicationId === application.id)).toBe(true);
    const entry = parsed.find((p) => p.result.kind === 'stage-entered')?.result;
    expect(entry).toMatchObject({ event: { stage: { id: '3ae2b801-ai', name: 'AI Interview' } } });
    expect(entry && 'event' in entry && entry.event.deliveryId).not.toBe(events[0]?.deliveryId);

    expect(await adapter.readStanding(target)).toEqual({
      active: true,
      stageId: '3ae2b801-ai',
      stageName: 'AI Interview',
    });
    expect(await adapter.moveToStage(target, { name: 'Hiring Manager Review' })).toEqual({
      moved: true,
      stageId: '3ae2b801-hm',
    });
    expect(sandbox.movesOf(application.id)).toEqual(['AI Interview', 'Hiring Manager Review']);
  });

  it('lists an application by the status Ashby shows it with', async () => {
    const { application } = await afterLifecycle(['withdraw']);
    const list = async (status: string) => {
      const answer = await fetch(`${sandbox.url}/application.list`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${sandbox.credentials.atsApiKey}:`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ status }),
      });
      const body = (await answer.json()) as { results: { id: string; archiveReason: unknown; archivedAt: unknown }[] };
      return body.results.find((a) => a.id === application.id);
    };
    expect(await list('Active')).toBeUndefined();
    expect(await list('Archived')).toMatchObject({
      archiveReason: { text: 'Withdrew', reasonType: 'RejectedByCandidate' },
      archivedAt: expect.any(String),
    });
  });
});
