import { describe, expect, it } from 'vitest';
import { AtsError, createAtsAdapter } from '../../../shared/ats';
import { errorDetail } from '../../../shared/ats/ats-http';
import { createSetupAdapter } from '../../../shared/ats/setup-adapter';
import { komboConnection } from '../../helpers/connections';
import { stubFetch } from '../../helpers/stub-fetch';

const INTEGRATION = 'personio:acme-unified';
const application = {
  ...{ id: 'app-1', candidate_id: 'cand-1', job_id: 'job-1', outcome: 'PENDING' },
  ...{ current_stage_id: 's-1', current_stage: { id: 's-1', name: 'AI Interview' } },
};
const throttled = {
  status: 429,
  json: { status: 'error', error: { code: 'PLATFORM.CONCURRENCY_LIMIT_EXCEEDED', message: 'Too many actions' } },
  headers: { 'concurrency-remaining': '0' },
};

/** The Kombo adapter of one integration on a stubbed API, its waits recorded instead of slept. */
function komboWith(answers: (typeof throttled | { status: number; json: unknown })[]) {
  let next = 0;
  const stub = stubFetch(() => answers[Math.min(next++, answers.length - 1)] as never);
  const { connection, secrets } = komboConnection(INTEGRATION);
  const waits: number[] = [];
  const sleep = async (ms: number) => void waits.push(ms);
  return { adapter: createAtsAdapter(connection, secrets, { fetch: stub.fetch, sleep }), waits, calls: stub.calls };
}

const target = { atsJobId: 'job-1', atsApplicationId: 'app-1', atsCandidateId: 'cand-1' };

describe("Kombo's answers", () => {
  it('backs off at least a second after a 429 that names no wait, as Kombo asks; then reads', async () => {
    const page = { status: 200, json: { status: 'success', data: { next: null, results: [application] } } };
    const { adapter, waits, calls } = komboWith([throttled, throttled, page]);
    expect(await adapter.readStanding(target)).toMatchObject({ active: true, stageId: 's-1' });
    expect(calls).toHaveLength(3);
    expect(waits).toHaveLength(2);
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(1_000);
  });

  it("names a refusal by Kombo's error code and message, the code first (what to branch on)", async () => {
    const { adapter } = komboWith([
      {
        status: 403,
        json: { status: 'error', error: { code: 'INTEGRATION.PERMISSION_MISSING', message: 'Enable "Add notes"' } },
      },
    ]);
    const error = await adapter.readStanding(target).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AtsError);
    expect((error as AtsError).message).toContain('INTEGRATION.PERMISSION_MISSING: Enable "Add notes"');
    expect(errorDetail('{"message":"plain"}')).toBe('plain');
    expect(errorDetail('{"error":"text"}')).toBe('text');
    expect(errorDetail('<html>')).toBe('');
  });
});

/** An integration whose capability table lists `listed` write actions, and whose note route answers `note`. */
function komboNotes(listed: { id: string; coverage_status: string }[], note: { status: number; json: unknown }) {
  const stub = stubFetch((call) => {
    if (call.url.pathname.startsWith('/v1/integrations/')) {
      const writeActions = listed.map((a) => ({ ...a, is_available: true }));
      const data = { id: INTEGRATION, status: 'ACTIVE', tool: { id: 'personio', label: 'Personio' } };
      return { status: 200, json: { status: 'success', data: { ...data, write_actions: writeActions } } };
    }
    return note as never;
  });
  const { connection, secrets } = komboConnection(INTEGRATION);
  const adapter = createAtsAdapter(connection, secrets, { fetch: stub.fetch, sleep: async () => undefined });
  const notes = () => stub.calls.filter((c) => c.url.pathname.endsWith('/notes'));
  return { adapter, notes };
}
const note = { body: 'Scores: 88', marker: 'ai-report:r-1' };
const posted = { status: 200, json: { status: 'success', data: {} } };

describe("Kombo's capability table and its refusals", () => {
  it('tries a write the table does not list (its id is unconfirmed): the note is posted', async () => {
    const { adapter, notes } = komboNotes([], posted);
    expect(await adapter.postNote(target, note)).toEqual({});
    expect(notes()).toHaveLength(1);
  });

  it("skips it with Kombo's code as the reason when Kombo refuses it as one the integration cannot make", async () => {
    const refusal = { status: 'error', error: { code: 'INTEGRATION.ACTION_NOT_AVAILABLE', message: 'Not available' } };
    const { adapter, notes } = komboNotes([], { status: 400, json: refusal });
    expect(await adapter.postNote(target, note)).toEqual({
      skipped: 'skipped: Personio through Kombo does not add notes (INTEGRATION.ACTION_NOT_AVAILABLE)',
    });
    expect(notes()).toHaveLength(1);
  });

  it('skips one the table lists as unsupported without sending it; any other failure is thrown', async () => {
    const unsupported = komboNotes([{ id: 'ats_add_application_note', coverage_status: 'UNSUPPORTED' }], posted);
    expect(await unsupported.adapter.postNote(target, note)).toEqual({
      skipped: 'skipped: Personio through Kombo does not add notes (UNSUPPORTED)',
    });
    expect(unsupported.notes()).toHaveLength(0);
    const failing = komboNotes([], { status: 500, json: { status: 'error', error: { code: 'PLATFORM.UNKNOWN' } } });
    await expect(failing.adapter.postNote(target, note)).rejects.toBeInstanceOf(AtsError);
  });
});

describe("Kombo's scope config, as the doctor asks for it", () => {
  it("asks for 'Read document attachments' with the report file: a retried upload looks for the file first", () => {
    const { connection, secrets } = komboConnection(INTEGRATION);
    const adapter = createSetupAdapter(connection, secrets);
    const names = (reportFile: boolean) =>
      adapter.requiredPermissions({ statusTags: false, reportFile }).map((p) => p.permission);
    expect(names(true)).toEqual(expect.arrayContaining(['Add attachments', 'Read document attachments']));
    expect(names(false)).not.toContain('Read document attachments');
  });
});

describe("Kombo's webhooks about the integration itself", () => {
  const parse = (body: unknown) => {
    const { adapter } = komboWith([]);
    return adapter.parseWebhook({ headers: {}, rawBody: Buffer.from(JSON.stringify(body)) });
  };

  it("reads this integration's state, and its deletion as DELETED; another integration's is ignored", () => {
    const changed = (integration: string, state: unknown) => ({
      id: 'evt-1',
      type: 'integration-state-changed',
      data: { integration_id: integration, integration_tool: 'personio', state, setup_status: 'COMPLETED' },
    });
    expect(parse(changed(INTEGRATION, 'INVALID'))).toEqual({
      kind: 'integration-changed',
      event: { deliveryId: 'evt-1', state: 'INVALID' },
    });
    expect(parse({ id: 'evt-2', type: 'integration-deleted', data: { id: INTEGRATION, tool: 'personio' } })).toEqual({
      kind: 'integration-changed',
      event: { deliveryId: 'evt-2', state: 'DELETED' },
    });
    expect(parse(changed('recruitee:other', 'INVALID'))).toMatchObject({ kind: 'ignored' });
    expect(parse({ id: 'evt-3', type: 'integration-deleted', data: { id: 'recruitee:other' } })).toMatchObject({
      kind: 'ignored',
    });
  });

  it('refuses one without its state, naming the field', () => {
    const answer = parse({ id: 'evt-4', type: 'integration-state-changed', data: { integration_id: INTEGRATION } });
    expect(answer).toMatchObject({ kind: 'invalid', message: expect.stringContaining('state') });
  });
});
