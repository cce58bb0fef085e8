import { describe, expect, it } from 'vitest';
import { route, stubbedGreenhouse, stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// The Greenhouse sweep as Harvest v3 documents it (../shared/spec/ats-facts.md, "Corrections, 2026-11b"): stage
// ids resolved with /v3/job_interview_stages, then /v3/application_stages?job_interview_stage_ids=&current=true.
// Each query parameter sent must be one v3 documents for its route (../shared/spec/ats-routes.json).
const DOCUMENTED: Record<string, string[]> = {
  '/v3/jobs': ['cursor', 'per_page', 'ids', 'status'],
  '/v3/job_interview_stages': ['cursor', 'per_page', 'ids', 'job_ids'],
  '/v3/application_stages': ['cursor', 'per_page', 'ids', 'application_ids', 'job_interview_stage_ids', 'current'],
  '/v3/applications': ['cursor', 'per_page', 'ids', 'candidate_ids', 'job_ids', 'stage_ids', 'status'],
  '/v3/candidates': ['cursor', 'per_page', 'ids'],
};
const json = (status: number, body: unknown, headers: Record<string, string> = {}): StubAnswer => ({
  status,
  json: body,
  headers,
});

/** Open job 3301 (stage 9001 "AI Interview"), closed job 3399; application 4401 entered 9001, 4402 left it. */
function greenhouse(trigger: Record<string, unknown>) {
  const answer = (call: StubCall): StubAnswer => {
    const { pathname, searchParams } = call.url;
    if (pathname === '/token')
      return json(200, { access_token: 'tok', token_type: 'Bearer', expires_at: new Date(Date.now() + 3.6e6) });
    const allowed = DOCUMENTED[pathname];
    const undocumented = [...searchParams.keys()].filter((key) => !allowed?.includes(key));
    if (!allowed || undocumented.length)
      return json(422, { errors: [{ field: undocumented[0] ?? pathname, message: 'is not a parameter' }] });
    if (pathname === '/v3/jobs')
      return json(200, searchParams.get('status') === 'open' ? [{ id: 3301, name: 'Backend Engineer' }] : []);
    if (pathname === '/v3/job_interview_stages')
      return json(
        200,
        (searchParams.get('job_ids') ?? '').split(',').includes('3301')
          ? [
              { id: 9000, job_id: 3301, name: 'Application Review' },
              { id: 9001, job_id: 3301, name: 'AI Interview' },
            ]
          : [],
      );
    if (pathname === '/v3/application_stages') {
      const rows = [
        { id: 1, application_id: 4401, job_interview_stage_id: 9001, exited_at: null },
        { id: 2, application_id: 4402, job_interview_stage_id: 9001, exited_at: '2026-11-20T10:00:00Z' },
      ].filter((r) =>
        (searchParams.get('job_interview_stage_ids') ?? '').split(',').includes(String(r.job_interview_stage_id)),
      );
      return json(200, searchParams.get('current') === 'true' ? rows.filter((r) => r.exited_at === null) : rows);
    }
    if (pathname === '/v3/applications')
      return json(200, [{ id: 4401, candidate_id: 7702, job_id: 3301, status: 'in_process' }]);
    if (pathname === '/v3/candidates')
      return json(200, [{ id: 7702, first_name: 'Ana', last_name: 'Ruiz', email_addresses: [{ value: 'a@x.test' }] }]);
    return json(404, { message: `no route ${route(call)}` });
  };
  const stub = stubFetch(answer);
  const adapter = stubbedGreenhouse(stub.fetch);
  return { list: () => pass(adapter, trigger), calls: stub.calls };
}

/** One pass of the sweep: its pages read to the end (a look at the stages by name first), at most 20. */
async function pass(adapter: ReturnType<typeof stubbedGreenhouse>, trigger: Record<string, unknown>) {
  const events = [];
  let next: string | undefined;
  for (let pages = 1; pages <= 20; pages++) {
    const page = await adapter.listApplicationsInStage!(trigger as never, next);
    events.push(...page.events);
    next = page.next;
    if (!next) return { events, next, pages };
  }
  return { events, next, pages: 20 };
}

describe('Adapter: the Greenhouse sweep sends only documented filters', () => {
  it.each([
    ['by name over every open job', { stage: { name: 'AI Interview' }, jobs: 'all' }],
    ['by name over the trigger’s jobs', { stage: { name: 'AI Interview' }, jobs: ['3301'] }],
    ['by id', { stage: { id: '9001' }, jobs: 'all' }],
  ])('%s: finds the application in the stage now, not the one that left it', async (_, trigger) => {
    const gh = greenhouse(trigger);
    const page = await gh.list();
    expect(page.pages).toBe('id' in trigger.stage ? 1 : 2);
    expect(page.events.map((e) => [e.atsApplicationId, e.stage.id, e.candidate.email])).toEqual([
      ['4401', '9001', 'a@x.test'],
    ]);
    expect(page.next).toBeUndefined();
    expect(gh.calls.map(route)).toContain(
      'GET /v3/application_stages?job_interview_stage_ids=9001&current=true&per_page=50',
    );
    expect(gh.calls.some((c) => c.url.pathname.startsWith('/v1/'))).toBe(false);
    expect(gh.calls.some((c) => c.url.searchParams.has('stage_name'))).toBe(false);
  });
});

describe('Adapter: the Greenhouse sweep looks up a stage by name on a large account a page of calls at a time', () => {
  it('keeps its place in the cursor: a look that fails part way goes on from there, not the first job', async () => {
    // 1,200 open jobs in three pages; the AI Interview stage of every job; one stages read answers 503 for a while.
    const jobIds = Array.from({ length: 1200 }, (_, i) => 5000 + i);
    let failing = true;
    const stub = stubFetch((call): StubAnswer => {
      const { pathname, searchParams } = call.url;
      if (pathname === '/token')
        return json(200, { access_token: 'tok', token_type: 'Bearer', expires_at: new Date(Date.now() + 3.6e6) });
      if (pathname === '/v3/jobs') {
        const from = Number(searchParams.get('cursor') ?? 0);
        const link = from + 500 < jobIds.length ? `<https://harvest.greenhouse.io/v3/jobs?cursor=${from + 500}>` : '';
        const page = jobIds.slice(from, from + 500).map((id) => ({ id, name: `Job ${id}` }));
        return json(200, page, link ? { link: `${link}; rel="next"` } : {});
      }
      if (pathname === '/v3/job_interview_stages') {
        if (failing && searchParams.get('job_ids')?.startsWith('5650,')) return json(503, { message: 'unavailable' });
        const ids = (searchParams.get('job_ids') ?? '').split(',').map(Number);
        return json(
          200,
          ids.map((job) => ({ id: job * 10, job_id: job, name: 'AI Interview' })),
        );
      }
      if (pathname === '/v3/application_stages') return json(200, []);
      return json(404, { message: `no route ${route(call)}` });
    });
    const adapter = stubbedGreenhouse(stub.fetch);
    const trigger = { stage: { name: 'AI Interview' }, jobs: 'all' } as never;
    const calls = () => stub.calls.filter((c) => c.url.pathname !== '/token');
    let next: string | undefined;
    let failed = 0;
    for (let page = 1; page <= 40; page++) {
      const before = calls().length;
      const read = await adapter.listApplicationsInStage!(trigger, next).catch(() => {
        failing = false;
        failed++;
      });
      if (!read) continue;
      // Each call of the list makes at most one sweep page's declared calls (6 on Greenhouse).
      expect(calls().length - before).toBeLessThanOrEqual(6);
      next = read.next;
      if (!next) break;
    }
    expect([failed, next]).toEqual([1, undefined]);
    // The jobs' pages read once each; the first jobs' stages once (never from the start again); of the other chunks of
    // 50 jobs, only those the failed call had read before it failed read again (5 at most); every stage id listed.
    const routes = calls().map(route);
    const stages = routes.filter((r) => r.startsWith('GET /v3/job_interview_stages'));
    expect(routes.filter((r) => r.startsWith('GET /v3/jobs'))).toHaveLength(3);
    expect(stages.filter((r) => r.includes('job_ids=5000,'))).toHaveLength(1);
    const others = stages.filter((r) => !r.includes('job_ids=5650,')).length;
    expect(others).toBeGreaterThanOrEqual(23);
    expect(others).toBeLessThanOrEqual(23 + 5);
    const listed = routes.filter((r) => r.startsWith('GET /v3/application_stages')).length;
    expect(listed).toBe(24);
  });
});

describe('Adapter: the Greenhouse sweep never looks forever', () => {
  it('refuses a jobs list whose next page is the page just read, or that runs past 20 pages', async () => {
    for (const step of [0, 1]) {
      const stub = stubFetch((call): StubAnswer => {
        const { pathname, searchParams } = call.url;
        if (pathname === '/token')
          return json(200, { access_token: 'tok', token_type: 'Bearer', expires_at: new Date(Date.now() + 3.6e6) });
        // step 0: every page names the same next page; step 1: a next page always, one further each time.
        const next = step === 0 ? 7 : Number(searchParams.get('cursor') ?? 0) + 1;
        const link = `<https://harvest.greenhouse.io/v3/jobs?cursor=${next}>; rel="next"`;
        if (pathname === '/v3/jobs') return json(200, [], { link });
        return json(404, { message: `no route ${route(call)}` });
      });
      const adapter = stubbedGreenhouse(stub.fetch);
      const trigger = { stage: { name: 'AI Interview' }, jobs: 'all' } as never;
      let next: string | undefined;
      let refused: unknown;
      for (let page = 1; page <= 10 && !refused; page++)
        next = await adapter.listApplicationsInStage!(trigger, next).then(
          (read) => read.next,
          (error: unknown) => {
            refused = error;
            return undefined;
          },
        );
      expect(refused).toMatchObject({ code: 'ats-malformed-response' });
      expect(stub.calls.filter((c) => c.url.pathname === '/v3/jobs').length).toBeLessThanOrEqual(20);
    }
  });
});
