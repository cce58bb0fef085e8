import { createHmac, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSecretOf } from '../../helpers/connections';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { emailsTo, invitedInterviewId, startTestStack, scanTable } from '../../helpers/local-stack';

const WORK_DIR = `.local/test-front-door-${process.pid}`;

/**
 * The front door's findings that cross the pipeline, on the real local services: the gateway, the queues, the
 * workers and the tables. Each ends with the pipeline idle and both DLQs empty.
 */
describe('Front door on the local stack: replays, over-long ids, deletions', () => {
  let stack: LocalStack;
  const connectionOf = (ats: string) => stack.connections.find((c) => c.ats === ats)!;
  const secretOf = (ats: string, event?: string) => webhookSecretOf(stack.secrets[connectionOf(ats).secretRef]!, event);
  const hmacHex = (secret: string, data: string) => createHmac('sha256', secret).update(data).digest('hex');
  const post = (ats: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${stack.gatewayUrl}/webhooks/ats/${connectionOf(ats).id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  const recordsOf = async (atsApplicationId: string) =>
    (await scanTable(stack, stack.tables.applications)).filter((r) => r.atsApplicationId === atsApplicationId);
  const idleWithEmptyDlqs = async () => {
    await stack.waitForQuiet(60_000);
    expect(await stack.dlqDepths()).toEqual({ stage: 0, report: 0 });
  };
  /** A Lever webhook signed as Lever signs: over token + triggeredAt only. */
  const leverBody = (event: string, data: Record<string, unknown>, token = randomUUID()) => {
    const triggeredAt = Date.now();
    return JSON.stringify({
      triggeredAt,
      token,
      signature: hmacHex(secretOf('lever', event), `${token}${triggeredAt}`),
      event,
      data,
    });
  };
  /** A Greenhouse `candidate_stage_change` for a sandbox application, as webhooks/_candidate_events.md shows. */
  const greenhouseStageChange = (application: { id: string; candidateId: string }, email: string) =>
    JSON.stringify({
      action: 'candidate_stage_change',
      payload: {
        application: {
          id: Number(application.id),
          status: 'active',
          prospect: false,
          current_stage: { id: 9001, name: 'AI Interview' },
          candidate: {
            id: Number(application.candidateId),
            first_name: 'Gia',
            last_name: 'Long',
            email_addresses: [{ value: email, type: 'personal' }],
          },
          jobs: [{ id: 3301, name: 'Backend Engineer' }],
        },
      },
    });
  const greenhouseSignature = (body: string) => `sha256 ${hmacHex(secretOf('greenhouse'), body)}`;

  beforeAll(async () => {
    stack = await startTestStack(WORK_DIR);
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(WORK_DIR, { recursive: true, force: true });
  });

  it('1. Lever: a signature is used once, whatever event the body names; a deletion is confirmed first', async () => {
    const email = `lever-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = stack.ats.lever.addCandidate({ firstName: 'Lea', lastName: 'Replay', email });
    await stack.ats.lever.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    await invitedInterviewId(stack, email);
    await stack.waitForQuiet(60_000);
    const data = { contactId: application.candidateId, opportunityId: application.id };

    // A deletion of a candidate Lever still has: accepted (it is signed), confirmed with Lever's API, refused.
    const token = randomUUID();
    const deletion = leverBody('candidateDeleted', data, token);
    expect((await post('lever', deletion)).status).toBe(200);
    await idleWithEmptyDlqs();
    expect(await recordsOf(application.id)).toHaveLength(1);

    // The same signed fields again, with the event swapped: the same replay key, refused.
    const swapped = JSON.stringify({ ...JSON.parse(deletion), event: 'candidateStageChange' });
    expect((await post('lever', swapped)).status).toBe(401);
    // "0" + triggeredAt re-signs the same string under another split: not a JSON integer, refused.
    const { triggeredAt, signature } = JSON.parse(deletion);
    const shifted = JSON.stringify({ triggeredAt: `0${triggeredAt}`, token, signature, event: 'x', data });
    expect((await post('lever', shifted)).status).toBe(401);

    // Once Lever has deleted the candidate, a new deletion webhook purges them.
    await stack.ats.lever.deleteCandidate(application.id);
    expect((await post('lever', leverBody('candidateDeleted', data))).status).toBe(200);
    await waitFor(async () => (await recordsOf(application.id)).length === 0, 20_000, 'the confirmed purge');
    await idleWithEmptyDlqs();
  });

  it('3. over-long ids: refused where they are ids, hashed where unsigned; nothing reaches a DLQ', async () => {
    const connection = connectionOf('greenhouse');
    const token = stack.secrets[connection.secretRef]!.interviewWebhookToken;
    const report = await fetch(`${stack.gatewayUrl}/webhooks/interview/${connection.id}/${token}`, {
      method: 'POST',
      body: JSON.stringify({
        event: 'interview_report.created',
        data: { report_id: 'r'.repeat(2_100), interview_id: 'i', candidate_id: 'c' },
      }),
    });
    expect(report.status).toBe(400);
    expect(await report.text()).toContain('data.report_id');

    // Greenhouse-Event-ID is an unsigned header: a 3,000-character one is hashed, and the candidate is invited.
    const email = `long-id-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = stack.ats.greenhouse.addCandidate({ firstName: 'Gia', lastName: 'Long', email });
    const body = greenhouseStageChange(application, email);
    const answer = await post('greenhouse', body, {
      signature: greenhouseSignature(body),
      'greenhouse-event-id': 'e'.repeat(3_000),
    });
    expect(answer.status).toBe(200);
    await invitedInterviewId(stack, email);
    await idleWithEmptyDlqs();
    const events = await scanTable(stack, stack.tables.events);
    expect(events.every((e) => String(e.pk).length < 300)).toBe(true);

    // Ashby's webhookActionId is signed but may be anything: a 2,100-character one is hashed too.
    const ashby = stack.ats.ashby.addCandidate({ firstName: 'Ash', lastName: 'Long', email: `a-${email}` });
    const ashbyState = (await (await fetch(`${stack.ats.ashby.url}/_sandbox/state`)).json()) as {
      jobs: { id: string; name: string; stages: { id: string; name: string }[] }[];
    };
    const job = ashbyState.jobs.find((j) => j.id === ashby.jobId)!;
    const stage = job.stages.find((s) => s.name === 'AI Interview')!;
    const ashbyBody = JSON.stringify({
      action: 'candidateStageChange',
      webhookActionId: 'w'.repeat(2_100),
      data: {
        application: {
          id: ashby.id,
          status: 'Active',
          updatedAt: new Date().toISOString(),
          candidate: {
            id: ashby.candidateId,
            name: 'Ash Long',
            primaryEmailAddress: { value: `a-${email}`, type: 'Personal', isPrimary: true },
          },
          currentInterviewStage: { id: stage.id, title: stage.name },
          job: { id: job.id, title: job.name },
        },
      },
    });
    const ashbyAnswer = await post('ashby', ashbyBody, {
      'ashby-signature': `sha256=${hmacHex(secretOf('ashby'), ashbyBody)}`,
    });
    expect(ashbyAnswer.status).toBe(200);
    await invitedInterviewId(stack, `a-${email}`);
    await idleWithEmptyDlqs();
  });

  it('4. Greenhouse: after delete_candidate, a replayed or late stage change never brings them back', async () => {
    const email = `deleted-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = stack.ats.greenhouse.addCandidate({ firstName: 'Gia', lastName: 'Gone', email });
    const body = greenhouseStageChange(application, email);
    const headers = { signature: greenhouseSignature(body) };
    expect((await post('greenhouse', body, { ...headers, 'greenhouse-event-id': randomUUID() })).status).toBe(200);
    await invitedInterviewId(stack, email);
    await stack.waitForQuiet(60_000);
    expect(await recordsOf(application.id)).toHaveLength(1);

    // Greenhouse deletes the candidate and sends its signed delete_candidate.
    await stack.ats.greenhouse.deleteCandidate(application.id);
    await waitFor(async () => (await recordsOf(application.id)).length === 0, 20_000, 'the purge');

    // The original signed bytes again, under a new event id (a replay, or Greenhouse's own late retry).
    for (let i = 0; i < 2; i++)
      expect((await post('greenhouse', body, { ...headers, 'greenhouse-event-id': randomUUID() })).status).toBe(200);
    await idleWithEmptyDlqs();
    expect(await recordsOf(application.id)).toEqual([]);
    expect(await emailsTo(stack, email)).toHaveLength(1);
    const held = (await scanTable(stack, stack.tables.events)).filter((e) => JSON.stringify(e).includes(email));
    expect(held).toEqual([]);
  });
});
