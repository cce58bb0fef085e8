import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { reportNotes, scanTable, takeInterview } from '../../helpers/local-stack';
import { CONNECTION, greenhouseSignature, stageChange, useGreenhouseStack } from '../../helpers/greenhouse-stack';

/** What the connector's webhooks take and refuse from Greenhouse and the interview service, on the local stack. */
describe('Pipeline: Greenhouse and interview-service webhooks at the front door', () => {
  const greenhouse = useGreenhouseStack('greenhouse-webhooks');
  const { postAts, postReport, stageRecords, invitedCandidate } = greenhouse;
  let stack: LocalStack;
  let secret: string;
  beforeAll(() => {
    ({ stack, secret } = greenhouse.held);
  });

  it('refuses a forged signature with 401 and enqueues nothing', async () => {
    await stack.waitForQuiet();
    const before = stageRecords();
    const body = stageChange(1, { id: 9001, name: 'AI Interview' });
    const forged = await postAts(body, {
      signature: greenhouseSignature('not-the-secret', body),
      'greenhouse-event-id': randomUUID(),
    });
    const missing = await postAts(body, {});
    const otherConnection = await postAts(body, { signature: greenhouseSignature(secret, body) }, 'no-such-connection');
    expect([forged.status, missing.status, otherConnection.status]).toEqual([401, 401, 404]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(stageRecords()).toBe(before);
    expect((await stack.queueDepths()).stage).toBe(0);
  });

  it.each([
    [200, 'a ping', JSON.stringify({ action: 'ping', payload: { web_hook_id: 1 } })],
    [200, 'an event it does not handle', JSON.stringify({ action: 'application_updated', payload: {} })],
    [400, 'a body that is not JSON', '{"action": '],
    [400, 'a stage change without an application', JSON.stringify({ action: 'candidate_stage_change', payload: {} })],
    [200, 'a stage no trigger names', stageChange(7, { id: 9000, name: 'Application Review' })],
  ])('answers %i to %s (correctly signed) and enqueues nothing', async (status, _name, body) => {
    await stack.waitForQuiet();
    const before = stageRecords();
    const answer = await postAts(body, { signature: greenhouseSignature(secret, body) });
    expect(answer.status).toBe(status);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stageRecords()).toBe(before);
  });

  it('answers 413 to a body over 1 MiB', async () => {
    const body = JSON.stringify({ action: 'ping', padding: 'x'.repeat(1024 * 1024) });
    expect((await postAts(body, { signature: greenhouseSignature(secret, body) })).status).toBe(413);
  });

  it('parks a report for an unknown candidate as unmatched, not in the DLQ', async () => {
    const { interviewId } = await invitedCandidate();
    const { report_id: reportId } = takeInterview(stack, interviewId, {
      name: 'Stranger',
      email: 'stranger@nowhere.example.com',
    });
    await waitFor(
      async () =>
        (await scanTable(stack, stack.tables.events)).some((e) => e.pk === `unmatched#${CONNECTION}#${reportId}`),
      20_000,
      'the parked report',
    );
    const parked = (await scanTable(stack, stack.tables.events)).find(
      (e) => e.pk === `unmatched#${CONNECTION}#${reportId}`,
    );
    expect(parked).toMatchObject({ kind: 'unmatched-report', reason: expect.stringContaining('no application') });
    await stack.waitForQuiet();
    expect(await stack.dlqDepths()).toEqual({ stage: 0, report: 0 });
    expect(reportNotes(stack, reportId)).toHaveLength(0);
  });

  it('refuses a report webhook with a wrong token, and answers 400 naming the field of a bad body', async () => {
    const wrong = await fetch(`${stack.gatewayUrl}/webhooks/interview/${CONNECTION}/not-the-token`, {
      method: 'POST',
      body: JSON.stringify({ event: 'interview_report.created', data: {} }),
    });
    expect(wrong.status).toBe(401);
    const bad = await postReport({ report_id: 'r1' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^data\.interview_id/);
    const other = await fetch(
      `${stack.gatewayUrl}/webhooks/interview/${CONNECTION}/${greenhouse.held.interviewToken}`,
      {
        method: 'POST',
        body: JSON.stringify({ event: 'interview.started', data: {} }),
      },
    );
    expect(other.status).toBe(200);
  });
});
