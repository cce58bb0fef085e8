import { describe, expect, it } from 'vitest';
import { createAtsAdapter } from '../../../shared/ats';
import { parseConnections } from '../../../shared/config';
import { connectionDocument } from '../../helpers/connections';
import { route, stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// Ashby's candidate tags (OpenAPI: candidateTag.list is cursor-paged, `nextCursor` while `moreDataAvailable`): an
// organisation with more tags than a page holds still finds its status tag, and never creates it twice.
const ok = (results: unknown, more: Record<string, unknown> = {}): StubAnswer => ({
  status: 200,
  json: { success: true, results, ...more },
});

function ashbyOrganisation(odd: unknown[] = []) {
  const tags = Array.from({ length: 150 }, (_, i) => ({ id: `tag-${i}`, title: `Team ${i}` }));
  tags.push({ id: 'tag-invited', title: 'AI interview: invited' });
  const held: string[] = [];
  const answer = (call: StubCall): StubAnswer => {
    const body = (call.body ?? {}) as { cursor?: string; limit?: number; tagId?: string; title?: string };
    switch (call.url.pathname) {
      case '/candidateTag.list': {
        const offset = Number(body.cursor ?? 0);
        const end = offset + (body.limit ?? 100);
        return ok(tags.slice(offset, end), { moreDataAvailable: end < tags.length, nextCursor: String(end) });
      }
      case '/candidateTag.create':
        tags.push({ id: `tag-${tags.length}`, title: body.title ?? '' });
        return ok(tags.at(-1));
      case '/candidate.info':
        return ok({ id: 'cand-1', tags: [...odd, ...tags.filter((t) => held.includes(t.id))] });
      case '/candidate.addTag':
        if (!held.includes(body.tagId ?? '')) held.push(body.tagId ?? '');
        return ok({});
      default:
        return { status: 404, json: { message: `no route ${route(call)}` } };
    }
  };
  const stub = stubFetch(answer);
  const connection = parseConnections(
    connectionDocument({ id: 'acme-ashby', ats: 'ashby', atsBaseUrl: 'https://api.ashbyhq.com' }),
  )[0]!;
  const secrets = { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), atsApiKey: 'key' };
  return { adapter: createAtsAdapter(connection, secrets, { fetch: stub.fetch }), calls: stub.calls, held };
}

describe('Ashby status tags', () => {
  it('finds a status tag on a later page of the tag list, adds it once, and creates none', async () => {
    const { adapter, calls, held } = ashbyOrganisation();
    const target = { atsJobId: 'job-1', atsApplicationId: 'app-1', atsCandidateId: 'cand-1' };
    await adapter.setStatusTag!(target, 'AI interview: invited', ['AI interview: expired']);
    await adapter.setStatusTag!(target, 'AI interview: invited', ['AI interview: expired']);
    expect(held).toEqual(['tag-invited']);
    expect(calls.filter((c) => c.url.pathname === '/candidateTag.create')).toEqual([]);
    expect(calls.filter((c) => c.url.pathname === '/candidateTag.list').map((c) => c.body)).toEqual([
      { limit: 100 },
      { limit: 100, cursor: '100' },
    ]);
    expect(calls.filter((c) => c.url.pathname === '/candidate.addTag')).toHaveLength(1);
  });
});

describe('Ashby report file upload', () => {
  it('posts the file only to https storage: a handle pointing elsewhere is refused, nothing sent there', async () => {
    const stub = stubFetch((call) =>
      call.url.pathname === '/file.createFileUploadHandle'
        ? ok({ handle: 'h-1', url: 'http://198.51.100.7/upload', fields: { key: 'k' } })
        : { status: 404, json: { message: `no route ${route(call)}` } },
    );
    const connection = parseConnections(
      connectionDocument({ id: 'acme-ashby', ats: 'ashby', atsBaseUrl: 'https://api.ashbyhq.com' }),
    )[0]!;
    const secrets = { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), atsApiKey: 'ashby-key' };
    const adapter = createAtsAdapter(connection, secrets, { fetch: stub.fetch });
    const file = { name: 'r.pdf', contentType: 'application/pdf' as const, bytes: new Uint8Array([37, 80, 68, 70]) };
    const target = { atsJobId: 'j', atsApplicationId: 'a', atsCandidateId: 'cand-1' };
    await expect(adapter.attachFile?.(target, file)).rejects.toMatchObject({ code: 'ats-malformed-response' });
    expect(stub.calls.map((c) => c.url.host)).toEqual(['api.ashbyhq.com']);
  });

  it("reads past a tag of the candidate's it cannot read, and still shows the status", async () => {
    const { adapter, held } = ashbyOrganisation([{ id: 'tag-odd', title: null }]);
    const target = { atsJobId: 'job-1', atsApplicationId: 'app-1', atsCandidateId: 'cand-1' };
    await adapter.setStatusTag!(target, 'AI interview: invited', ['AI interview: expired']);
    expect(held).toEqual(['tag-invited']);
  });
});
