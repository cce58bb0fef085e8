import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { KOMBO_WRITE_ACTIONS } from '../../../shared/ats/kombo/kombo.actions';
import {
  komboApplicationSchema,
  komboCandidateSchema,
  komboDataChangedSchema,
  komboIntegrationSchema,
  komboJobSchema,
  readKomboPage,
} from '../../../shared/ats/kombo/kombo.schemas';
import { undocumentedCalls } from '../../../infra/local/sandbox/documented-routes';
import { listen, readBody, type RunningServer, sendJson } from '../../../infra/local/sandbox/http-kit';
import { type KomboSandbox, startKomboSandbox } from '../../../infra/local/sandbox/kombo/server';
import * as v from 'valibot';

const PERSONIO = 'personio:acme-unified';
const RECRUITEE = 'recruitee:globex-unified';
const LAG_MS = 250;
const SECRET = 'whsec_kombo_unified_test';

type Answer = { status: number; body: { status: string; data?: unknown; error?: { code: string } } };
type Hint = { raw: string; signature: string; applicationsAtReceipt: unknown };

/** Kombo's unified ATS as the sandbox plays it: the connector's view through the API, the recruiter's by control. */
describe('Kombo unified ATS sandbox', () => {
  let kombo: KomboSandbox;
  let receiver: RunningServer;
  const hints: Hint[] = [];

  const call = async (
    method: string,
    path: string,
    options: { integration?: string; body?: unknown } = {},
  ): Promise<Answer> => {
    const response = await fetch(`${kombo.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${kombo.apiKey}`,
        ...(options.integration ? { 'x-integration-id': options.integration } : {}),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };
  const applications = async (integration: string, query: string) => {
    const answer = await call('GET', `/ats/applications?${query}`, { integration });
    expect(answer.status).toBe(200);
    const page = readKomboPage(answer.body, komboApplicationSchema);
    expect(page?.unreadable).toBe(0);
    return page?.items ?? [];
  };
  const jobOf = async (integration: string) => {
    const page = readKomboPage((await call('GET', '/ats/jobs', { integration })).body, komboJobSchema);
    const job = page?.items[0];
    if (!job) throw new Error('no job');
    const stage = (name: string) => job.stages.find((s) => s.name === name)?.id ?? '';
    return { job, stage };
  };
  const applied = async (integration = PERSONIO, email = 'ada@example.com') => {
    const made = kombo.unified.addCandidate({ integrationId: integration, firstName: 'Ada', lastName: 'L', email });
    await kombo.unified.idle();
    return made;
  };

  beforeAll(async () => {
    kombo = await startKomboSandbox(0, { syncLagMs: LAG_MS, seed: 5 });
    // The connector's webhook: on a hint it re-reads at once, as a sweep would.
    receiver = await listen(async (request, response) => {
      const raw = (await readBody(request)).toString('utf8');
      const query = `ids=${encodeURIComponent(String(watched))}`;
      const applicationsAtReceipt = watched ? await applications(PERSONIO, query) : undefined;
      hints.push({ raw, signature: String(request.headers['x-kombo-signature']), applicationsAtReceipt });
      sendJson(response, 200, {});
    }, 0);
    kombo.unified.registerWebhook(`${receiver.url}/webhooks/kombo`, SECRET);
  });
  afterAll(async () => {
    await kombo?.close();
    await receiver?.close();
  });
  let watched: string | undefined;
  afterEach(async () => {
    await kombo.unified.idle();
    kombo.unified.setFaults({ dropHintRate: 0, duplicateHintRate: 0, slowWriteMs: 0, loseAnswerRate: 0 });
    hints.length = 0;
    watched = undefined;
  });

  it("shows a recruiter's move only once Kombo synced it, then sends the signed data-changed hint", async () => {
    const { applicationId } = await applied();
    watched = applicationId;
    hints.length = 0;
    const { stage } = await jobOf(PERSONIO);
    const movedAt = Date.now();
    kombo.unified.moveCandidate({ integrationId: PERSONIO, applicationId, stageName: 'AI Interview' });

    const [before] = await applications(PERSONIO, `ids=${applicationId}`);
    expect(before?.current_stage_id).toBe(stage('Application Review'));
    expect(hints).toEqual([]);

    await kombo.unified.idle();
    expect(Date.now() - movedAt).toBeGreaterThanOrEqual(LAG_MS - 5);
    const [after] = await applications(PERSONIO, `ids=${applicationId}`);
    expect(after?.current_stage_id).toBe(stage('AI Interview'));
    expect(after?.current_stage?.name).toBe('AI Interview');
    expect(after?.candidate?.email_addresses).toEqual([{ email_address: 'ada@example.com', type: 'PERSONAL' }]);

    expect(hints).toHaveLength(1);
    const [hint] = hints as [Hint];
    expect(hint.signature).toBe(createHmac('sha256', SECRET).update(hint.raw).digest('base64url'));
    const payload = v.parse(komboDataChangedSchema, JSON.parse(hint.raw));
    expect(payload.data).toMatchObject({
      ...{ integration_id: PERSONIO, integration_tool: 'personio', integration_category: 'ATS' },
      changed_models: ['ats_applications'],
    });
    // By the time the hint arrives, the re-read already sees the move.
    expect(hint.applicationsAtReceipt).toMatchObject([{ id: applicationId, current_stage_id: stage('AI Interview') }]);
  });

  it('lists only what changed after updated_after, strictly after, within the stage filter', async () => {
    const first = await applied(PERSONIO, 'first@example.com');
    const second = await applied(PERSONIO, 'second@example.com');
    const watermark = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    kombo.unified.moveCandidate({ integrationId: PERSONIO, ...first, stageName: 'Hiring Manager Review' });
    kombo.unified.decline({ integrationId: PERSONIO, ...second, reason: 'Withdrew' });
    expect(await applications(PERSONIO, `updated_after=${watermark}`)).toEqual([]);
    await kombo.unified.idle();

    const changed = await applications(PERSONIO, `updated_after=${watermark}`);
    expect(changed.map((a) => a.id).sort()).toEqual([first.applicationId, second.applicationId].sort());
    expect(changed.find((a) => a.id === second.applicationId)).toMatchObject({
      ...{ outcome: 'DECLINED', rejection_reason_name: 'Withdrew' },
      rejected_at: expect.any(String),
    });
    const { stage } = await jobOf(PERSONIO);
    const inReview = await applications(
      PERSONIO,
      `updated_after=${watermark}&current_stage_ids=${stage('Hiring Manager Review')}&outcomes=PENDING`,
    );
    expect(inReview.map((a) => a.id)).toEqual([first.applicationId]);
    const latest =
      changed
        .map((a) => a.changed_at ?? '')
        .sort()
        .at(-1) ?? '';
    expect(await applications(PERSONIO, `updated_after=${new Date(Date.parse(latest) + 1).toISOString()}`)).toEqual([]);
  });

  it('refuses a query parameter Kombo does not document, and records it', async () => {
    const answer = await call('GET', '/ats/applications?status=active', { integration: PERSONIO });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ status: 'error', error: { code: 'PLATFORM.INPUT_INVALID' } });
    expect(kombo.undocumented).toContain('GET /v1/ats/applications?status');
    // Every call the sandbox served is one of Kombo's documented routes and parameters.
    expect(kombo.unified.calls().length).toBeGreaterThan(0);
    expect(undocumentedCalls('kombo', kombo.unified.calls())).toEqual([]);
  });

  it('answers the 31st action in flight 429 CONCURRENCY_LIMIT_EXCEEDED; synced reads stay exempt', async () => {
    const { applicationId } = await applied();
    const { stage } = await jobOf(PERSONIO);
    kombo.unified.setFaults({ slowWriteMs: 1500 });
    const move = () =>
      call('PUT', `/ats/applications/${applicationId}/stage`, {
        integration: PERSONIO,
        body: { stage_id: stage('AI Interview') },
      });
    const writes = Array.from({ length: 30 }, move);
    await vi.waitFor(() => expect(kombo.unified.integration(PERSONIO).inFlight).toBe(30), { timeout: 1200 });
    const [extra, listing, read] = await Promise.all([
      move(),
      call('GET', `/ats/applications/${applicationId}/attachments`, { integration: PERSONIO }),
      call('GET', `/ats/applications?ids=${applicationId}`, { integration: PERSONIO }),
    ]);
    const statuses = (await Promise.all(writes)).map((w) => w.status);
    expect(statuses).toEqual(Array(30).fill(200));
    expect(extra).toMatchObject({ status: 429, body: { error: { code: 'PLATFORM.CONCURRENCY_LIMIT_EXCEEDED' } } });
    expect(listing.status).toBe(429);
    expect(read.status).toBe(200);
    expect(kombo.unified.integration(PERSONIO).peakInFlight).toBe(30);
    // Kombo wrote through: the move is in its copy at once, though the hint waits for the lag.
    const [moved] = await applications(PERSONIO, `ids=${applicationId}`);
    expect(moved?.current_stage_id).toBe(stage('AI Interview'));
  });

  it('refuses a note where the tool does not support notes, as its write_actions say', async () => {
    const details = await call('GET', `/integrations/${RECRUITEE}`);
    const integration = v.parse(komboIntegrationSchema, details.body).data;
    expect(integration.tool.id).toBe('recruitee');
    const note = integration.write_actions.find((a) => a.id === KOMBO_WRITE_ACTIONS.addNote);
    expect(note).toMatchObject({ coverage_status: 'UNSUPPORTED', is_available: false });

    const refused = await applied(RECRUITEE, 'grace@example.com');
    const body = { content: 'AI interview: 81/100', content_type: 'PLAIN_TEXT' };
    const answer = await call('POST', `/ats/applications/${refused.applicationId}/notes`, {
      integration: RECRUITEE,
      body,
    });
    expect(answer).toMatchObject({ status: 400, body: { error: { code: 'INTEGRATION.ACTION_NOT_AVAILABLE' } } });
    expect(kombo.unified.integration(RECRUITEE).notes).toEqual([]);

    const taken = await applied(PERSONIO, 'linus@example.com');
    const ok = await call('POST', `/ats/applications/${taken.applicationId}/notes`, { integration: PERSONIO, body });
    expect(ok).toMatchObject({ status: 200, body: { status: 'success', data: {} } });
    expect(kombo.unified.integration(PERSONIO).notes).toMatchObject([{ applicationId: taken.applicationId }]);
  });

  it('sends a hint twice, or never, as the faults say; the synced data follows the lag either way', async () => {
    const { applicationId } = await applied();
    hints.length = 0;
    kombo.unified.setFaults({ duplicateHintRate: 1 });
    kombo.unified.moveCandidate({ integrationId: PERSONIO, applicationId, stageName: 'AI Interview' });
    await kombo.unified.idle();
    expect(hints).toHaveLength(2);
    expect(hints[0]?.raw).toBe(hints[1]?.raw);

    hints.length = 0;
    kombo.unified.setFaults({ duplicateHintRate: 0, dropHintRate: 1 });
    kombo.unified.moveCandidate({ integrationId: PERSONIO, applicationId, stageName: 'Offer' });
    await kombo.unified.idle();
    expect(hints).toEqual([]);
    expect(kombo.unified.hints().at(-1)).toMatchObject({ dropped: true, models: ['ats_applications'] });
    const [moved] = await applications(PERSONIO, `ids=${applicationId}`);
    expect(moved?.current_stage?.name).toBe('Offer');
  });

  it('writes tags and attachments through at once, and a lost answer still applies the write', async () => {
    const { applicationId, candidateId } = await applied(PERSONIO, 'tagged@example.com');
    const tag = { tag: { name: 'AI interview: invited' } };
    expect(
      (await call('POST', `/ats/candidates/${candidateId}/tags`, { integration: PERSONIO, body: tag })).status,
    ).toBe(200);
    const read = await call('GET', `/ats/candidates?ids=${candidateId}`, { integration: PERSONIO });
    const [candidate] = readKomboPage(read.body, komboCandidateSchema)?.items ?? [];
    expect(candidate?.tags.map((t) => t.name)).toEqual(['AI interview: invited']);
    const removed = await call('DELETE', `/ats/candidates/${candidateId}/tags`, { integration: PERSONIO, body: tag });
    expect(removed.status).toBe(200);
    expect(kombo.unified.integration(PERSONIO).tags[candidateId]).toEqual([]);

    const pdf = Buffer.from('%PDF-1.4 report').toString('base64');
    kombo.unified.setFaults({ loseAnswerRate: 1 });
    const attachment = { name: 'AI interview report.pdf', type: 'OTHER', data: pdf, content_type: 'application/pdf' };
    await expect(
      call('POST', `/ats/applications/${applicationId}/attachments`, { integration: PERSONIO, body: { attachment } }),
    ).rejects.toThrow();
    kombo.unified.setFaults({ loseAnswerRate: 0 });
    const listed = await call('GET', `/ats/applications/${applicationId}/attachments`, { integration: PERSONIO });
    expect(listed.body.data).toMatchObject({
      results: [{ file_name: 'AI interview report.pdf', type: 'OTHER', content_type: 'application/pdf' }],
    });
    expect(kombo.unified.integration(PERSONIO).attachments).toMatchObject([
      { name: 'AI interview report.pdf', size: 15 },
    ]);
  });
  it("takes the recruiter's actions over HTTP too (/_sandbox/unified/…), for the demo", async () => {
    const control = async (path: string, body?: unknown) => {
      const origin = kombo.url.replace(/\/v1$/, '');
      const response = await fetch(`${origin}/_sandbox/unified/${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const person = { integrationId: RECRUITEE, firstName: 'Grace', lastName: 'H', email: 'grace.h@example.com' };
    const created = await control('candidates', person);
    expect(created).toMatchObject({ status: 201, body: { applicationId: expect.any(String) } });
    const target = { integrationId: RECRUITEE, applicationId: created.body.applicationId };
    expect((await control('move', { ...target, stageName: 'AI Interview' })).status).toBe(200);
    expect((await control('hire', target)).status).toBe(200);
    expect((await control('move', { ...target, stageName: 'Nowhere' })).status).toBe(404);
    await kombo.unified.idle();
    const [hired] = await applications(RECRUITEE, `ids=${String(target.applicationId)}&outcomes=HIRED`);
    expect(hired).toMatchObject({ outcome: 'HIRED', current_stage: { name: 'AI Interview' } });
    const state = await control('state');
    expect(state.body).toMatchObject({
      syncLagMs: LAG_MS,
      requests: { 'GET /v1/ats/applications': expect.any(Number) },
    });
  });
});
