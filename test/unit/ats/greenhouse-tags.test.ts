import { describe, expect, it } from 'vitest';
import { AI_INTERVIEW_STATUSES, statusTag } from '../../../shared/pipeline/status';
import { route, stubbedGreenhouse, stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// Harvest v3 tags, as ../shared/spec/ats-facts.md "Corrections, 2026-11b" gives them: the organisation's tags
// (`/v3/candidate_tags`) and one row per tag applied to a candidate (`/v3/applied_candidate_tags`), removed by the
// row's own id. Harvest v1 is out of service: a v3 token sent to `/v1/` is refused.

const STATUSES = AI_INTERVIEW_STATUSES.map((s) => statusTag(s));
const json = (status: number, body: unknown): StubAnswer => ({ status, json: body });

/** A Greenhouse organisation in memory: tags, applied rows, and every call recorded. */
function greenhouseTags() {
  let nextId = 900;
  const tags: { id: number; name: string }[] = [{ id: 11, name: 'Referral' }];
  const rows: { id: number; candidate_id: number; candidate_tag_id: number }[] = [
    { id: 501, candidate_id: 7702, candidate_tag_id: 11 },
  ];
  const answer = (call: StubCall): StubAnswer => {
    const path = call.url.pathname;
    if (path === '/token')
      return json(200, { access_token: 'tok', token_type: 'Bearer', expires_at: new Date(Date.now() + 3.6e6) });
    if (path.startsWith('/v1/')) return json(401, { message: 'Harvest v1 does not accept this credential' });
    if (call.method === 'GET' && path === '/v3/candidate_tags') return json(200, tags);
    if (call.method === 'POST' && path === '/v3/candidate_tags') {
      const name = (call.body as { name: string }).name;
      if (tags.some((t) => t.name === name)) return json(422, { errors: [{ field: 'name', message: 'taken' }] });
      const tag = { id: nextId++, name };
      tags.push(tag);
      return json(201, tag);
    }
    if (call.method === 'GET' && path === '/v3/applied_candidate_tags') {
      const candidate = Number(call.url.searchParams.get('candidate_ids'));
      return json(
        200,
        rows.filter((r) => r.candidate_id === candidate),
      );
    }
    if (call.method === 'POST' && path === '/v3/applied_candidate_tags') {
      const { candidate_id, candidate_tag_id } = call.body as { candidate_id: number; candidate_tag_id: number };
      if (rows.some((r) => r.candidate_id === candidate_id && r.candidate_tag_id === candidate_tag_id))
        return json(422, { errors: [{ field: 'candidate_tag_id', message: 'already applied' }] });
      const row = { id: nextId++, candidate_id, candidate_tag_id };
      rows.push(row);
      return json(201, row);
    }
    const removal = /^\/v3\/applied_candidate_tags\/(\d+)$/.exec(path);
    if (call.method === 'DELETE' && removal) {
      const index = rows.findIndex((r) => r.id === Number(removal[1]));
      if (index < 0) return json(404, { message: 'Resource not found' });
      rows.splice(index, 1);
      return { status: 204 };
    }
    return json(404, { message: `no route ${route(call)}` });
  };
  const stub = stubFetch(answer);
  /** A worker's adapter (each environment has its own, with its own cache of the tag list) on this organisation. */
  const worker = () => {
    const adapter = stubbedGreenhouse(stub.fetch);
    return {
      show: (status: string) =>
        adapter.setStatusTag?.(
          { atsApplicationId: '4401', atsCandidateId: '7702', atsJobId: '3301' },
          status,
          STATUSES.filter((s) => s !== status),
        ),
    };
  };
  const shown = (candidate: number) =>
    rows.filter((r) => r.candidate_id === candidate).map((r) => tags.find((t) => t.id === r.candidate_tag_id)?.name);
  return { calls: stub.calls, rows, shown, show: worker().show, worker };
}

describe('Adapter: Greenhouse status tags through Harvest v3 only', () => {
  it('uses a tag another worker created between its list and its create, instead of failing the status', async () => {
    const gh = greenhouseTags();
    // Two environments show their first "completed" at once: each lists, finds it missing, and creates it.
    await Promise.all([gh.show('AI interview: completed'), gh.worker().show('AI interview: completed')]);
    expect(gh.shown(7702)).toEqual(['Referral', 'AI interview: completed']);
  });

  it('applies, replaces by removing the row by its own id, and changes nothing the second time', async () => {
    const gh = greenhouseTags();
    await gh.show('AI interview: invited');
    expect(gh.shown(7702)).toEqual(['Referral', 'AI interview: invited']);
    const invitedRow = gh.rows.find((r) => r.candidate_tag_id !== 11)?.id;

    await gh.show('AI interview: completed');
    expect(gh.shown(7702)).toEqual(['Referral', 'AI interview: completed']);
    // The invited status's row went by its row id, never by the tag's id; the customer's own tag stayed.
    expect(gh.calls.map(route)).toContain(`DELETE /v3/applied_candidate_tags/${invitedRow}`);

    const before = gh.calls.length;
    await gh.show('AI interview: completed');
    const again = gh.calls.slice(before).map(route);
    expect(again.every((r) => r.startsWith('GET '))).toBe(true);
    expect(gh.shown(7702)).toEqual(['Referral', 'AI interview: completed']);

    // Every call is a documented v3 route (or the token), none under /v1/.
    const paths = new Set(gh.calls.map((c) => `${c.method} ${c.url.pathname.replace(/\/\d+$/, '/{id}')}`));
    expect([...paths].sort()).toEqual([
      'DELETE /v3/applied_candidate_tags/{id}',
      'GET /v3/applied_candidate_tags',
      'GET /v3/candidate_tags',
      'POST /token',
      'POST /v3/applied_candidate_tags',
      'POST /v3/candidate_tags',
    ]);
    const queries = gh.calls.filter((c) => c.method === 'GET').flatMap((c) => [...c.url.searchParams.keys()]);
    expect(new Set(queries)).toEqual(new Set(['candidate_ids', 'per_page']));
  });

  it("removes a status another worker's tag shows, listing the organisation's tags once a show at most", async () => {
    const gh = greenhouseTags();
    const mine = gh.worker();
    await mine.show('AI interview: invited');
    // Another environment shows "cancelled", a tag this one has never seen (created after its list).
    await gh.worker().show('AI interview: cancelled');
    const listsBefore = gh.calls.filter((c) => route(c).startsWith('GET /v3/candidate_tags')).length;
    await mine.show('AI interview: expired');
    expect(gh.shown(7702)).toEqual(['Referral', 'AI interview: expired']);
    const lists = gh.calls.filter((c) => route(c).startsWith('GET /v3/candidate_tags')).length - listsBefore;
    expect(lists).toBe(1);
    // Warm and with every tag seen, a show lists nothing: its rows, a removal, the new row.
    const before = gh.calls.length;
    await mine.show('AI interview: invited');
    expect(gh.calls.slice(before).map(route)).toEqual([
      'GET /v3/applied_candidate_tags?candidate_ids=7702&per_page=500',
      expect.stringMatching(/^DELETE \/v3\/applied_candidate_tags\/\d+$/),
      'POST /v3/applied_candidate_tags',
    ]);
    expect(gh.shown(7702)).toEqual(['Referral', 'AI interview: invited']);
  });

  it('creates a tag only after the list shows it missing, and lists before it applies', async () => {
    const gh = greenhouseTags();
    await gh.show('AI interview: advanced');
    const order = gh.calls.map(route).filter((r) => r.includes('candidate_tags'));
    expect(order.indexOf('GET /v3/candidate_tags?per_page=500')).toBeLessThan(order.indexOf('POST /v3/candidate_tags'));
    expect(gh.calls.filter((c) => c.method === 'POST' && c.url.pathname === '/v3/applied_candidate_tags')).toEqual([
      expect.objectContaining({ body: { candidate_id: 7702, candidate_tag_id: expect.any(Number) } }),
    ]);
  });
});
