import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GreenhouseAdapter } from '../../../shared/ats/greenhouse/greenhouse.adapter';
import { createAtsAdapter } from '../../../shared/ats';
import { missingAtsSecret, parseConnections, type ConnectionSecrets } from '../../../shared/config';
import { matchTriggers } from '../../../shared/pipeline/trigger-matching';
import { connectionDocument, workableFields } from '../../helpers/connections';
import { route, stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// Each case drives a real adapter with a fetch that answers in the shape the vendor documents
// (../shared/spec/ats-facts.md, "Corrections, 2026-11"); each failed on the adapters before this change.

const SECRET = 'whsec_test_0123456789';
const base: ConnectionSecrets = { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32) };
const noRetry = { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 }, sleep: async () => undefined };
const json = (status: number, body: unknown, headers: Record<string, string> = {}): StubAnswer => ({
  status,
  json: body,
  headers,
});
const notFound = (call: StubCall): StubAnswer => json(404, { message: `no route ${route(call)}` });

const connectionOf = (overrides: Record<string, unknown>) => parseConnections(connectionDocument(overrides))[0]!;

function greenhouse(answer: (call: StubCall) => StubAnswer, overrides: Record<string, unknown> = {}) {
  const stub = stubFetch((call) => {
    if (call.url.pathname === '/token')
      return json(200, { access_token: 'tok', token_type: 'Bearer', expires_at: new Date(Date.now() + 3.6e6) });
    return answer(call);
  });
  const adapter = createAtsAdapter(
    connectionOf({ atsAuthUrl: 'https://auth.example.test/token', ...overrides }),
    { ...base, atsWebhookSecret: SECRET, atsClientId: 'id', atsClientSecret: 'secret' },
    { fetch: stub.fetch, ...noRetry },
  );
  return { adapter, calls: stub.calls };
}

/** A Greenhouse whose application 4401 is in stage 9001 and can be moved. */
const greenhouseMoving = () =>
  greenhouse((call) => {
    if (route(call) === 'GET /v3/applications?ids=4401') return json(200, [{ id: 4401, job_interview_stage_id: 9001 }]);
    if (route(call) === 'POST /v3/applications/4401/move') return { status: 204 };
    return notFound(call);
  });

const workableConnection = (overrides: Record<string, unknown> = {}) =>
  connectionOf({ ...workableFields(), ...overrides });

function workable(answer: (call: StubCall) => StubAnswer, overrides: Record<string, unknown> = {}) {
  const stub = stubFetch(answer);
  const connection = workableConnection(overrides);
  const adapter = createAtsAdapter(
    connection,
    { ...base, atsWebhookSecret: SECRET, atsApiKey: 'key' },
    { fetch: stub.fetch, ...noRetry },
  );
  return { adapter, connection, calls: stub.calls };
}

const WORKABLE_STAGES = {
  stages: [
    { slug: 'applied', name: 'Applied', kind: 'sourced', position: 0 },
    { slug: 'ai-interview', name: 'AI Interview', kind: 'assessment', position: 1 },
    { slug: 'hiring-manager-review', name: 'Hiring Manager Review', kind: 'interview', position: 2 },
  ],
};

function lever(answer: (call: StubCall) => StubAnswer, secrets: Partial<ConnectionSecrets> = {}) {
  const stub = stubFetch(answer);
  const adapter = createAtsAdapter(
    connectionOf({ id: 'acme-lever', ats: 'lever', atsBaseUrl: 'https://api.lever.co', atsUserId: 'user-1' }),
    { ...base, atsApiKey: 'key', ...secrets },
    { fetch: stub.fetch, ...noRetry },
  );
  return { adapter, calls: stub.calls };
}

const target = { atsApplicationId: '4401', atsCandidateId: '7702', atsJobId: '3301', fromStageId: '9001' };
const body = (document: unknown) => ({ headers: {}, rawBody: Buffer.from(JSON.stringify(document)) });

