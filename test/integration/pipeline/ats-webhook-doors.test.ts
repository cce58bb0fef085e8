import { createHash, createHmac, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atsWebhooks } from '../../helpers/connections';
import type { LocalStack } from '../../../infra/local/local-stack';
import type { AtsKind } from '../../../shared/config';
import { startTestStack, emailsTo, scanTable } from '../../helpers/local-stack';

const WORK_DIR = `.local/test-ats-doors-${process.pid}`;
const KINDS = ['ashby', 'lever', 'workable'] as const satisfies readonly AtsKind[];

/** Each ATS's own signature scheme, computed here, not with the adapters' code. */
const forgers: Record<(typeof KINDS)[number], (secret: string) => { body: string; headers: Record<string, string> }> = {
  ashby: (secret) => {
    const body = JSON.stringify({
      action: 'candidateStageChange',
      data: {
        application: {
          id: 'a',
          candidate: { id: 'c' },
          currentInterviewStage: { id: 's', title: 'AI Interview' },
          job: { id: 'j' },
        },
      },
    });
    return {
      body,
      headers: { 'ashby-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` },
    };
  },
  lever: (secret) => {
    const token = randomUUID();
    const triggeredAt = Date.now();
    const signature = createHmac('sha256', secret).update(`${token}${triggeredAt}`).digest('hex');
    return {
      body: JSON.stringify({
        triggeredAt,
        token,
        signature,
        event: 'candidateStageChange',
        data: { opportunityId: 'o', toStageId: 'c1b2-ai-interview' },
      }),
      headers: {},
    };
  },
  workable: (secret) => {
    const body = JSON.stringify({
      id: randomUUID(),
      event_type: 'candidate_moved',
      data: { id: 'c', job: { shortcode: 'GROOV005' }, stage: 'ai-interview' },
    });
    return { body, headers: { 'x-workable-signature': createHmac('sha256', secret).update(body).digest('hex') } };
  },
};

describe('Pipeline: Ashby, Lever and Workable webhooks refused at the door, and what they never enqueue', () => {
  let stack: LocalStack;
  const { connectionOf, secretOf, post } = atsWebhooks(() => stack);

  beforeAll(async () => {
    stack = await startTestStack(WORK_DIR, { reportDelayMs: 100, functionTimeoutMs: 20_000 });
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(WORK_DIR, { recursive: true, force: true });
  });

  it.each(KINDS)('%s: a forged signature → 401 and nothing enqueued', async (kind) => {
    await stack.waitForQuiet();
    const before = stack.sources.invite.stats.records;
    const forged = forgers[kind]('not-the-secret');
    expect((await post(kind, forged.body, forged.headers)).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(stack.sources.invite.stats.records).toBe(before);
  });

  it('lever: a stale delivery and a replayed token → 401 and nothing enqueued', async () => {
    await stack.waitForQuiet();
    const before = stack.sources.invite.stats.records;
    const secret = secretOf('lever');
    const token = randomUUID();
    const stale = Date.now() - 11 * 60_000;
    const staleBody = JSON.stringify({
      triggeredAt: stale,
      token,
      signature: createHmac('sha256', secret).update(`${token}${stale}`).digest('hex'),
      event: 'candidateStageChange',
      data: { opportunityId: 'o', toStageId: 'c1b2-ai-interview' },
    });
    const staleAnswer = await post('lever', staleBody, {});
    expect(staleAnswer.status).toBe(401);
    expect(((await staleAnswer.json()) as { error: string }).error).toContain('stale');
    const fresh = forgers.lever(secret);
    const first = await post('lever', fresh.body, {});
    const replay = await post('lever', fresh.body, {});
    expect(first.status).toBe(200);
    expect(replay.status).toBe(401);
    await stack.waitForQuiet();
    expect(stack.sources.invite.stats.records - before).toBe(1);
    // The accepted delivery's replay key was written before its message was sent; its queue ledger record (the
    // sweep waits for its message) once it was.
    const signedFields = JSON.parse(fresh.body) as { token: string; triggeredAt: number };
    const signed = createHash('sha256').update(`${signedFields.token}${signedFields.triggeredAt}`).digest('hex');
    const events = await scanTable(stack, stack.tables.events);
    const replayKey = events.find((r) => String(r.pk).endsWith(`#lever-signed:${signed}`));
    expect(replayKey?.seenAt).toEqual(expect.any(Number));
    const ledgerRecord = events.find((r) => String(r.pk).endsWith('#stage#o') && r.kind === 'enqueued');
    expect(ledgerRecord?.enqueuedAt).toBeGreaterThanOrEqual(replayKey?.seenAt as number);
  });

  it("lever: the 'Verify connection' test deliveries are answered 200 and enqueue nothing", async () => {
    await stack.waitForQuiet();
    const before = stack.sources.invite.stats.records;
    const answers = await stack.lever.verifyConnection();
    expect(answers.map((a) => a.event).sort()).toEqual([
      'candidateArchiveChange',
      'candidateDeleted',
      'candidateHired',
      'candidateStageChange',
    ]);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await stack.waitForQuiet();
    expect(stack.sources.invite.stats.records - before).toBe(0);
  });

  it('lever: a body claiming a stage the API does not confirm → no invite', async () => {
    const email = `claim-${randomUUID().slice(0, 8)}+lever@candidates.example.com`;
    const application = stack.ats.lever.addCandidate({ firstName: 'Eve', lastName: 'Claim', email });
    await stack.lever.claimStageChange(application.id, 'c1b2-ai-interview');
    await stack.waitForQuiet();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await stack.waitForQuiet();
    expect(await emailsTo(stack, email)).toHaveLength(0);
    expect(stack.ats.lever.notesOf(application.id)).toHaveLength(0);
    const records = await scanTable(stack, stack.tables.applications);
    expect(records.filter((r) => r.atsApplicationId === application.id)).toHaveLength(0);
  });

  it('ashby: a connection whose secret lacks the webhook secret is refused, naming the field', async () => {
    const { resetConnectionCaches } = await import('../../../functions/_runtime/connections');
    const { connectionContext } = await import('../../../functions/_runtime/work-context');
    const { writeFileSync, readFileSync } = await import('node:fs');
    const path = process.env.SECRETS_FILE as string;
    const original = readFileSync(path, 'utf8');
    try {
      const secrets = JSON.parse(original);
      delete secrets[connectionOf('ashby').secretRef].atsWebhookSecret;
      writeFileSync(path, JSON.stringify(secrets));
      resetConnectionCaches();
      await expect(connectionContext(connectionOf('ashby').id)).rejects.toThrow(
        'atsWebhookSecret is required for ashby connections',
      );
      // At the door: 503 (the ATS delivers again once the secret is fixed), not a bare 500.
      resetConnectionCaches();
      const answer = await fetch(`${stack.gatewayUrl}/webhooks/ats/${connectionOf('ashby').id}`, {
        method: 'POST',
        body: '{"action":"ping"}',
      });
      expect(answer.status).toBe(503);
    } finally {
      writeFileSync(path, original);
      resetConnectionCaches();
    }
  });
});
