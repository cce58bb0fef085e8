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
  return { list: () => adapter.listApplicationsInStage!(trigger as never, undefined), calls: stub.calls };
}

describe('Adapter: the Greenhouse sweep sends only documented filters', () => {
  it.each([
    ['by name over every open job', { stage: { name: 'AI Interview' }, jobs: 'all' }],
    ['by name over the trigger’s jobs', { stage: { name: 'AI Interview' }, jobs: ['3301'] }],
    ['by id', { stage: { id: '9001' }, jobs: 'all' }],
  ])('%s: finds the application in the stage now, not the one that left it', async (_, trigger) => {
    const gh = greenhouse(trigger);
    const page = await gh.list();
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
