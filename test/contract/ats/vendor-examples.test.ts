import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAtsAdapter } from '../../../shared/ats';
import { MOVE_CALLS } from '../../../shared/ats/port';
import { parseConnections, type ConnectionSecrets } from '../../../shared/config';
import { connectionDocument } from '../../helpers/connections';
import { loadFixture, loadRawFixture } from '../../helpers/fixtures';
import { route, stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// The vendors' own examples (or, where a vendor publishes none, fixtures built from its field reference; see
// fixtures/README.md) run through the adapters with a fetch that answers with them: parse, verify, move, find a
// note, delete.

const SECRET = 'whsec_test_0123456789';
const fixture = (name: string) => `contract/ats/fixtures/${name}`;
const answer = (name: string, status = 200, headers: Record<string, string> = {}): StubAnswer => ({
  status,
  json: loadFixture(fixture(name)),
  headers,
});
const notFound = (call: StubCall): StubAnswer => ({ status: 404, json: { message: `no route ${route(call)}` } });
const noRetry = { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 }, sleep: async () => undefined };
const base: ConnectionSecrets = { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32) };
const hmacHex = (secret: string, data: Buffer | string) => createHmac('sha256', secret).update(data).digest('hex');
const connectionOf = (overrides: Record<string, unknown>) => parseConnections(connectionDocument(overrides))[0]!;
const LEVER_TOKENS = { candidateStageChange: 'stage-token-0123456789', candidateDeleted: 'delete-token-0123456789' };

/** Each vendor's connection: its fields over connectionDocument's (a Greenhouse one). */
const CONNECTIONS = {
  greenhouse: { atsAuthUrl: 'https://auth.greenhouse.io/token' },
  lever: { id: 'acme-lever', ats: 'lever', atsBaseUrl: 'https://api.lever.co', atsUserId: 'u-1' },
  ashby: { id: 'acme-ashby', ats: 'ashby', atsBaseUrl: 'https://api.ashbyhq.com' },
  workable: { id: 'acme-workable', ats: 'workable', atsBaseUrl: 'https://acme.workable.com' },
};
/** Each vendor's secrets, over the interview service's. */
const SECRETS: Record<keyof typeof CONNECTIONS, Partial<ConnectionSecrets>> = {
  greenhouse: { atsWebhookSecret: SECRET, atsClientId: 'id', atsClientSecret: 'secret' },
  lever: { atsApiKey: 'key', atsWebhookSecrets: LEVER_TOKENS },
  ashby: { atsWebhookSecret: SECRET, atsApiKey: 'key' },
  workable: { atsWebhookSecret: SECRET, atsApiKey: 'key' },
};
type Serve = (call: StubCall) => StubAnswer;

/** The vendor's adapter, every call it makes answered by `serve`, and the calls it made. */
function adapterServing(vendor: keyof typeof CONNECTIONS, serve: Serve) {
  const stub = stubFetch(serve);
  const connection = connectionOf(CONNECTIONS[vendor]);
  const adapter = createAtsAdapter(connection, { ...base, ...SECRETS[vendor] }, { fetch: stub.fetch, ...noRetry });
  return { adapter, calls: stub.calls };
}

/**
 * A move that moves, once the adapter has read the stages it caches, makes the calls a profile declares a move at
 * (`MOVE_CALLS`): where the application stands, then the move.
 */
async function expectMoveCost(calls: readonly StubCall[], move: () => Promise<{ moved: boolean }>): Promise<void> {
  // An OAuth token (Greenhouse) is asked of the vendor's authorization server, not of the rate-limited API.
  const apiCalls = () => calls.filter((c) => !c.url.pathname.endsWith('/token')).length;
  const before = apiCalls();
  expect(await move()).toMatchObject({ moved: true });
  expect(apiCalls() - before).toBe(MOVE_CALLS);
}

