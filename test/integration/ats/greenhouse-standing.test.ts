import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGreenhouseSandbox, type GreenhouseSandbox } from '../../../infra/local/sandbox/ats/greenhouse/server';
import type { LifecycleAction } from '../../../infra/local/sandbox/ats/ats-sandbox-kit';
import { GreenhouseAdapter } from '../../../shared/ats/greenhouse/greenhouse.adapter';
import type { ApplicationRef } from '../../../shared/ats/port';
import { greenhouseSandboxConnection } from '../../helpers/connections';
import { startRecordingServer, type RecordedRequest } from '../../helpers/local-http';

const SECRET = 'whsec_greenhouse_standing';
/** The job's stages in the sandbox: 9001 AI Interview, 9002 Hiring Manager Review. */
const AI_INTERVIEW = 9001;
const NEXT_STAGE = { id: '9002' };

describe('Greenhouse sandbox: an application leaving the process and coming back, as the adapter sees it', () => {
  let sandbox: GreenhouseSandbox;
  let receiver: Awaited<ReturnType<typeof startRecordingServer>>;
  let adapter: GreenhouseAdapter;

  beforeAll(async () => {
    sandbox = await startGreenhouseSandbox({ port: 0, rateLimit: 10_000 });
    receiver = await startRecordingServer();
    await sandbox.registerWebhook({ url: `${receiver.url}/hooks/greenhouse`, secret: SECRET });
    adapter = new GreenhouseAdapter({
      ...greenhouseSandboxConnection(sandbox, { atsWebhookSecret: SECRET }),
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      sleep: async () => undefined,
    });
  });
  afterAll(async () => {
    await Promise.all([sandbox.close(), receiver.close()]);
  });

  /** A candidate who applied and is in the AI interview stage now. */
  const invited = async (): Promise<ApplicationRef> => {
    const application = sandbox.addCandidate({ firstName: 'Ana', lastName: 'Ruiz', email: 'a@example.com' });
    await sandbox.moveCandidate({ applicationId: application.id, stageId: String(AI_INTERVIEW) });
    return {
      atsApplicationId: application.id,
      atsCandidateId: application.candidateId,
      atsJobId: '3301',
      fromStageId: String(AI_INTERVIEW),
    };
  };
  /** The recruiter's action, and the webhook it delivered (the only delivery of that action to this application). */
  const act = async (target: ApplicationRef, action: LifecycleAction, event: string) => {
    const before = receiver.received.length;
    const deliveries = await sandbox.changeLifecycle({ applicationId: target.atsApplicationId, action });
    expect(deliveries.map((d) => [d.action, d.status])).toEqual([[action, 200]]);
    // A stage change the API's move fired earlier may still arrive: only this action's deliveries are counted.
    const sent = receiver.received.slice(before).filter((r) => actionOf(r) === event);
    expect(sent).toHaveLength(1);
    return { request: sent[0] as RecordedRequest, eventId: deliveries[0]?.eventId };
  };
  const actionOf = (request: RecordedRequest) => (JSON.parse(request.body) as { action?: string }).action;
  const inbound = (request: RecordedRequest) => ({
    headers: request.headers as Record<string, string | undefined>,
    rawBody: Buffer.from(request.body, 'utf8'),
  });
  const movesOf = (target: ApplicationRef) =>
    sandbox.state.moves.filter((m) => m.applicationId === target.atsApplicationId).length;

  /** The delivery verifies and parses to the change; the read and the move answer as the application stands. */
  const expectLeft = async (target: ApplicationRef, delivery: Awaited<ReturnType<typeof act>>, exit: string) => {
    expect(adapter.verifyWebhook(inbound(delivery.request), Date.now())).toEqual({ valid: true });
    expect(adapter.parseWebhook(inbound(delivery.request))).toEqual({
      kind: 'application-changed',
      event: { deliveryId: delivery.eventId, atsApplicationId: target.atsApplicationId, change: 'left' },
    });
    expect(await adapter.readStanding(target)).toEqual({ active: false, exit });
    const moves = movesOf(target);
    const moveCalls = sandbox.state.requests['POST /v3/applications/:id/move'] ?? 0;
    expect(await adapter.moveToStage(target, NEXT_STAGE)).toEqual({
      moved: false,
      stageId: String(AI_INTERVIEW),
      exit,
    });
    expect(movesOf(target)).toBe(moves);
    expect(sandbox.state.requests['POST /v3/applications/:id/move'] ?? 0).toBe(moveCalls);
  };

  it('reject: reject_candidate with the rejection reason; read as rejected; never moved', async () => {
    const target = await invited();
    const delivery = await act(target, 'reject', 'reject_candidate');
    const body = JSON.parse(delivery.request.body) as { payload: { application: Record<string, unknown> } };
    expect(body.payload.application).toMatchObject({
      status: 'rejected',
      // No reason given: the organisation's first reason of its type.
      rejection_reason: { id: 14, name: 'Lacking skill(s)/qualification(s)', type: { name: 'We rejected them' } },
      current_stage: { id: AI_INTERVIEW },
    });
    expect(body.payload.application.rejected_at).toEqual(expect.any(String));
    await expectLeft(target, delivery, 'rejected');
  });

  it('withdraw: reject_candidate, "They rejected us"; the v3 read, without the type, says rejected', async () => {
    const target = await invited();
    const delivery = await act(target, 'withdraw', 'reject_candidate');
    expect(delivery.request.body).toContain('"name":"They rejected us"');
    await expectLeft(target, delivery, 'rejected');
  });

  it('hire: hire_candidate with the accepted offer and no status; read as hired; never moved', async () => {
    const target = await invited();
    const delivery = await act(target, 'hire', 'hire_candidate');
    const application = (JSON.parse(delivery.request.body) as { payload: { application: Record<string, unknown> } })
      .payload.application;
    expect(application.offer).toMatchObject({ resolved_at: expect.any(String) });
    expect(application).not.toHaveProperty('status');
    await expectLeft(target, delivery, 'hired');
  });

  it.each([
    ['reject', 'unreject_candidate'],
    ['hire', 'unhire_candidate'],
  ] as const)('unreject after %s: %s; read as active in its stage again, and moved again', async (first, event) => {
    const target = await invited();
    await act(target, first, first === 'reject' ? 'reject_candidate' : 'hire_candidate');
    const delivery = await act(target, 'unreject', event);
    expect(adapter.verifyWebhook(inbound(delivery.request), Date.now())).toEqual({ valid: true });
    expect(adapter.parseWebhook(inbound(delivery.request))).toEqual({
      kind: 'application-changed',
      event: { deliveryId: delivery.eventId, atsApplicationId: target.atsApplicationId, change: 'returned' },
    });
    expect(JSON.parse(delivery.request.body)).toMatchObject({
      payload: { application: { status: 'active', rejection_reason: null, rejected_at: null } },
    });
    expect(await adapter.readStanding(target)).toEqual({
      active: true,
      stageId: String(AI_INTERVIEW),
      stageName: 'AI Interview',
    });
    const moves = movesOf(target);
    expect(await adapter.moveToStage(target, NEXT_STAGE)).toEqual({ moved: true, stageId: NEXT_STAGE.id });
    expect(movesOf(target)).toBe(moves + 1);
  });

  it('the control route: a lost webhook changes the standing; a resent one keeps its delivery id', async () => {
    const target = await invited();
    const before = receiver.received.length;
    const lost = await fetch(`${sandbox.url}/_sandbox/lifecycle`, {
      method: 'POST',
      body: JSON.stringify({ applicationId: target.atsApplicationId, action: 'hire', deliver: false }),
    });
    expect(await lost.json()).toEqual({ deliveries: [] });
    expect(receiver.received.slice(before).filter((r) => actionOf(r) === 'hire_candidate')).toEqual([]);
    expect(await adapter.readStanding(target)).toEqual({ active: false, exit: 'hired' });

    const twice = await sandbox.changeLifecycle({
      applicationId: target.atsApplicationId,
      action: 'unreject',
      repeat: 2,
    });
    const resent = receiver.received.slice(before).filter((r) => actionOf(r) === 'unhire_candidate');
    const ids = resent.map((r) => {
      const parsed = adapter.parseWebhook(inbound(r));
      return parsed.kind === 'application-changed' ? parsed.event.deliveryId : parsed.kind;
    });
    expect(ids).toEqual([twice[0]?.eventId, twice[0]?.eventId]);
    const refused = await fetch(`${sandbox.url}/_sandbox/lifecycle`, {
      method: 'POST',
      body: JSON.stringify({ application_id: target.atsApplicationId, action: 'unreject' }),
    });
    expect(refused.status).toBe(404);
  });
});
