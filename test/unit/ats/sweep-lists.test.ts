import { describe, expect, it } from 'vitest';
import { createAtsAdapter } from '../../../shared/ats';
import { createSetupAdapter } from '../../../shared/ats/setup-adapter';
import { parseConnections } from '../../../shared/config';
import { statusOfTag, statusTag, AI_INTERVIEW_STATUSES } from '../../../shared/pipeline/status';
import { connectionDocument } from '../../helpers/connections';
import { route, stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// The Lever and Workable sweeps as their vendors document their lists (../shared/spec/ats-facts.md, "Corrections,
// 2026-11b"): Lever's opportunities by posting and unarchived; Workable's published jobs, every page, and the
// documented candidate list.
const json = (status: number, body: unknown): StubAnswer => ({ status, json: body });
const notFound = (call: StubCall): StubAnswer => json(404, { message: `no route ${route(call)}` });
const secrets = { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), atsApiKey: 'key' };
const trigger = (jobs: unknown) => ({
  id: 'ai-screen',
  jobs,
  stage: { name: 'AI Interview' },
  interview: { questions: [{ question: 'Tell us about a system you built.', time: 3, type: 'audio' }] },
});

function adapterOf(ats: 'lever' | 'workable', answer: (call: StubCall) => StubAnswer, jobs: unknown) {
  const stub = stubFetch(answer);
  const connection = parseConnections(
    connectionDocument({
      id: `acme-${ats}`,
      ats,
      atsBaseUrl: ats === 'lever' ? 'https://api.lever.co' : 'https://acme.workable.com',
      atsUserId: 'user-1',
      triggers: [trigger(jobs)],
    }),
  )[0]!;
  const adapter = createAtsAdapter(connection, secrets, { fetch: stub.fetch });
  // The doctor's adapter on the same answers: its webhook list and user probe.
  const setup = createSetupAdapter(connection, secrets, { fetch: stub.fetch });
  const list = (cursor?: string) =>
    adapter.listApplicationsInStage!(
      { stage: connection.triggers[0]!.stage, jobs: connection.triggers[0]!.jobs },
      cursor,
    );
  return { list, calls: stub.calls, adapter, setup };
}

describe('Adapter: the Lever sweep lists the trigger’s postings, unarchived', () => {
  it('passes posting_id for each of the trigger’s postings and archived=false; a page token as given', async () => {
    const lever = adapterOf(
      'lever',
      (call) => {
        if (call.url.pathname === '/v1/stages') return json(200, { data: [{ id: 'stage-ai', text: 'AI Interview' }] });
        if (call.url.pathname === '/v1/opportunities')
          return call.url.searchParams.has('offset')
            ? json(200, { data: [{ id: 'opp-2', contact: 'c-2', stage: 'stage-ai' }], hasNext: false })
            : json(200, {
                data: [{ id: 'opp-1', contact: 'c-1', stage: 'stage-ai' }],
                hasNext: true,
                next: '%5B1588160522345%2C%2203b8%22%5D',
              });
        return notFound(call);
      },
      ['posting-backend-01', 'posting-data-02'],
    );
    const first = await lever.list();
    expect(first.events.map((e) => e.atsApplicationId)).toEqual(['opp-1']);
    const opportunities = lever.calls.filter((c) => c.url.pathname === '/v1/opportunities');
    expect(opportunities[0]?.url.searchParams.getAll('posting_id')).toEqual(['posting-backend-01', 'posting-data-02']);
    expect(opportunities[0]?.url.searchParams.get('archived')).toBe('false');
    await lever.list(first.next);
    // The token came back percent-encoded: passed on as it was, not encoded a second time.
    expect(lever.calls.at(-1)?.url.search).toContain('offset=%5B1588160522345%2C%2203b8%22%5D');
  });
});

describe('Adapter: Lever page tokens passed on as given on every list', () => {
  it('finds a note on a later page and lists every webhook page, each token as Lever gave it', async () => {
    const token = '%5B1588160522345%2C%2203b8%22%5D';
    const lever = adapterOf(
      'lever',
      (call) => {
        const later = call.url.searchParams.has('offset');
        if (call.url.pathname === '/v1/opportunities/opp-1/notes')
          return later
            ? json(200, { data: [{ id: 'note-2', fields: [{ value: 'AI interview ai-marker' }] }], hasNext: false })
            : json(200, { data: [{ id: 'note-1', fields: [{ value: 'other' }] }], hasNext: true, next: token });
        if (call.url.pathname === '/v1/webhooks')
          return later
            ? json(200, { data: [{ id: 'w-2', event: 'candidateHired', url: 'https://h/2' }], hasNext: false })
            : json(200, {
                data: [{ id: 'w-1', event: 'candidateStageChange', url: 'https://h/1' }],
                hasNext: true,
                next: token,
              });
        return notFound(call);
      },
      'all',
    );
    const adapter = lever.adapter;
    const found = await adapter.findNote(
      { atsApplicationId: 'opp-1', atsCandidateId: 'c-1', atsJobId: 'p-1' },
      'ai-marker',
    );
    expect(found).toEqual({ noteId: 'note-2' });
    const hooks = await lever.setup.listWebhooks?.({});
    expect(hooks?.map((w) => w.id)).toEqual(['w-1', 'w-2']);
    const pages = lever.calls.filter((c) => c.url.searchParams.has('offset'));
    expect(pages).toHaveLength(2);
    // Not encoded a second time (%25...): the token as it came.
    for (const page of pages) expect(page.url.search).toContain(`offset=${token}`);
  });
});