describe('Contract: Greenhouse examples (developers.greenhouse.io webhooks; harvestdocs v3 reference)', () => {
  // The OAuth token comes from Greenhouse's authorization server.
  const adapterWith = (serve: Serve) =>
    adapterServing('greenhouse', (call) =>
      call.url.pathname === '/token' ? answer('greenhouse-token.json') : serve(call),
    );
  const target = { atsApplicationId: '265277', atsCandidateId: '265772', atsJobId: '108279' };

  it('verifies and reads delete_candidate, merge_candidate and candidate_anonymized as purges', () => {
    const { adapter } = adapterWith(notFound);
    const expected = {
      'greenhouse-delete-candidate.json': ['37031511', ['46196263', '46196258']],
      'greenhouse-merge-candidate.json': ['37031511', []],
      'greenhouse-candidate-anonymized.json': ['37031511', []],
    } as const;
    for (const [name, [candidate, applications]] of Object.entries(expected)) {
      const rawBody = loadRawFixture(fixture(name));
      const headers = { signature: `sha256 ${hmacHex(SECRET, rawBody)}`, 'greenhouse-event-id': `evt-${name}` };
      expect(adapter.verifyWebhook({ headers, rawBody }, Date.now())).toEqual({ valid: true });
      expect(adapter.parseWebhook({ headers, rawBody })).toEqual({
        kind: 'candidate-deleted',
        event: { deliveryId: `evt-${name}`, atsCandidateId: candidate, atsApplicationIds: [...applications] },
      });
    }
  });

  it('moves by stage name from the flat application read, and finds a note by its marker', async () => {
    const { adapter, calls } = adapterWith((call) => {
      const path = route(call);
      if (path === 'GET /v3/applications?ids=265277') return answer('greenhouse-v3-applications.json');
      if (path === 'GET /v3/job_interview_stages?job_ids=108279&per_page=500')
        return answer('greenhouse-v3-job-interview-stages.json');
      if (path === 'POST /v3/applications/265277/move') return { status: 204 };
      if (path === 'GET /v3/notes?candidate_ids=265772&per_page=500') return answer('greenhouse-v3-notes.json');
      return notFound(call);
    });
    expect(await adapter.moveToStage(target, { name: 'Hiring Manager Review' })).toEqual({
      moved: true,
      stageId: '71417',
    });
    expect(calls.find((c) => c.url.pathname.endsWith('/move'))?.body).toEqual({
      from_stage_id: 71416,
      to_stage_id: 71417,
    });
    await expectMoveCost(calls, () => adapter.moveToStage(target, { name: 'Hiring Manager Review' }));
    expect(await adapter.moveToStage(target, { name: 'Assessment' })).toEqual({ moved: false, stageId: '71416' });
    expect(await adapter.findNote(target, 'ai-interview-report:r-71')).toEqual({ noteId: '90002' });
  });

  it('names the refusal of a 422 validation error', async () => {
    const { adapter } = adapterWith((call) =>
      call.method === 'POST' ? answer('greenhouse-error-422.json', 422) : answer('greenhouse-v3-applications.json'),
    );
    await expect(adapter.moveToStage(target, { id: '71417' })).rejects.toMatchObject({
      code: 'ats-invalid-request',
      message: expect.stringContaining('422 Validation error'),
    });
  });
});