describe('Rows of the vendor corrections, each against the documented shapes', () => {
  it('1. Workable: data.stage is the stage name; a trigger by name fires, and one by slug after a lookup', async () => {
    const delivery = body({
      id: 'f1',
      event_type: 'candidate_moved',
      data: { id: '3fc9a8', email: 'ana@example.com', job: { shortcode: 'GROOV005' }, stage: 'AI Interview' },
    });
    const byName = workable(notFound);
    const parsed = byName.adapter.parseWebhook(delivery);
    expect(parsed).toMatchObject({ kind: 'stage-entered', event: { stage: { name: 'AI Interview' } } });
    if (parsed.kind !== 'stage-entered') throw new Error('not parsed');
    expect(matchTriggers(byName.connection, parsed.event).map((t) => t.id)).toEqual(['ai-screen']);

    // A trigger by slug: the worker looks the slug of the named stage up in the job's stage list.
    const bySlug = workable(
      (call) => (route(call) === 'GET /spi/v3/jobs/GROOV005/stages' ? json(200, WORKABLE_STAGES) : notFound(call)),
      {
        triggers: [
          {
            id: 'ai-screen',
            stage: { id: 'ai-interview' },
            interview: { questions: [{ question: 'Tell us about a system you built.', time: 3, type: 'audio' }] },
          },
        ],
      },
    );
    const confirmed = await bySlug.adapter.confirmStageEntered(parsed.event);
    expect(confirmed).toMatchObject({
      confirmed: true,
      event: { stage: { id: 'ai-interview', name: 'AI Interview' } },
    });
    if (!confirmed.confirmed) throw new Error('not confirmed');
    expect(matchTriggers(bySlug.connection, confirmed.event).map((t) => t.id)).toEqual(['ai-screen']);
  });

  it('2. Workable: a comment answered 201 with an empty body is written, not failed', async () => {
    const { adapter, calls } = workable((call) =>
      route(call) === 'POST /spi/v3/candidates/3fc9a8/comments' ? { status: 201 } : notFound(call),
    );
    const ref = { atsApplicationId: '3fc9a8', atsCandidateId: '3fc9a8', atsJobId: 'GROOV005' };
    await expect(adapter.postNote(ref, { body: 'Invited', marker: 'm-1' })).resolves.toEqual({ noteId: undefined });
    expect(calls).toHaveLength(1);
  });

  it('3. Greenhouse: the flat v3 application says the move is done, or gives the current from_stage_id', async () => {
    let stage = 9002;
    const { adapter, calls } = greenhouse((call) => {
      if (route(call) === 'GET /v3/applications?ids=4401')
        return json(200, [{ id: 4401, candidate_id: 7702, job_interview_stage_id: stage, status: 'in_process' }]);
      if (route(call) === 'POST /v3/applications/4401/move') return { status: 204 };
      return notFound(call);
    });
    // Already in the target stage: nothing is sent.
    expect(await adapter.moveToStage(target, { id: '9002' })).toEqual({ moved: false, stageId: '9002' });
    expect(calls.filter((c) => c.url.pathname.endsWith('/move'))).toHaveLength(0);
    // Elsewhere: moved from the stage the application is in now, as read (here the stage no webhook named).
    stage = 9000;
    const unnamed = { ...target, fromStageId: undefined };
    expect(await adapter.moveToStage(unnamed, { id: '9002' })).toEqual({ moved: true, stageId: '9002' });
    expect(calls.find((c) => c.url.pathname.endsWith('/move'))?.body).toEqual({
      from_stage_id: 9000,
      to_stage_id: 9002,
    });
    // Moved on by a recruiter since the connector saw it in 9001: left where it is, nothing sent.
    stage = 9005;
    const movedOn = { moved: false, stageId: '9005', skipped: 'not-moved:moved-on' };
    expect(await adapter.moveToStage({ ...target, fromStage: { id: '9001' } }, { id: '9002' })).toEqual(movedOn);
    expect(calls.filter((c) => c.url.pathname.endsWith('/move'))).toHaveLength(1);
  });

  it('4. Greenhouse: a stage by name is found in /v3/job_interview_stages?job_ids=, page by page', async () => {
    const { adapter, calls } = greenhouse((call) => {
      const path = route(call);
      if (path === 'GET /v3/job_interview_stages?job_ids=3301&per_page=500')
        return json(200, [{ id: 9000, job_id: 3301, name: 'Application Review', sort_order: 0, active: true }], {
          link: '<https://harvest.greenhouse.io/v3/job_interview_stages?cursor=abc>; rel="next"',
        });
      if (path === 'GET /v3/job_interview_stages?cursor=abc')
        return json(200, [{ id: 9002, job_id: 3301, name: 'Hiring Manager Review', sort_order: 2, active: true }]);
      if (path === 'GET /v3/applications?ids=4401') return json(200, [{ id: 4401, job_interview_stage_id: 9001 }]);
      if (path === 'POST /v3/applications/4401/move') return { status: 204 };
      return notFound(call);
    });
    expect(await adapter.moveToStage(target, { name: 'Hiring Manager Review' })).toEqual({
      moved: true,
      stageId: '9002',
    });
    expect(calls.some((c) => c.url.pathname === '/v3/job_stages')).toBe(false);
  });

  it('5. Greenhouse: calls that begin at the same moment share one access token, asked for once', async () => {
    const { adapter, calls } = greenhouseMoving();
    await Promise.all(
      Array.from({ length: 5 }, () => adapter.moveToStage(target, { idsByJob: { '3301': '9002', '3302': '9102' } })),
    );
    expect(calls.filter((c) => route(c) === 'POST /token')).toHaveLength(1);
  });

  it("5. Greenhouse: toStage {idsByJob} moves to the job's own stage id, with no name lookup", async () => {
    const { adapter, calls } = greenhouseMoving();
    const moved = await adapter.moveToStage(target, { idsByJob: { '3301': '9002', '3302': '9102' } });
    expect(moved).toEqual({ moved: true, stageId: '9002' });
    expect(calls.map(route)).toEqual([
      'POST /token',
      'GET /v3/applications?ids=4401',
      'POST /v3/applications/4401/move',
    ]);
  });

  it('6. Lever: each webhook has its own signature token, and each verifies only its own event', () => {
    const tokens = { candidateStageChange: 'stage-token-0123456789', candidateDeleted: 'delete-token-0123456789' };
    const { adapter } = lever(notFound, { atsWebhookSecrets: tokens });
    const signed = (event: string, secret: string) => {
      const token = `tok-${event}`;
      const triggeredAt = Date.now();
      const signature = createHmac('sha256', secret).update(`${token}${triggeredAt}`).digest('hex');
      return body({ event, token, triggeredAt, signature, data: { candidateId: 'c-1', opportunityId: 'o-1' } });
    };
    expect(adapter.verifyWebhook(signed('candidateDeleted', tokens.candidateDeleted), Date.now()).valid).toBe(true);
    expect(adapter.verifyWebhook(signed('candidateStageChange', tokens.candidateStageChange), Date.now()).valid).toBe(
      true,
    );
    // A deletion signed with the stage-change token is not a deletion webhook's.
    expect(adapter.verifyWebhook(signed('candidateDeleted', tokens.candidateStageChange), Date.now()).valid).toBe(
      false,
    );
    // The secret's schema says which token a Lever connection needs.
    expect(missingAtsSecret('lever', { ...base, atsApiKey: 'key' })).toMatch(/atsWebhookSecrets\.candidateStageChange/);
    expect(missingAtsSecret('lever', { ...base, atsApiKey: 'key', atsWebhookSecrets: tokens })).toBeUndefined();
  });

  it("7. Workable: a comment is found among the candidate's activities (there is no comment list)", async () => {
    const { adapter, calls } = workable((call) => {
      if (route(call) === 'GET /spi/v3/candidates/3fc9a8/activities?limit=100')
        return json(200, {
          activities: [
            { id: 'a1', action: 'moved', body: null, created_at: '2026-11-20T10:00:00Z' },
            { id: 'a2', action: 'comment', body: 'Another note', created_at: '2026-11-20T09:00:00Z' },
          ],
          paging: { next: 'https://acme.workable.com/spi/v3/candidates/3fc9a8/activities?limit=100&max_id=a2' },
        });
      if (route(call) === 'GET /spi/v3/candidates/3fc9a8/activities?limit=100&max_id=a2')
        return json(200, {
          activities: [{ id: 'a3', action: 'comment', body: 'AI interview\n\n[m-7]', created_at: '2026-11-19' }],
        });
      return notFound(call);
    });
    const ref = { atsApplicationId: '3fc9a8', atsCandidateId: '3fc9a8', atsJobId: 'GROOV005' };
    expect(await adapter.findNote(ref, 'm-7')).toEqual({ noteId: 'a3' });
    expect(await adapter.findNote(ref, 'm-none')).toBeUndefined();
    expect(calls.some((c) => c.url.pathname.endsWith('/comments'))).toBe(false);
  });

  it("8. Lever: a note's text is read in fields[].value, on every page", async () => {
    const note = (id: string, value: string) => ({
      id,
      text: 'Note',
      fields: [{ type: 'note', text: 'Note', value }],
      user: 'user-1',
      secret: true,
      completedAt: null,
      createdAt: 1763700000000,
      deletedAt: null,
    });
    const { adapter } = lever((call) => {
      if (route(call) === 'GET /v1/opportunities/o-1/notes?limit=100')
        return json(200, { data: [note('n1', 'Something else')], hasNext: true, next: 'b2Zmc2V0' });
      if (route(call) === 'GET /v1/opportunities/o-1/notes?limit=100&offset=b2Zmc2V0')
        return json(200, { data: [note('n2', 'AI interview report\n\n[m-8]')], hasNext: false });
      return notFound(call);
    });
    const ref = { atsApplicationId: 'o-1', atsCandidateId: 'c-1', atsJobId: 'p-1' };
    expect(await adapter.findNote(ref, 'm-8')).toEqual({ noteId: 'n2' });
  });

  it('9. Greenhouse: notes are filtered by candidate_ids= and paged by the Link header alone', async () => {
    const { adapter, calls } = greenhouse((call) => {
      const path = route(call);
      if (path === 'GET /v3/notes?candidate_ids=7702&per_page=500')
        return json(200, [{ id: 1, body: 'Unrelated', type: 'NOTE', visibility: 'admin_only_visible' }], {
          link: '<https://harvest.greenhouse.io/v3/notes?cursor=n2>; rel="next"',
        });
      if (path === 'GET /v3/notes?cursor=n2') return json(200, [{ id: 2, body: 'Report\n\n[m-9]', type: 'NOTE' }]);
      return json(422, { message: 'Validation error', errors: [{ field: 'candidate_id', message: 'unknown' }] });
    });
    expect(await adapter.findNote(target, 'm-9')).toEqual({ noteId: '2' });
    expect(calls.map(route).filter((r) => r.startsWith('GET'))).toEqual([
      'GET /v3/notes?candidate_ids=7702&per_page=500',
      'GET /v3/notes?cursor=n2',
    ]);
  });

  it('10. Greenhouse merge and anonymisation, Ashby delete and merge: each purges the candidate', () => {
    const gh = greenhouse(notFound).adapter;
    const headers = { 'greenhouse-event-id': 'evt-1' };
    const merged = gh.parseWebhook({
      headers,
      rawBody: Buffer.from(
        JSON.stringify({ action: 'merge_candidate', payload: { person: { id: 37031511, new_candidate_id: 457456 } } }),
      ),
    });
    expect(merged).toEqual({
      kind: 'candidate-deleted',
      event: { deliveryId: 'evt-1', atsCandidateId: '37031511', atsApplicationIds: [] },
    });
    const anonymized = gh.parseWebhook({
      headers,
      rawBody: Buffer.from(
        JSON.stringify({
          action: 'candidate_anonymized',
          payload: { candidate_id: 37031511, anonymized_fields: ['full_name'] },
        }),
      ),
    });
    expect(anonymized).toMatchObject({ kind: 'candidate-deleted', event: { atsCandidateId: '37031511' } });

    const ashby = createAtsAdapter(
      connectionOf({ id: 'acme-ashby', ats: 'ashby', atsBaseUrl: 'https://api.ashbyhq.com' }),
      { ...base, atsWebhookSecret: SECRET, atsApiKey: 'key' },
    );
    expect(
      ashby.parseWebhook(
        body({ action: 'candidateDelete', webhookActionId: 'w1', data: { candidate: { id: 'c-9' } } }),
      ),
    ).toEqual({ kind: 'candidate-deleted', event: { deliveryId: 'w1', atsCandidateId: 'c-9', atsApplicationIds: [] } });
    expect(
      ashby.parseWebhook(
        body({ action: 'candidateMerge', data: { deletedCandidate: { id: 'c-8' }, mergedCandidate: { id: 'c-7' } } }),
      ),
    ).toMatchObject({ kind: 'candidate-deleted', event: { atsCandidateId: 'c-8' } });
  });
});

