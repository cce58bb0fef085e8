import { describe, expect, it } from 'vitest';
import { createAtsAdapter } from '../../../shared/ats';
import { KOMBO_WRITE_ACTIONS } from '../../../shared/ats/kombo/kombo.actions';
import { komboConnection } from '../../helpers/connections';
import { route, stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// Each write through Kombo passes through to the customer's ATS and holds one of its concurrent actions: a status
// change adds the new tag and takes off only the status tags the candidate has (read from Kombo's synced copy).
const INTEGRATION = 'personio:acme-unified';

function komboCandidate(tags: string[], lose: { first?: string } = {}) {
  const held = [...tags];
  const answer = (call: StubCall): StubAnswer => {
    if (lose.first && call.method === lose.first) {
      lose.first = undefined;
      throw new TypeError('fetch failed: socket hang up');
    }
    const body = (call.body ?? {}) as { tag?: { name?: string } };
    if (call.url.pathname === `/v1/integrations/${encodeURIComponent(INTEGRATION)}`) {
      const writeActions = Object.values(KOMBO_WRITE_ACTIONS).map((id) => ({
        ...{ id, is_available: true, coverage_status: 'SUPPORTED' },
      }));
      const tool = { id: 'personio', label: 'Personio' };
      return { status: 200, json: { status: 'success', data: { id: INTEGRATION, tool, write_actions: writeActions } } };
    }
    if (call.url.pathname === '/v1/ats/candidates') {
      const candidate = {
        ...{ id: 'cand-1', first_name: 'Ana', last_name: 'K', email_addresses: [], applications: [] },
        tags: held.map((name, i) => ({ id: `t${i}`, name })),
      };
      return { status: 200, json: { status: 'success', data: { next: null, results: [candidate] } } };
    }
    if (call.url.pathname === '/v1/ats/candidates/cand-1/tags') {
      const name = body.tag?.name ?? '';
      if (call.method === 'POST' && !held.includes(name)) held.push(name);
      if (call.method === 'DELETE' && held.includes(name)) held.splice(held.indexOf(name), 1);
      return { status: 200, json: { status: 'success', data: {}, warnings: [] } };
    }
    return { status: 404, json: { status: 'error', error: { code: 'PLATFORM.NOT_FOUND', message: route(call) } } };
  };
  const stub = stubFetch(answer);
  const { connection, secrets } = komboConnection(INTEGRATION);
  const options = { fetch: stub.fetch, sleep: async () => undefined };
  return { adapter: createAtsAdapter(connection, secrets, options), calls: stub.calls, held, answer };
}

const target = { atsJobId: 'job-1', atsApplicationId: 'app-1', atsCandidateId: 'cand-1' };
const ALL = ['invited', 'expired', 'flagged for review', 'advanced', 'cancelled', 'failed'].map(
  (s) => `AI interview: ${s}`,
);
const othersThan = (tag: string) => ALL.filter((t) => t !== tag);

describe('Kombo status tags', () => {
  it('adds the new status and takes off only the status tags the candidate has', async () => {
    const { adapter, calls, held } = komboCandidate(['Senior', 'AI interview: invited']);
    await adapter.setStatusTag?.(target, 'AI interview: advanced', othersThan('AI interview: advanced'));
    expect(held).toEqual(['Senior', 'AI interview: advanced']);
    const writes = calls.filter((c) => c.method !== 'GET').map((c) => `${c.method} ${(c.body as any)?.tag?.name}`);
    expect(writes).toEqual(['POST AI interview: advanced', 'DELETE AI interview: invited']);
  });

  it('writes nothing when the candidate shows the status already', async () => {
    const { adapter, calls } = komboCandidate(['AI interview: invited']);
    await adapter.setStatusTag?.(target, 'AI interview: invited', othersThan('AI interview: invited'));
    expect(calls.filter((c) => c.method !== 'GET')).toEqual([]);
  });

  // Its answer lost, the write may still land after a later status: not sent again here (test/unit/ats/ordered-writes).
  it.each(['POST', 'DELETE'])('sends a tag %s whose answer never came once: it may have landed', async (method) => {
    const { adapter, calls } = komboCandidate(['AI interview: invited'], { first: method });
    await expect(
      adapter.setStatusTag?.(target, 'AI interview: expired', othersThan('AI interview: expired')),
    ).rejects.toMatchObject({ mayHaveSucceeded: true });
    expect(calls.filter((c) => c.method === method)).toHaveLength(1);
  });
});

describe("Kombo writes behind a failed read of the integration's table", () => {
  it.each([
    ['answered 503', () => ({ status: 503, json: { status: 'error', error: { message: 'unavailable' } } })],
    [
      'not answered',
      () => {
        throw new TypeError('fetch failed: socket hang up');
      },
    ],
  ])('say the note was never sent when the table read was %s, and post it on the next try', async (_what, fail) => {
    let failures = 100;
    const healthy = komboCandidate([]);
    const stub = stubFetch((call) => {
      if (call.url.pathname.startsWith('/v1/integrations/') && failures-- > 0) return fail();
      if (route(call).startsWith(`POST /v1/ats/applications/${target.atsApplicationId}/notes`))
        return { status: 200, json: { status: 'success', data: {}, warnings: [] } };
      return healthy.answer(call);
    });
    const { connection, secrets } = komboConnection(INTEGRATION);
    const adapter = createAtsAdapter(connection, secrets, { fetch: stub.fetch, sleep: async () => undefined });
    const note = { body: 'AI interview report', marker: 'ai-interview-report:r-1' };
    // The step that recorded its start clears it on this answer (shared/pipeline/steps.ts), so the note is not lost.
    await expect(adapter.postNote(target, note)).rejects.toMatchObject({ definitelyNotSent: true });
    expect(stub.calls.filter((c) => c.method === 'POST')).toEqual([]);
    failures = 0;
    await adapter.postNote(target, note);
    expect(stub.calls.filter((c) => c.method === 'POST')).toHaveLength(1);
  });
});

describe('Kombo moveToStage', () => {
  it('leaves an application moved on since the invitation where it is, and moves one still there', async () => {
    const state: { stage: string | null; named?: string } = { stage: 'st-offer' };
    const { answer } = komboCandidate([]);
    const stub = stubFetch((call: StubCall): StubAnswer => {
      const ok = (data: unknown) => ({ status: 200, json: { status: 'success', data } });
      const stages = ['st-ai', 'st-hm', 'st-offer'].map((id) => ({ id, name: id }));
      if (call.url.pathname === '/v1/ats/jobs')
        return ok({ next: null, results: [{ id: 'job-1', name: 'J', stages }] });
      if (call.url.pathname === '/v1/ats/applications')
        return ok({
          next: null,
          results: [
            {
              ...{ id: 'app-1', job_id: 'job-1', candidate_id: 'cand-1', current_stage_id: state.stage },
              current_stage: state.named ? { id: state.named, name: state.named } : null,
            },
          ],
        });
      if (call.url.pathname === '/v1/ats/applications/app-1/stage') return ok({});
      return answer(call);
    });
    const { connection, secrets } = komboConnection(INTEGRATION);
    const adapter = createAtsAdapter(connection, secrets, { fetch: stub.fetch, sleep: async () => undefined });
    const seen = { ...target, fromStageId: 'st-ai', fromStage: { id: 'st-ai' } };
    expect(await adapter.moveToStage(seen, { id: 'st-hm' })).toEqual({
      moved: false,
      stageId: 'st-offer',
      skipped: 'not-moved:moved-on',
    });
    expect(stub.calls.filter((c) => c.method === 'PUT')).toEqual([]);
    // A synced copy naming the stage without its id: in the target already, not moved on.
    Object.assign(state, { stage: null, named: 'st-hm' });
    expect(await adapter.moveToStage(seen, { id: 'st-hm' })).toEqual({ moved: false, stageId: 'st-hm' });
    expect(stub.calls.filter((c) => c.method === 'PUT')).toEqual([]);
    Object.assign(state, { stage: 'st-ai', named: undefined });
    expect(await adapter.moveToStage(seen, { id: 'st-hm' })).toEqual({ moved: true, stageId: 'st-hm' });
    expect(stub.calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([{ stage_id: 'st-hm' }]);
  });
});