describe('Contract: Lever examples (help.lever.co webhooks; NangoHQ notes model)', () => {
  const adapterWith = (serve: Serve) => adapterServing('lever', serve);
  /** The fixture signed as Lever signs it, with the token of its event's webhook, delivered now. */
  const signed = (name: string) => {
    const document = loadFixture<Record<string, unknown>>(fixture(name));
    document.triggeredAt = Date.now();
    const secret = LEVER_TOKENS[document.event as keyof typeof LEVER_TOKENS];
    document.signature = hmacHex(secret, `${document.token}${document.triggeredAt}`);
    return { headers: {}, rawBody: Buffer.from(JSON.stringify(document)) };
  };

  it('verifies each event with its own webhook token; a Verify-connection delivery is answered, not read', () => {
    const { adapter } = adapterWith(notFound);
    for (const name of ['lever-candidate-stage-change.json', 'lever-candidate-deleted.json'])
      expect(adapter.verifyWebhook(signed(name), Date.now()).valid).toBe(true);
    expect(adapter.parseWebhook(signed('lever-candidate-deleted.json'))).toMatchObject({
      kind: 'candidate-deleted',
      event: { atsCandidateId: '7a1c9d2e-0001', atsApplicationIds: ['250d8f03-0002'] },
    });
    const test = signed('lever-verify-connection.json');
    expect(adapter.verifyWebhook(test, Date.now()).valid).toBe(true);
    expect(adapter.parseWebhook(test).kind).toBe('ignored');
  });

  it('confirms a stage change and a deletion with the API, moves, and finds a note in fields[].value', async () => {
    let deleted = false;
    const { adapter, calls } = adapterWith((call) => {
      const path = route(call);
      if (path.startsWith('GET /v1/opportunities/250d8f03-0002/notes')) return answer('lever-notes-page.json');
      if (path.startsWith('GET /v1/opportunities/250d8f03-0002'))
        return deleted ? notFound(call) : answer('lever-opportunity.json');
      if (path === 'GET /v1/stages')
        return { status: 200, json: { data: [{ id: 'c1b2-ai-interview', text: 'AI Interview' }], hasNext: false } };
      if (path.startsWith('PUT /v1/opportunities/250d8f03-0002/stage')) return { status: 200, json: { data: {} } };
      return notFound(call);
    });
    const parsed = adapter.parseWebhook(signed('lever-candidate-stage-change.json'));
    if (parsed.kind !== 'stage-entered') throw new Error(`expected a stage change, got ${parsed.kind}`);
    expect(await adapter.confirmStageEntered({ ...parsed.event, atsApplicationId: '250d8f03-0002' })).toMatchObject({
      confirmed: true,
      event: {
        atsJobId: 'posting-backend-01',
        candidate: { email: 'ana@example.com' },
        stage: { name: 'AI Interview' },
      },
    });
    const ref = { atsApplicationId: '250d8f03-0002', atsCandidateId: '7a1c9d2e-0001', atsJobId: 'posting-backend-01' };
    expect(await adapter.moveToStage(ref, { id: 'c1b2-ai-interview' })).toMatchObject({ moved: false });
    expect(await adapter.moveToStage(ref, { id: 'd3e4-hm-review' })).toMatchObject({ moved: true });
    await expectMoveCost(calls, () => adapter.moveToStage(ref, { id: 'd3e4-hm-review' }));
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({ stage: 'd3e4-hm-review' });
    expect(await adapter.findNote(ref, 'ai-interview-report:r-72')).toEqual({ noteId: 'a3f1e9c2-note-2' });
    const deletion = adapter.parseWebhook(signed('lever-candidate-deleted.json'));
    if (deletion.kind !== 'candidate-deleted') throw new Error('expected a deletion');
    expect(await adapter.confirmCandidateDeleted?.(deletion.event)).toMatchObject({ confirmed: false });
    deleted = true;
    expect(await adapter.confirmCandidateDeleted?.(deletion.event)).toEqual({ confirmed: true });
  });
});

