import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LeverSandbox, startLeverSandbox } from '../../../infra/local/sandbox/ats/lever/server';
import type { LifecycleAction } from '../../../infra/local/sandbox/ats/ats-sandbox-kit';
import type { WebhookParseResult } from '../../../shared/ats';
import { LeverAdapter } from '../../../shared/ats/lever/lever.adapter';
import { parseConnections } from '../../../shared/config';
import { connectionDocument } from '../../helpers/connections';
import { startRecordingServer } from '../../helpers/local-http';

type Receiver = Awaited<ReturnType<typeof startRecordingServer>>;

describe('Class: LeverAdapter, an opportunity leaving and coming back (against the Lever sandbox over HTTP)', () => {
  let sandbox: LeverSandbox;
  let receiver: Receiver;
  let adapter: LeverAdapter;

  beforeAll(async () => {
    sandbox = await startLeverSandbox({ port: 0, rateLimit: 1_000 });
    receiver = await startRecordingServer();
    // Registered as an admin would in Lever's settings: every event, each with the token Lever issued for it.
    const { issued } = await sandbox.registerWebhook({ url: receiver.url, secret: 'ignored-by-lever' });
    adapter = new LeverAdapter({
      connection: parseConnections(
        connectionDocument({ id: 'acme-lever', ats: 'lever', atsBaseUrl: sandbox.url, atsUserId: 'lever-user-1' }),
      )[0]!,
      secrets: {
        interviewApiKey: 'k',
        interviewWebhookToken: 't'.repeat(32),
        atsApiKey: sandbox.credentials.atsApiKey,
        atsWebhookSecrets: issued,
      },
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      sleep: async () => undefined,
    });
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
  });

  /** An opportunity moved into the AI interview stage, as a recruiter would. */
  const invitedOpportunity = async () => {
    const application = sandbox.addCandidate({ firstName: 'Ana', lastName: 'Ruiz', email: 'ana@example.com' });
    await sandbox.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    return {
      application,
      target: {
        atsApplicationId: application.id,
        atsCandidateId: application.candidateId,
        atsJobId: application.jobId,
      },
    };
  };

  /** What the connector's front door would do with each delivery of `action`: verify, then parse. */
  const deliveriesOf = async (applicationId: string, action: LifecycleAction, repeat = 1) => {
    const before = receiver.received.length;
    const records = await sandbox.changeLifecycle({ applicationId, action, repeat });
    expect(records.every((r) => r.status === 200)).toBe(true);
    return receiver.received.slice(before).map((r) => {
      const request = { headers: {}, rawBody: Buffer.from(r.body) };
      const event = (JSON.parse(r.body) as { event: string }).event;
      return { event, verified: adapter.verifyWebhook(request, Date.now()), parsed: adapter.parseWebhook(request) };
    });
  };
  const changed = (atsApplicationId: string, change: 'left' | 'returned'): WebhookParseResult => ({
    kind: 'application-changed',
    event: { deliveryId: expect.any(String), atsApplicationId, change },
  });

  it.each([
    ['reject', 'reason-rejected'],
    ['withdraw', 'reason-withdrew'],
  ] as const)('%s: a signed candidateArchiveChange, read as archived, never moved', async (action, reason) => {
    const { application, target } = await invitedOpportunity();
    const deliveries = await deliveriesOf(application.id, action);
    expect(deliveries.map((d) => d.event)).toEqual(['candidateArchiveChange']);
    expect(deliveries[0]?.verified).toMatchObject({ valid: true });
    expect(deliveries[0]?.parsed).toEqual(changed(application.id, 'left'));

    expect(await adapter.readStanding(target)).toEqual({ active: false, exit: 'archived', reason });
    const moves = sandbox.state.moves.length;
    expect(await adapter.moveToStage(target, { name: 'Hiring Manager Review' })).toEqual({
      moved: false,
      stageId: 'c1b2-ai-interview',
      exit: 'archived',
    });
    expect(sandbox.state.moves.length).toBe(moves);
    expect(sandbox.movesOf(application.id)).toEqual(['AI Interview']);
  });

  it('hire: candidateHired and the archive change Lever also makes, both signed, read as archived', async () => {
    const { application, target } = await invitedOpportunity();
    const deliveries = await deliveriesOf(application.id, 'hire');
    expect(deliveries.map((d) => d.event)).toEqual(['candidateHired', 'candidateArchiveChange']);
    for (const delivery of deliveries) {
      expect(delivery.verified).toMatchObject({ valid: true });
      expect(delivery.parsed).toEqual(changed(application.id, 'left'));
    }
    expect(await adapter.readStanding(target)).toEqual({ active: false, exit: 'archived', reason: 'reason-hired' });
    const moves = sandbox.state.moves.length;
    expect(await adapter.moveToStage(target, { id: 'offer' })).toMatchObject({ moved: false, exit: 'archived' });
    expect(sandbox.state.moves.length).toBe(moves);
  });

  it('unreject: candidateArchiveChange with toArchived null, read as back in its stage, and moved again', async () => {
    const { application, target } = await invitedOpportunity();
    await deliveriesOf(application.id, 'reject');
    const deliveries = await deliveriesOf(application.id, 'unreject');
    expect(deliveries.map((d) => d.event)).toEqual(['candidateArchiveChange']);
    expect(deliveries[0]?.verified).toMatchObject({ valid: true });
    expect(deliveries[0]?.parsed).toEqual(changed(application.id, 'returned'));

    expect(await adapter.readStanding(target)).toMatchObject({ active: true, stageId: 'c1b2-ai-interview' });
    expect(await adapter.moveToStage(target, { name: 'Hiring Manager Review' })).toEqual({
      moved: true,
      stageId: 'd3e4-hm-review',
    });
    expect(sandbox.movesOf(application.id)).toEqual(['AI Interview', 'Hiring Manager Review']);
  });

  it('a repeated delivery carries the same token: one delivery id, verified once as a replay key', async () => {
    const { application } = await invitedOpportunity();
    const deliveries = await deliveriesOf(application.id, 'reject', 2);
    expect(deliveries).toHaveLength(2);
    const ids = deliveries.map((d) => (d.parsed.kind === 'application-changed' ? d.parsed.event.deliveryId : ''));
    expect(ids[0]).not.toBe('');
    expect(ids[1]).toBe(ids[0]);
    const keys = deliveries.map((d) => (d.verified.valid ? d.verified.replayKey : undefined));
    expect(keys[1]).toBe(keys[0]);
  });

  it('serves archived as {archivedAt, reason} on the opportunity and in the list, filtered by archived', async () => {
    const { application } = await invitedOpportunity();
    await sandbox.changeLifecycle({ applicationId: application.id, action: 'withdraw', deliver: false });
    const auth = { authorization: `Basic ${Buffer.from(`${sandbox.credentials.atsApiKey}:`).toString('base64')}` };
    const read = await fetch(`${sandbox.url}/v1/opportunities/${application.id}`, { headers: auth });
    const { data } = (await read.json()) as { data: { archived: { archivedAt: number; reason: string } } };
    expect(data.archived).toEqual({ archivedAt: expect.any(Number), reason: 'reason-withdrew' });
    const open = await fetch(`${sandbox.url}/v1/opportunities?archived=false&limit=100`, { headers: auth });
    const listed = ((await open.json()) as { data: { id: string }[] }).data.map((o) => o.id);
    expect(listed).not.toContain(application.id);
  });
});