describe('The corrections after the table', () => {
  it("Lever: the 'Verify connection' test deliveries are answered 200, not 400", () => {
    const tokens = { candidateStageChange: 'stage-token-0123456789', candidateDeleted: 'delete-token-0123456789' };
    const { adapter } = lever(notFound, { atsWebhookSecrets: tokens });
    for (const event of ['candidateStageChange', 'candidateDeleted'] as const) {
      const triggeredAt = Date.now();
      const signature = createHmac('sha256', tokens[event]).update(`t${triggeredAt}`).digest('hex');
      const test = body({ event, token: 't', triggeredAt, signature, data: {} });
      expect(adapter.verifyWebhook(test, Date.now()).valid).toBe(true);
      expect(adapter.parseWebhook(test).kind).toBe('ignored');
    }
  });

  it("Workable: moveToStage compares the candidate's stage name with the target, by name or by slug", async () => {
    let current = 'Hiring Manager Review';
    const { adapter, calls } = workable((call) => {
      if (route(call) === 'GET /spi/v3/jobs/GROOV005/stages') return json(200, WORKABLE_STAGES);
      if (route(call) === 'GET /spi/v3/candidates/3fc9a8')
        return json(200, { candidate: { id: '3fc9a8', stage: current } });
      if (route(call) === 'POST /spi/v3/candidates/3fc9a8/move') return json(200, {});
      return notFound(call);
    });
    const ref = { atsApplicationId: '3fc9a8', atsCandidateId: '3fc9a8', atsJobId: 'GROOV005' };
    expect(await adapter.moveToStage(ref, { name: 'Hiring Manager Review' })).toEqual({
      moved: false,
      stageId: 'hiring-manager-review',
    });
    expect(await adapter.moveToStage(ref, { id: 'hiring-manager-review' })).toMatchObject({ moved: false });
    current = 'AI Interview';
    expect(await adapter.moveToStage(ref, { name: 'Hiring Manager Review' })).toMatchObject({ moved: true });
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      member_id: 'member-1',
      target_stage: 'hiring-manager-review',
    });
  });

  it('Greenhouse: the token is renewed by its expires_at, not an assumed hour', async () => {
    let clock = Date.now();
    let issued = 0;
    const stub = stubFetch((call) => {
      if (call.url.pathname === '/token') {
        issued++;
        return json(200, { access_token: `tok-${issued}`, expires_at: new Date(clock + 10 * 60_000).toISOString() });
      }
      return json(200, []);
    });
    const adapter = new GreenhouseAdapter({
      connection: connectionOf({ atsAuthUrl: 'https://auth.example.test/token' }),
      secrets: { ...base, atsWebhookSecret: SECRET, atsClientId: 'id', atsClientSecret: 'secret' },
      fetch: stub.fetch,
      ...noRetry,
      now: () => clock,
    });
    await adapter.findNote(target, 'x');
    clock += 5 * 60_000;
    await adapter.findNote(target, 'x');
    expect(issued).toBe(1);
    clock += 4.5 * 60_000;
    await adapter.findNote(target, 'x');
    expect(issued).toBe(2);
  });

  it('every adapter: a write the ATS answered 2xx is done, whatever the answer carries', async () => {
    const odd: StubAnswer = { status: 200, text: '<html>ok</html>' };
    const gh = greenhouse((call) => (call.method === 'POST' ? odd : notFound(call)));
    await expect(gh.adapter.postNote(target, { body: 'x', marker: 'm' })).resolves.toEqual({ noteId: undefined });
    const lv = lever((call) => (call.method === 'POST' ? { status: 201, json: { data: {} } } : notFound(call)), {
      atsWebhookSecret: SECRET,
    });
    await expect(
      lv.adapter.postNote({ atsApplicationId: 'o-1', atsCandidateId: 'c', atsJobId: 'p' }, { body: 'x', marker: 'm' }),
    ).resolves.toEqual({ noteId: undefined });
    const ashbyStub = stubFetch(() => json(200, { success: true }));
    const ashby = createAtsAdapter(
      connectionOf({ id: 'acme-ashby', ats: 'ashby', atsBaseUrl: 'https://api.ashbyhq.com' }),
      { ...base, atsWebhookSecret: SECRET, atsApiKey: 'key' },
      { fetch: ashbyStub.fetch, ...noRetry },
    );
    await expect(ashby.postNote(target, { body: 'x', marker: 'm' })).resolves.toEqual({ noteId: undefined });
    // A refusal inside Ashby's 200 is still a refusal.
    const refusing = createAtsAdapter(
      connectionOf({ id: 'acme-ashby', ats: 'ashby', atsBaseUrl: 'https://api.ashbyhq.com' }),
      { ...base, atsWebhookSecret: SECRET, atsApiKey: 'key' },
      { fetch: stubFetch(() => json(200, { success: false, errors: ['candidate_not_found'] })).fetch, ...noRetry },
    );
    await expect(refusing.postNote(target, { body: 'x', marker: 'm' })).rejects.toMatchObject({
      code: 'ats-invalid-request',
    });
  });

  it('a paged lookup that runs past its page cap fails loudly instead of answering "not there"', async () => {
    const { adapter } = greenhouse(() =>
      json(200, [{ id: 1, body: 'x' }], { link: '<https://harvest.greenhouse.io/v3/notes?cursor=more>; rel="next"' }),
    );
    await expect(adapter.findNote(target, 'never')).rejects.toMatchObject({ code: 'ats-malformed-response' });
  });

  it('a next page on another origin is not followed with the credentials', async () => {
    const { adapter, calls } = greenhouse(() =>
      json(200, [], { link: '<https://elsewhere.example/v3/notes?cursor=x>; rel="next"' }),
    );
    await expect(adapter.findNote(target, 'm')).rejects.toMatchObject({ code: 'ats-malformed-response' });
    expect(calls.every((c) => c.url.hostname !== 'elsewhere.example')).toBe(true);
  });
});