describe('Contract: Ashby examples (webhook payloads OpenAPI; RPC answers)', () => {
  const adapterWith = (serve: Serve) => adapterServing('ashby', serve);
  const ref = { atsApplicationId: '5e1c4a2b-0001', atsCandidateId: 'a9d2c3f4-0002', atsJobId: '4071538b-0005' };

  it('verifies and reads candidateDelete and candidateMerge as purges of the candidate that is gone', () => {
    const { adapter } = adapterWith(notFound);
    for (const name of ['ashby-candidate-delete.json', 'ashby-candidate-merge.json']) {
      const rawBody = loadRawFixture(fixture(name));
      const headers = { 'ashby-signature': `sha256=${hmacHex(SECRET, rawBody)}` };
      expect(adapter.verifyWebhook({ headers, rawBody }, Date.now())).toEqual({ valid: true });
      expect(adapter.parseWebhook({ headers, rawBody })).toMatchObject({
        kind: 'candidate-deleted',
        event: { atsCandidateId: 'a9d2c3f4-0002', atsApplicationIds: [] },
      });
    }
  });

  it('moves by stage name within the interview plan, finds a note, and names a refusal inside HTTP 200', async () => {
    const { adapter, calls } = adapterWith((call) => {
      const path = route(call);
      if (path === 'POST /application.info') return answer('ashby-application-info.json');
      if (path === 'POST /interviewStage.list') return answer('ashby-interview-stages.json');
      if (path === 'POST /application.changeStage') return { status: 200, json: { success: true, results: {} } };
      if (path === 'POST /candidate.listNotes') return answer('ashby-list-notes.json');
      return notFound(call);
    });
    expect(await adapter.moveToStage(ref, { name: 'Hiring Manager Review' })).toEqual({
      moved: true,
      stageId: '3ae2b801-0006',
    });
    expect(calls.find((c) => c.url.pathname === '/application.changeStage')?.body).toEqual({
      applicationId: '5e1c4a2b-0001',
      interviewStageId: '3ae2b801-0006',
    });
    await expectMoveCost(calls, () => adapter.moveToStage(ref, { name: 'Hiring Manager Review' }));
    expect(await adapter.findNote(ref, 'ai-interview-report:r-73')).toEqual({ noteId: 'n-0002' });
    const refusing = adapterWith((call) =>
      route(call) === 'POST /application.info'
        ? answer('ashby-application-info.json')
        : answer('ashby-error-in-200.json'),
    );
    await expect(refusing.adapter.moveToStage(ref, { id: '3ae2b801-0006' })).rejects.toMatchObject({
      code: 'ats-invalid-request',
      message: expect.stringContaining('invalid_input'),
    });
  });
});

describe('Contract: Workable examples (workable.readme.io candidate-events, candidate-activities)', () => {
  const adapterWith = (serve: Serve) => adapterServing('workable', serve);
  const ref = { atsApplicationId: '3fc9a8', atsCandidateId: '3fc9a8', atsJobId: 'GROOV005' };

  it('reads candidate_moved by stage name, moves by slug, writes a comment answered by an empty 201', async () => {
    const { adapter, calls } = adapterWith((call) => {
      const path = route(call);
      if (path === 'GET /spi/v3/candidates/3fc9a8') return answer('workable-candidate.json');
      if (path === 'GET /spi/v3/jobs/GROOV005/stages') return answer('workable-job-stages.json');
      if (path === 'POST /spi/v3/candidates/3fc9a8/move') return { status: 200, json: {} };
      if (path === 'POST /spi/v3/candidates/3fc9a8/comments') return { status: 201 };
      if (path === 'GET /spi/v3/candidates/3fc9a8/activities?limit=100') return answer('workable-activities.json');
      return notFound(call);
    });
    const rawBody = loadRawFixture(fixture('workable-candidate-moved.json'));
    const headers = { 'x-workable-signature': hmacHex(SECRET, rawBody) };
    expect(adapter.verifyWebhook({ headers, rawBody }, Date.now())).toEqual({ valid: true });
    expect(adapter.parseWebhook({ headers, rawBody })).toMatchObject({ event: { stage: { name: 'AI Interview' } } });
    expect(await adapter.moveToStage(ref, { name: 'AI Interview' })).toEqual({ moved: false, stageId: 'ai-interview' });
    expect(await adapter.moveToStage(ref, { name: 'Hiring Manager Review' })).toMatchObject({ moved: true });
    await expectMoveCost(calls, () => adapter.moveToStage(ref, { name: 'Hiring Manager Review' }));
    expect(calls.find((c) => c.url.pathname.endsWith('/move'))?.body).toMatchObject({
      target_stage: 'hiring-manager-review',
    });
    expect(await adapter.postNote(ref, { body: 'Invited', marker: 'm' })).toEqual({ noteId: undefined });
    expect(await adapter.findNote(ref, 'ai-interview-report:r-74')).toEqual({ noteId: 'ac-2' });
  });
});
