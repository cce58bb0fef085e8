import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { dynamoMappingStore } from '../../../shared/mapping';
import { emailsTo, invitedInterviewId, takeInterview, useTestStack } from '../../helpers/local-stack';
import { waitFor } from '../../helpers/local-http';
import { komboSignatureOf } from '../../../shared/orders/kombo-orders';

const signatureOf = (secret: string, body: string) => komboSignatureOf(secret, Buffer.from(body));

const ACME = { id: 'acme-personio', integration: 'personio:acme-unified' };
const GLOBEX = { id: 'globex-recruitee', integration: 'recruitee:globex-unified' };

/**
 * The stage-triggered flow through Kombo's unified ATS API, on the Kombo sandbox's two tools: Personio, which takes
 * every write, and Recruitee, which takes no notes. Kombo pushes no stage change: its signed data-changed webhooks are
 * hints to read what changed, duplicated and lost here, and still one invitation per stage entry.
 */
describe('Kombo: stage entries from hints, writes by capability', () => {
  // ERROR lines written (the operator's, asserted below), as Lambda ships them; nothing below that.
  const held = useTestStack('kombo-unified', { configPath: 'config/connections.kombo.json', logLevel: 'ERROR' });
  let stack: LocalStack;
  const store = () => dynamoMappingStore({ tables: stack.tables, client: stack.dynamo });
  const unified = () => stack.kombo.unified;
  const records = (connectionId: string, applicationId: string) =>
    store().findApplicationsByAtsId(connectionId, applicationId);

  beforeAll(() => {
    stack = held.stack;
    unified().setSyncLag(300);
  });

  const candidate = (integrationId: string, name: string) => {
    const email = `${name}.${randomUUID().slice(0, 6)}@candidates.example.com`.toLowerCase();
    return { email, ...unified().addCandidate({ integrationId, firstName: name, lastName: 'Kombo', email }) };
  };

  it('invites once per stage entry though its hint comes twice, and once more after a lost hint', async () => {
    unified().setFaults({ duplicateHintRate: 1 });
    const ada = candidate(ACME.integration, 'Ada');
    unified().moveCandidate({
      integrationId: ACME.integration,
      applicationId: ada.applicationId,
      stageName: 'AI Interview',
    });
    await invitedInterviewId(stack, ada.email, 30_000);
    await stack.waitForQuiet();
    await unified().idle();
    expect(await emailsTo(stack, ada.email)).toHaveLength(1);
    expect(
      unified()
        .hints()
        .filter((h) => h.duplicate).length,
    ).toBeGreaterThan(0);

    // The hint lost: the sweep's read (the reconciler) finds the entry.
    unified().setFaults({ duplicateHintRate: 0, dropHintRate: 1 });
    const bo = candidate(ACME.integration, 'Bo');
    unified().moveCandidate({
      integrationId: ACME.integration,
      applicationId: bo.applicationId,
      stageName: 'AI Interview',
    });
    await unified().idle();
    expect(
      unified()
        .hints()
        .some((h) => h.dropped),
    ).toBe(true);
    unified().setFaults({ dropHintRate: 0 });
    await stack.reconcileNow();
    await invitedInterviewId(stack, bo.email, 30_000);
    await stack.waitForQuiet();
    expect(await emailsTo(stack, bo.email)).toHaveLength(1);
    expect(await emailsTo(stack, ada.email)).toHaveLength(1);
    const [record] = await records(ACME.id, bo.applicationId);
    expect(record?.state).toBe('invited');
  }, 90_000);

  it('writes the result as a note where the tool takes notes, else skips the note with its reason', async () => {
    const cy = candidate(ACME.integration, 'Cy');
    const di = candidate(GLOBEX.integration, 'Di');
    unified().moveCandidate({
      integrationId: ACME.integration,
      applicationId: cy.applicationId,
      stageName: 'AI Interview',
    });
    unified().moveCandidate({
      integrationId: GLOBEX.integration,
      applicationId: di.applicationId,
      stageName: 'AI Interview',
    });
    for (const [who, c] of [
      ['Cy', cy],
      ['Di', di],
    ] as const)
      takeInterview(stack, await invitedInterviewId(stack, c.email, 30_000), { name: who, email: c.email });
    await waitFor(
      async () =>
        (await records(ACME.id, cy.applicationId))[0]?.state === 'written_back' &&
        (await records(GLOBEX.id, di.applicationId))[0]?.state === 'written_back',
      40_000,
      'both written back',
    );
    const acmeNotes = unified()
      .integration(ACME.integration)
      .notes.filter((n) => n.applicationId === cy.applicationId);
    expect(acmeNotes.some((n) => n.content.includes('ai-interview-report:'))).toBe(true);
    expect(unified().integration(GLOBEX.integration).notes).toHaveLength(0);
    const [globex] = await records(GLOBEX.id, di.applicationId);
    expect(globex?.steps.reportNote?.value).toMatch(/^skipped: .*does not add notes/);
    // The result still reaches Recruitee: the report as an attachment, which it takes.
    expect(globex?.steps.reportFile?.doneAt).toBeDefined();
  }, 90_000);

  it('waits out a concurrency 429 as a deferral, then writes once', async () => {
    // Every write in flight past the limit is refused: here all of them, until the limit comes back.
    unified().setFaults({ concurrencyLimit: 0 });
    const ed = candidate(ACME.integration, 'Ed');
    unified().moveCandidate({
      integrationId: ACME.integration,
      applicationId: ed.applicationId,
      stageName: 'AI Interview',
    });
    const notesRoute = 'POST /v1/ats/applications/:applicationId/notes';
    const before = unified().requests()[notesRoute] ?? 0;
    await waitFor(() => (unified().requests()[notesRoute] ?? 0) > before, 30_000, 'the note refused 429');
    const [waiting] = await records(ACME.id, ed.applicationId);
    expect(waiting?.steps.inviteNote?.doneAt).toBeUndefined();
    unified().setFaults({ concurrencyLimit: 30 });
    await waitFor(
      async () => (await records(ACME.id, ed.applicationId))[0]?.steps.inviteNote?.doneAt !== undefined,
      30_000,
      'the note written after the wait',
    );
    const notes = unified()
      .integration(ACME.integration)
      .notes.filter((n) => n.applicationId === ed.applicationId);
    expect(notes).toHaveLength(1);
    expect(await emailsTo(stack, ed.email)).toHaveLength(1);
    // Refused, then sent again after the wait: one note.
    expect(unified().requests()[notesRoute] ?? 0).toBeGreaterThan(before + 1);
  }, 90_000);

  it("shows each connection's capabilities in the doctor: what is skipped, how results reach the ATS", async () => {
    const doctor = async (id: string) => {
      const answer = await fetch(`${stack.gatewayUrl}/console-api/connections/${id}/doctor`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.operatorKey}` },
      });
      return ((await answer.json()) as { lines: { status: string; what: string }[] }).lines;
    };
    const [acme, globex] = [await doctor(ACME.id), await doctor(GLOBEX.id)];
    expect(acme.filter((l) => l.status === 'fail')).toEqual([]);
    expect(acme.some((l) => /^personio through Kombo can add notes$/i.test(l.what))).toBe(true);
    expect(acme.find((l) => l.what.startsWith('results reach'))?.what).toContain('a note');
    const skipped = globex.find((l) => l.what.includes('cannot add notes'));
    expect(skipped?.status).toBe('info');
    const reach = globex.find((l) => l.what.startsWith('results reach'));
    expect(reach?.status).toBe('pass');
    expect(reach?.what).not.toContain('a note');
    expect(reach?.what).toContain('attachment');
  });

  it('refuses a forged hint with 401 and reads nothing', async () => {
    const before = unified().requests()['GET /v1/ats/applications'] ?? 0;
    const body = JSON.stringify({
      id: randomUUID(),
      type: 'data-changed',
      data: {
        integration_id: ACME.integration,
        integration_tool: 'personio',
        changed_models: [{ name: 'ats_applications' }],
      },
    });
    const forged = await fetch(`${stack.gatewayUrl}/webhooks/ats/${ACME.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-kombo-signature': signatureOf('not-the-secret', body) },
      body,
    });
    expect(forged.status).toBe(401);
    await stack.waitForQuiet();
    expect(unified().requests()['GET /v1/ats/applications'] ?? 0).toBe(before);
    const signed = await fetch(`${stack.gatewayUrl}/webhooks/ats/${ACME.id}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-kombo-signature': signatureOf(stack.kombo.webhookSecret, body),
      },
      body,
    });
    expect(signed.status).toBe(200);
  });

  it("says for the operator when the connection's integration stops working, or is deleted", async () => {
    const deliver = async (body: string) => {
      const answer = await fetch(`${stack.gatewayUrl}/webhooks/ats/${ACME.id}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-kombo-signature': signatureOf(stack.kombo.webhookSecret, body),
        },
        body,
      });
      return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
    };
    const stateChanged = (integration: string, state: string) =>
      JSON.stringify({
        id: randomUUID(),
        type: 'integration-state-changed',
        data: { integration_id: integration, integration_tool: 'personio', state, setup_status: 'COMPLETED' },
      });
    const errors: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      errors.push(String(chunk));
      return true;
    });
    try {
      expect(await deliver(stateChanged(ACME.integration, 'INVALID'))).toEqual({
        status: 200,
        body: { status: 'noted', state: 'INVALID' },
      });
      const deleted = JSON.stringify({
        id: randomUUID(),
        type: 'integration-deleted',
        data: { id: ACME.integration, tool: 'personio', deleted_at: new Date().toISOString() },
      });
      expect(await deliver(deleted)).toEqual({ status: 200, body: { status: 'noted', state: 'DELETED' } });
      expect((await deliver(stateChanged(GLOBEX.integration, 'INVALID'))).body).toMatchObject({ status: 'ignored' });
      expect((await deliver(JSON.stringify({ id: 'x', type: 'integration-state-changed' }))).status).toBe(400);
      const said = (text: string) => errors.some((line) => line.includes('"level":"ERROR"') && line.includes(text));
      await waitFor(() => said('relink it in Kombo') && said('the integration was deleted'), 5_000, 'the ERROR lines');
    } finally {
      spy.mockRestore();
    }
  });
});