describe('Adapter: the Workable sweep reads every published job and the documented candidate list', () => {
  it('reaches a published job listed after 100 older ones', async () => {
    const older = Array.from({ length: 100 }, (_, i) => ({
      shortcode: `OLD${i}`,
      title: `Old ${i}`,
      state: 'published',
    }));
    const workable = adapterOf(
      'workable',
      (call) => {
        const { pathname, searchParams } = call.url;
        if (pathname === '/spi/v3/jobs') {
          if (searchParams.get('state') !== 'published') return json(200, { jobs: [] });
          return searchParams.get('since_id') === 'OLD99'
            ? json(200, { jobs: [{ shortcode: 'NEW1', title: 'New role', state: 'published' }] })
            : json(200, {
                jobs: older,
                paging: { next: 'https://acme.workable.com/spi/v3/jobs?state=published&limit=100&since_id=OLD99' },
              });
        }
        if (/^\/spi\/v3\/jobs\/[A-Z0-9]+\/stages$/.test(pathname))
          return json(200, {
            stages: pathname.includes('NEW1')
              ? [{ slug: 'ai-interview', name: 'AI Interview', kind: 'assessment' }]
              : [],
          });
        if (pathname === '/spi/v3/candidates' && searchParams.get('shortcode') === 'NEW1')
          return json(200, { candidates: [{ id: 'c-new', name: 'Nia', email: 'nia@x.test', stage: 'AI Interview' }] });
        return notFound(call);
      },
      'all',
    );
    const found: string[] = [];
    let cursor: string | undefined;
    for (let run = 0; run < 200; run++) {
      const page = await workable.list(cursor);
      found.push(...page.events.map((e) => `${e.atsJobId}/${e.atsApplicationId}`));
      cursor = page.next;
      if (!cursor) break;
    }
    expect(found).toEqual(['NEW1/c-new']);
    expect(workable.calls.some((c) => c.url.pathname.includes('/jobs/NEW1/candidates'))).toBe(false);
    expect(
      workable.calls.filter((c) => c.url.pathname === '/spi/v3/candidates').map((c) => c.url.searchParams.get('stage')),
    ).toEqual(['ai-interview']);
  });
});

describe('Status tags: single tokens where the ATS keeps a tag’s first word', () => {
  it('spells each status as one lower-case word of at most 25 characters, read back as its status', () => {
    for (const status of AI_INTERVIEW_STATUSES) {
      const token = statusTag(status, 'token');
      expect(token).toMatch(/^[a-z-]{1,25}$/);
      expect(statusOfTag(token)).toBe(status);
      expect(statusOfTag(statusTag(status, 'label'))).toBe(status);
    }
    expect(new Set(AI_INTERVIEW_STATUSES.map((s) => statusTag(s, 'token'))).size).toBe(AI_INTERVIEW_STATUSES.length);
  });
});

describe('Adapter: the Workable member check reads members of every status, every page', () => {
  it('finds the member on a later page, and says when they are no longer active', async () => {
    const answer = (active: boolean) => (call: StubCall) => {
      if (call.url.pathname !== '/spi/v3/members') return notFound(call);
      if (call.url.searchParams.get('status') !== 'all') return json(200, { members: [] });
      return call.url.searchParams.has('since_id')
        ? json(200, { members: [{ id: 'user-1', name: 'Rae', active }] })
        : json(200, {
            members: Array.from({ length: 100 }, (_, i) => ({ id: `m-${i}`, name: 'Other', active: true })),
            paging: { next: 'https://acme.workable.com/spi/v3/members?status=all&limit=100&since_id=m-99' },
          });
    };
    const probe = (active: boolean) => {
      const stub = stubFetch(answer(active));
      const connection = parseConnections(
        connectionDocument({
          id: 'acme-workable',
          ats: 'workable',
          atsBaseUrl: 'https://acme.workable.com',
          atsUserId: 'user-1',
          triggers: [trigger('all')],
        }),
      )[0]!;
      return createSetupAdapter(connection, secrets, { fetch: stub.fetch }).probeUser();
    };
    expect(await probe(true)).toMatchObject({ ok: true });
    expect(await probe(false)).toMatchObject({ ok: false, reason: 'member user-1 is not active' });
  });
});
